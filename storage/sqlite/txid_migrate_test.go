package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/payd-engine/payd/conformance/storetest"
)

// A database from before 0020 has attempts UNIQUE (channel,
// transaction_id) and no succeeded_transactions: the migration rebuilds
// attempts with the organization in the UNIQUE, rows unchanged, and marks
// every succeeded ID.
func TestMigrate0020TransactionIDsPerOrganization(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payd.db")
	open := func() storetest.Store {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	storetest.UpgradeTransactionIDs(t, open, func(st storetest.Store) {
		s := st.(*Store)
		defer s.Close()
		// Back to attempts as 0002 and 0014 made them.
		for _, q := range []string{
			`DROP TABLE succeeded_transactions`,
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
			`DELETE FROM payd_migrations WHERE line = 'main' AND version = 20`,
		} {
			if _, err := s.writer.ExecContext(ctx, q); err != nil {
				t.Fatal(q, err)
			}
		}
	})
	// The rebuilt table has its indexes back.
	s := open().(*Store)
	defer s.Close()
	for _, name := range []string{"attempts_deposit_created", "attempts_due"} {
		var n int
		if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, name).Scan(&n); err != nil || n != 1 {
			t.Errorf("index %s: %d, %v", name, n, err)
		}
	}
}
