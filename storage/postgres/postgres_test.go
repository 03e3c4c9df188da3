package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payd-engine/payd/conformance/storetest"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// TestStore holds the Postgres store to the suite every store passes. Each
// subtest gets a database of its own (pgtest.URL), dropped when it ends.
// The stores are built as a host builds one: on its own pool (New), then
// migrated when it decides (Migrate).
func TestStore(t *testing.T) {
	pgtest.AdminURL(t) // skip the whole suite at once when unset
	storetest.Exercise(t, func(t *testing.T) storetest.Store {
		ctx := context.Background()
		cfg, err := pgxpool.ParseConfig(pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = postgres.DefaultMaxConns
		postgres.ConfigurePool(cfg)
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		s := postgres.New(pool)
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	})
}
