package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestNewOnTheHostsDatabase: a host hands payd its own handle on its own
// file. New changes nothing; Migrate adds payd's tables beside the host's,
// recorded apart from another tool's schema_migrations (golang-migrate's,
// at version 5, whose versions payd must not take for its own); Close
// leaves the host's handle open.
func TestNewOnTheHostsDatabase(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "host.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE orders (id INTEGER PRIMARY KEY, total TEXT NOT NULL)`,
		`INSERT INTO orders (total) VALUES ('12.50')`,
		`CREATE TABLE schema_migrations (version INTEGER NOT NULL PRIMARY KEY, dirty INTEGER NOT NULL)`,
		`INSERT INTO schema_migrations VALUES (5, 0)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sqlite.New(db)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table'`).Scan(&n); err != nil || n != 2 {
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
	if err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, &engine.Organization{ID: "org_1", Name: "Shop", CreatedAt: base, UpdatedAt: base})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var total, name string
	if err := db.QueryRowContext(ctx, `SELECT total FROM orders`).Scan(&total); err != nil || total != "12.50" {
		t.Errorf("the host's row: %q, %v", total, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT name FROM organizations`).Scan(&name); err != nil || name != "Shop" {
		t.Errorf("payd's row through the host's handle: %q, %v", name, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the other tool's record: %d rows, %v", n, err)
	}
}

// TestNewRefusesMemory: the store opens its own connections on db's file,
// so a database without one is refused, saying why.
func TestNewRefusesMemory(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := sqlite.New(db); err == nil || !strings.Contains(err.Error(), "not on a file") {
		t.Errorf("New(:memory:) = %v", err)
	}
}
