package sqlite

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"path/filepath"
)

// A database from before 0012 has journals and no balance transactions:
// the migration derives them, with the running balance in journal order,
// equal to what CreateJournal writes as it goes.
func TestMigrate0012BackfillsBalanceTransactions(t *testing.T) {
	ctx := context.Background()

	path := filepath.Join(t.TempDir(), "payd.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	err = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		for _, org := range []string{"org_1", "org_2"} {
			if err := tx.CreateOrganization(ctx, &engine.Organization{ID: org, Name: org, CreatedAt: base, UpdatedAt: base}); err != nil {
				return err
			}
		}
		for i, j := range []struct {
			org, from, to, amount string
		}{
			{"org_1", engine.AccountExternal, engine.AccountAvailable, "100.25"},
			{"org_2", engine.AccountAdjustments, engine.AccountAvailable, "7"},
			{"org_1", engine.AccountAvailable, engine.AccountHeld, "40"},
			{"org_1", engine.AccountHeld, engine.AccountExternal, "40"},
			{"org_1", engine.AccountExternal, engine.AccountAvailable, "0.75"},
		} {
			a := decimal.RequireFromString(j.amount)
			err := tx.CreateJournal(ctx, &engine.Journal{
				ID: "jnl_" + string(rune('a'+i)), OrganizationID: j.org, Kind: engine.JournalAdjustment, Reference: "r",
				CreatedAt: base.Add(time.Duration(i) * time.Second),
				Entries:   []engine.Entry{{Account: j.from, Amount: a.Neg()}, {Account: j.to, Amount: a}},
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list := func() map[string][]*engine.BalanceTransaction {
		out := map[string][]*engine.BalanceTransaction{}
		err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			for _, org := range []string{"org_1", "org_2"} {
				rows, err := tx.ListBalanceTransactions(ctx, engine.PageParams{OrganizationID: org, Limit: 100})
				if err != nil {
					return err
				}
				for _, r := range rows {
					r.CreatedAt = r.CreatedAt.UTC()
				}
				out[org] = rows
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	written := list()
	if len(written["org_1"]) != 5 || len(written["org_2"]) != 1 {
		t.Fatalf("written: %d and %d rows", len(written["org_1"]), len(written["org_2"]))
	}
	// Back to the schema before 0012, journals kept.
	for _, q := range []string{
		`DROP TABLE balance_transactions`,
		`DROP INDEX deposits_organization_created`, `DROP INDEX deposits_organization_status`,
		`DROP INDEX deposits_organization_method`, `DROP INDEX deposits_organization_provider_tx`,
		`DROP INDEX withdrawals_organization_created`, `DROP INDEX withdrawals_organization_status`,
		`DROP INDEX withdrawals_organization_method`, `DROP INDEX withdrawals_organization_reference`,
		`DROP INDEX events_organization_type`,
		`DELETE FROM payd_migrations WHERE line = 'main' AND version = 12`,
	} {
		if _, err := s.writer.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := list(); !reflect.DeepEqual(got, written) {
		for org := range written {
			for i := range written[org] {
				if i < len(got[org]) {
					t.Logf("%s: got %+v, written %+v", org, *got[org][i], *written[org][i])
				}
			}
		}
		t.Errorf("backfilled balance transactions differ from those written")
	}
}
