package postgres

import (
	"context"
	"strings"
	"testing"
)

// Ready is the readiness check: nil on a migrated database, an error
// naming the migration a database lacks, and an error once closed.
func TestReady(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t)
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("migrated database: %v", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err == nil || !strings.Contains(err.Error(), "not applied") {
		t.Fatalf("a migration missing: %v", err)
	}
	s.Close()
	if err := s.Ready(ctx); err == nil {
		t.Fatal("closed store is ready")
	}
}
