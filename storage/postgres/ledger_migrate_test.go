package postgres

import (
	"context"

	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// A database from before 0008 has entries and no balance rows: the
// migration makes the rows what the entries add up to, per organization.
func TestMigrate0008BackfillsBalances(t *testing.T) {
	ctx := context.Background()
	t.Parallel()
	path := pgtest.URL(t)
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
		for i, j := range []struct{ org, amount string }{{"org_1", "100.25"}, {"org_1", "0.75"}, {"org_2", "7"}} {
			a := decimal.RequireFromString(j.amount)
			err := tx.CreateJournal(ctx, &engine.Journal{
				ID: "jnl_" + string(rune('a'+i)), OrganizationID: j.org, Kind: engine.JournalAdjustment, CreatedAt: base,
				Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: a.Neg()}, {Account: engine.AccountAvailable, Amount: a}},
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
	// Back to the schema before 0008, entries kept.
	for _, q := range []string{`DROP TABLE account_balances`, `DELETE FROM payd_migrations WHERE line = 'main' AND version = 8`} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string]map[string]string{
		"org_1": {engine.AccountAvailable: "101", engine.AccountAdjustments: "-101"},
		"org_2": {engine.AccountAvailable: "7", engine.AccountAdjustments: "-7"},
	}
	err = s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		for org, accounts := range want {
			b, err := tx.AccountBalances(ctx, org)
			if err != nil {
				return err
			}
			if len(b) != len(accounts) {
				t.Errorf("%s: balances %v, want %v", org, b, accounts)
			}
			for account, amount := range accounts {
				if !b[account].Equal(decimal.RequireFromString(amount)) {
					t.Errorf("%s %s = %s, want %s", org, account, b[account], amount)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
