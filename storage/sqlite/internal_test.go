package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The durability contract lives in DSN parameters; check it reached the
// connections.
func TestPragmas(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		db     *sql.DB
		pragma string
		want   string
	}{
		{s.writer, "journal_mode", "wal"},
		{s.writer, "synchronous", "2"}, // FULL
		{s.writer, "foreign_keys", "1"},
		{s.writer, "busy_timeout", "10000"},
		{s.writer, "query_only", "0"},
		{s.reader, "journal_mode", "wal"},
		{s.reader, "busy_timeout", "10000"},
		{s.reader, "query_only", "1"},
	} {
		var got string
		if err := c.db.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
	if n := s.writer.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer pool allows %d connections, want 1", n)
	}
}

func TestMigrationsSorted(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if i == 0 && m.Version != 1 || i > 0 && m.Version <= ms[i-1].Version {
			t.Errorf("migration %s out of order", m.Name)
		}
	}
}

// queryPlan returns the details of EXPLAIN QUERY PLAN for query.
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var details []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		details = append(details, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(details, "\n")
}

// The worker's claim runs often over a table that only grows: it must walk
// the partial index in due order, never scan or sort the attempts. The
// partial index is used only while the query spells its WHERE clause.
func TestClaimUsesDueIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	plan := queryPlan(t, s.writer, claimQuery, "w", 2, 1, 1, 5)
	if !strings.Contains(plan, "USING INDEX attempts_due") || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN") {
		t.Errorf("claim plan:\n%s", plan)
	}
	plan = queryPlan(t, s.writer, claimPayoutsQuery, "w", 2, 1, 1, 5)
	if !strings.Contains(plan, "USING INDEX withdrawals_due") || strings.Contains(plan, "TEMP B-TREE") || strings.Contains(plan, "SCAN") {
		t.Errorf("payout claim plan:\n%s", plan)
	}
	plan = queryPlan(t, s.writer, balancesQuery, "org_1")
	if !strings.Contains(plan, "SEARCH account_balances USING PRIMARY KEY") {
		t.Errorf("balances plan:\n%s", plan)
	}
	plan = queryPlan(t, s.writer, countDisabledEndpointsQuery)
	if !strings.Contains(plan, "webhook_endpoints_disabled") {
		t.Errorf("disabled endpoints count plan:\n%s", plan)
	}
	plan = queryPlan(t, s.writer, sumEntriesQuery, "org_1")
	if !strings.Contains(plan, "COVERING INDEX ledger_entries_account") {
		t.Errorf("entry sums plan:\n%s", plan)
	}
}

func TestEpochTime(t *testing.T) {
	at := time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)
	for _, want := range []time.Time{{}, at} {
		var got time.Time
		if err := (epochTimeCol{&got}).Scan(epochMicros(want)); err != nil || !got.Equal(want) || got.IsZero() != want.IsZero() {
			t.Errorf("epoch round trip of %v = %v, %v", want, got, err)
		}
	}
	if epochMicros(time.Time{}) != 0 {
		t.Error("the zero time is not stored as 0")
	}
}
