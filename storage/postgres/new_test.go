package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// TestNewOnTheHostsPool: a host hands payd its own pool. New changes
// nothing; Migrate adds payd's tables beside the host's, recorded apart
// from another tool's schema_migrations (golang-migrate's, at version 5,
// whose versions payd must not take for its own); Close leaves the pool
// open.
func TestNewOnTheHostsPool(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	for _, q := range []string{
		`CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, total NUMERIC NOT NULL)`,
		`INSERT INTO orders (total) VALUES (12.50)`,
		`CREATE TABLE schema_migrations (version BIGINT NOT NULL PRIMARY KEY, dirty BOOLEAN NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (5, false)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s := postgres.New(pool)
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after New: %d tables, %v; want the host's 2", n, err)
	}
	if err := s.CheckMigrations(ctx); err == nil || !strings.Contains(err.Error(), `line "main" is at version 0`) {
		t.Errorf("CheckMigrations before Migrate = %v", err)
	}
	vs, err := s.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Line != engine.MainMigrationLine || vs[0].Version != vs[0].Latest || len(vs[0].Missing) > 0 {
		t.Errorf("Migrate = %+v", vs)
	}
	at := time.Date(2026, 11, 20, 8, 30, 15, 123456000, time.UTC)
	if err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, &engine.Organization{ID: "org_1", Name: "Shop", CreatedAt: at, UpdatedAt: at})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := pool.QueryRow(ctx, `SELECT name FROM organizations`).Scan(&name); err != nil || name != "Shop" {
		t.Errorf("payd's row through the host's pool after Close: %q, %v", name, err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the other tool's record: %d rows, %v", n, err)
	}
}
