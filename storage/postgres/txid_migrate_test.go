package postgres

import (
	"context"
	"testing"

	"github.com/payd-engine/payd/conformance/storetest"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// A database from before 0020 has attempts UNIQUE (channel,
// transaction_id) and no succeeded_transactions: the migration puts the
// organization in the UNIQUE, rows unchanged, and marks every succeeded
// ID.
func TestMigrate0020TransactionIDsPerOrganization(t *testing.T) {
	ctx := context.Background()
	t.Parallel()
	url := pgtest.URL(t)
	open := func() storetest.Store {
		s, err := Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	storetest.UpgradeTransactionIDs(t, open, func(st storetest.Store) {
		s := st.(*Store)
		defer s.Close()
		for _, q := range []string{
			`DROP TABLE succeeded_transactions`,
			`ALTER TABLE attempts ADD CONSTRAINT attempts_channel_transaction_id_key UNIQUE (channel, transaction_id)`,
			`ALTER TABLE attempts DROP CONSTRAINT attempts_channel_transaction_id_organization_id_key`,
			`DELETE FROM payd_migrations WHERE line = 'main' AND version = 20`,
		} {
			if _, err := s.pool.Exec(ctx, q); err != nil {
				t.Fatal(q, err)
			}
		}
	})
}
