package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// ExerciseUpgrades holds a store's migrations to their promise that a
// database made by older code upgrades without loss. newDatabase makes a
// new, empty database and returns what opens a store on it (migrating it
// to the current schema), the same database each call. Each test writes
// rows, takes the database back to the schema before one migration with
// SQL (through engine.SQLTx, per dialect), opens it again and reads the
// rows back as the migration must have made them.
func ExerciseUpgrades(t *testing.T, newDatabase func(t *testing.T) (open func() Store)) {
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, open func() Store)
	}{
		{"0008Balances", upgradeBalances},
		{"0012BalanceTransactions", upgradeBalanceTransactions},
		{"0020TransactionIDs", upgradeTransactionIDs},
		{"0021PaidLinks", upgradePaidLinks},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, newDatabase(t))
		})
	}
}

// downgrade takes s's database back to the schema before the main line's
// version (the statements of s's dialect, then the version's record) and
// closes s.
func downgrade(t *testing.T, s Store, version int, statements map[string][]string) {
	t.Helper()
	defer s.Close()
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		sq := tx.(engine.SQLTx)
		qs, ok := statements[sq.Dialect()]
		if !ok {
			qs = statements[""]
		}
		for _, q := range append(qs, fmt.Sprintf(`DELETE FROM payd_migrations WHERE line = 'main' AND version = %d`, version)) {
			if _, err := sq.ExecSQL(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wantIndexes fails unless s's database has each named index.
func wantIndexes(t *testing.T, s Store, names ...string) {
	t.Helper()
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		sq := tx.(engine.SQLTx)
		q := `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`
		if sq.Dialect() == "postgres" {
			q = `SELECT count(*) FROM pg_indexes WHERE indexname = $1`
		}
		for _, name := range names {
			var n int
			if err := sq.QuerySQL(ctx, q, []any{name}, func(scan func(...any) error) error { return scan(&n) }); err != nil {
				return err
			}
			if n != 1 {
				t.Errorf("index %s: %d of it", name, n)
			}
		}
		return nil
	})
}

// A database from before 0008 has entries and no balance rows: the
// migration makes the rows what the entries add up to, per organization.
func upgradeBalances(t *testing.T, open func() Store) {
	s := open()
	mustOrgs(t, s, "org_1", "org_2")
	var journals []*engine.Journal
	for i, j := range []struct{ org, amount string }{{"org_1", "100.25"}, {"org_1", "0.75"}, {"org_2", "7"}} {
		a := decimal.RequireFromString(j.amount)
		journals = append(journals, &engine.Journal{
			ID: "jnl_" + string(rune('a'+i)), OrganizationID: j.org, Kind: engine.JournalAdjustment, CreatedAt: base,
			Entries: []engine.Entry{{Account: engine.AccountAdjustments, Amount: a.Neg()}, {Account: engine.AccountAvailable, Amount: a}},
		})
	}
	create(t, s, engine.Tx.CreateJournal, journals...)
	downgrade(t, s, 8, map[string][]string{"": {`DROP TABLE account_balances`}})

	s = open()
	defer s.Close()
	want := map[string]map[string]string{
		"org_1": {engine.AccountAvailable: "101", engine.AccountAdjustments: "-101"},
		"org_2": {engine.AccountAvailable: "7", engine.AccountAdjustments: "-7"},
	}
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
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
}

// A database from before 0012 has journals and no balance transactions:
// the migration derives them, with the running balance in journal order,
// equal to what CreateJournal writes as it goes.
func upgradeBalanceTransactions(t *testing.T, open func() Store) {
	s := open()
	mustOrgs(t, s, "org_1", "org_2")
	var journals []*engine.Journal
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
		journals = append(journals, &engine.Journal{
			ID: "jnl_" + string(rune('a'+i)), OrganizationID: j.org, Kind: engine.JournalAdjustment, Reference: "r",
			CreatedAt: base.Add(time.Duration(i) * time.Second),
			Entries:   []engine.Entry{{Account: j.from, Amount: a.Neg()}, {Account: j.to, Amount: a}},
		})
	}
	create(t, s, engine.Tx.CreateJournal, journals...)
	list := func(s Store) map[string][]*engine.BalanceTransaction {
		out := map[string][]*engine.BalanceTransaction{}
		read(t, s, func(ctx context.Context, tx engine.Tx) error {
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
		return out
	}
	written := list(s)
	if len(written["org_1"]) != 5 || len(written["org_2"]) != 1 {
		t.Fatalf("written: %d and %d rows", len(written["org_1"]), len(written["org_2"]))
	}
	// Back to the schema before 0012, journals kept.
	downgrade(t, s, 12, map[string][]string{"": {
		`DROP TABLE balance_transactions`,
		`DROP INDEX deposits_organization_created`, `DROP INDEX deposits_organization_status`,
		`DROP INDEX deposits_organization_method`, `DROP INDEX deposits_organization_provider_tx`,
		`DROP INDEX withdrawals_organization_created`, `DROP INDEX withdrawals_organization_status`,
		`DROP INDEX withdrawals_organization_method`, `DROP INDEX withdrawals_organization_reference`,
		`DROP INDEX events_organization_type`,
	}})

	s = open()
	defer s.Close()
	if got := list(s); !reflect.DeepEqual(got, written) {
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

// A database from before 0021 has links paid by a checkout other than
// their latest: the migration finds each link's paid checkout by its
// merchant_id, a succeeded deposit or a closed one credited late.
func upgradePaidLinks(t *testing.T, open func() Store) {
	s := open()
	want := seedPaidLinks(t, s)
	downgrade(t, s, 21, map[string][]string{"": {`ALTER TABLE payment_links DROP COLUMN paid_deposit_id`}})
	s = open()
	defer s.Close()
	checkPaidLinks(t, s, want)
}

// A database from before 0020 has attempts UNIQUE (channel,
// transaction_id) and no succeeded_transactions: the migration puts the
// organization in the UNIQUE, rows unchanged, marks every succeeded ID,
// and (SQLite, which rebuilds the table) gives attempts their indexes back.
func upgradeTransactionIDs(t *testing.T, open func() Store) {
	s := open()
	mustDeposits(t, s, "org_1", "1", "2")
	mustDeposits(t, s, "org_2", "3", "4")
	won := newAttempt("att_won", "dep_1", "org_1", engine.ChannelBkash, "TRX1")
	won.Status, won.Tries = engine.AttemptSucceeded, 2
	lost := newAttempt("att_lost", "dep_3", "org_2", engine.ChannelBkash, "TRX2")
	lost.Status, lost.FailureCode, lost.Tries = engine.AttemptFailed, engine.FailureRecipientMismatch, 1
	running := newAttempt("att_run", "dep_2", "org_1", engine.ChannelNagad, "TRX1")
	running.Status, running.PayerPhone = engine.AttemptDelayed, "01712345678"
	running.LeaseOwner, running.LeasedUntil = "worker-1", base.Add(time.Minute)
	other := newAttempt("att_other", "dep_4", "org_2", engine.ChannelNagad, "TRX3")
	other.Status = engine.AttemptSucceeded
	all := []*engine.Attempt{won, lost, running, other}
	create(t, s, engine.Tx.CreateAttempt, all...)
	downgrade(t, s, 20, map[string][]string{
		"sqlite": {
			`DROP TABLE succeeded_transactions`,
			// Back to attempts as 0002 and 0014 made them.
			`CREATE TABLE attempts_old (
				id              TEXT    NOT NULL PRIMARY KEY,
				deposit_id      TEXT    NOT NULL REFERENCES deposits (id),
				organization_id TEXT    NOT NULL REFERENCES organizations (id),
				channel         TEXT    NOT NULL,
				transaction_id  TEXT    NOT NULL,
				status          TEXT    NOT NULL,
				failure_code    TEXT    NOT NULL,
				tries           INTEGER NOT NULL,
				next_run_at     INTEGER NOT NULL,
				lease_owner     TEXT    NOT NULL,
				leased_until    INTEGER NOT NULL,
				created_at      INTEGER NOT NULL,
				updated_at      INTEGER NOT NULL,
				UNIQUE (channel, transaction_id)
			) STRICT`,
			`ALTER TABLE attempts_old ADD COLUMN payer_phone TEXT NOT NULL DEFAULT ''`,
			`INSERT INTO attempts_old SELECT * FROM attempts`,
			`DROP TABLE attempts`,
			`ALTER TABLE attempts_old RENAME TO attempts`,
			`CREATE INDEX attempts_deposit_created ON attempts (deposit_id, created_at, id)`,
			`CREATE INDEX attempts_due ON attempts (next_run_at, id) WHERE status IN ('processing', 'delayed')`,
		},
		"postgres": {
			`DROP TABLE succeeded_transactions`,
			`ALTER TABLE attempts ADD CONSTRAINT attempts_channel_transaction_id_key UNIQUE (channel, transaction_id)`,
			`ALTER TABLE attempts DROP CONSTRAINT attempts_channel_transaction_id_organization_id_key`,
		},
	})

	s = open()
	defer s.Close()
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, want := range all {
			got, err := tx.GetAttempt(ctx, want.ID)
			if err != nil {
				return fmt.Errorf("%s: %w", want.ID, err)
			}
			assertEqual(t, got, want)
		}
		for _, c := range []struct{ channel, id string }{
			{engine.ChannelBkash, "TRX1"}, {engine.ChannelNagad, "TRX3"},
		} {
			got, err := tx.GetSucceededAttempt(ctx, c.channel, c.id)
			if err != nil {
				return fmt.Errorf("succeeded %s %s: %w", c.channel, c.id, err)
			}
			if got.Status != engine.AttemptSucceeded || got.Channel != c.channel || got.TransactionID != c.id {
				t.Errorf("succeeded %s %s is %+v", c.channel, c.id, got)
			}
		}
		for _, c := range []struct{ channel, id string }{
			{engine.ChannelBkash, "TRX2"}, {engine.ChannelNagad, "TRX1"},
		} {
			if _, err := tx.GetSucceededAttempt(ctx, c.channel, c.id); !errors.Is(err, engine.ErrNotFound) {
				t.Errorf("succeeded %s %s: %v, want ErrNotFound", c.channel, c.id, err)
			}
		}
		return nil
	})
	// The new rules hold for the old rows: another organization may submit
	// an ID, but not succeed one that succeeded; the organization itself
	// may not submit its ID again.
	again := newAttempt("att_again", "dep_2", "org_1", engine.ChannelBkash, "TRX2")
	wantDuplicate(t, "the organization's own ID", try(s, engine.Tx.CreateAttempt, newAttempt("att_dup", "dep_2", "org_1", engine.ChannelBkash, "TRX1")))
	squat := newAttempt("att_squat", "dep_3", "org_2", engine.ChannelBkash, "TRX1")
	create(t, s, engine.Tx.CreateAttempt, squat, again)
	wantDuplicate(t, "a second success", try(s, engine.Tx.MarkTransactionSucceeded, squat))
	create(t, s, engine.Tx.MarkTransactionSucceeded, again)
	wantIndexes(t, s, "attempts_deposit_created", "attempts_due")
}
