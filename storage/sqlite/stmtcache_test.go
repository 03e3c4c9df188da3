package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// TestStatementCache: a statement is prepared once per connection and run
// again from the cache; the same text run while its rows are still open
// works from a statement of its own; a failed run leaves the cached
// statement usable; scripts are not cached.
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.writer.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL); CREATE TABLE u (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO t (k, v) VALUES (?, ?)`
	const list = `SELECT k, v FROM t WHERE k >= ? ORDER BY k`
	err = runTx(ctx, s.writer, nil, nil, func(tx *sql.Tx) error {
		for k, v := range []string{"a", "b", "c"} {
			if _, err := tx.ExecContext(ctx, insert, k, v); err != nil {
				return err
			}
		}
		// A duplicate key fails, and the statement still works afterwards.
		if _, err := tx.ExecContext(ctx, insert, 0, "again"); !errors.Is(interpretError(err), engine.ErrDuplicate) {
			t.Errorf("duplicate insert: %v", err)
		}
		_, err := tx.ExecContext(ctx, insert, 3, "d")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// Nested use of the same text while its rows are open.
	var pairs []string
	err = runTx(ctx, s.reader, &sql.TxOptions{ReadOnly: true}, nil, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, list, 0)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k int
			var v string
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			var inner string
			if err := tx.QueryRowContext(ctx, list, k).Scan(new(int), &inner); err != nil {
				return err
			}
			pairs = append(pairs, v+inner)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(pairs); got != 4 || pairs[0] != "aa" || pairs[3] != "dd" {
		t.Fatalf("nested queries: %v", pairs)
	}

	// The writer's one connection holds the statements it ran, and no
	// script.
	err = withConn(ctx, s.writer, func(c *cachingConn) {
		if c.stmts[insert] == nil || c.stmts[insert].busy {
			t.Errorf("insert not cached, or still busy")
		}
		for q := range c.stmts {
			if q == `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL); CREATE TABLE u (x INTEGER)` {
				t.Error("a script was cached")
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// withConn runs fn on one connection of db's caching driver.
func withConn(ctx context.Context, db *sql.DB, fn func(*cachingConn)) error {
	c, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(dc any) error {
		cc, ok := dc.(*cachingConn)
		if !ok {
			return errors.New("not a caching connection")
		}
		fn(cc)
		return nil
	})
}
