package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
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
		if i == 0 && m.version != 1 || i > 0 && m.version <= ms[i-1].version {
			t.Errorf("migration %s out of order", m.name)
		}
	}
}
