package postgres

import (
	"context"
	"testing"

	"github.com/payd-engine/payd/conformance/storetest"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// A database from before 0021 has links paid by a checkout other than
// their latest: the migration finds each link's paid checkout by its
// merchant_id, a succeeded deposit or a closed one credited late.
func TestMigrate0021BackfillsPaidLinks(t *testing.T) {
	ctx := context.Background()
	t.Parallel()
	path := pgtest.URL(t)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := storetest.SeedPaidLinks(t, s)
	for _, q := range []string{
		`ALTER TABLE payment_links DROP COLUMN paid_deposit_id`,
		`DELETE FROM payd_migrations WHERE line = 'main' AND version = 21`,
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckPaidLinks(t, s, want)
}
