package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Ready is the readiness check: nil on a migrated database, an error
// naming the migration a database lacks, and an error once closed.
func TestReady(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("migrated database: %v", err)
	}
	if _, err := s.writer.ExecContext(ctx, `DELETE FROM payd_migrations WHERE line = 'main' AND version = (SELECT max(version) FROM payd_migrations)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err == nil || !strings.Contains(err.Error(), `line "main" is at version`) {
		t.Fatalf("a migration missing: %v", err)
	}
	s.Close()
	if err := s.Ready(ctx); err == nil {
		t.Fatal("closed store is ready")
	}
}

// The queue gauges are read on every scrape over tables that only grow:
// each queue must be read through its claim's partial index, never a scan
// of the table.
func TestCountQueuesUsesDueIndexes(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plan := queryPlan(t, s.writer, countQueuesQuery)
	for _, want := range []string{"attempts USING INDEX attempts_due", "withdrawals USING INDEX withdrawals_due", "refunds USING INDEX refunds_due", "deliveries USING INDEX deliveries_due"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	for _, l := range strings.Split(plan, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "SCAN") && !strings.Contains(l, "USING") {
			t.Errorf("a table scan: %s\n%s", l, plan)
		}
	}
}
