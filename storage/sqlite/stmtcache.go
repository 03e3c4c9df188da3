package sqlite

import (
	"context"
	"database/sql/driver"
	"strings"
)

// stmtCacheSize bounds the prepared statements a connection keeps. The
// store's statements are a fixed set of texts (a few dozen), so it is never
// reached in practice; past it statements are prepared for each use.
const stmtCacheSize = 256

// cachingConnector opens connections that keep each statement they
// prepare, keyed by its text, and run it again from there. Preparing a
// statement (parsing and planning its SQL) cost more than running it in
// profiles of payd's reads, and database/sql prepares every query it is
// given afresh.
type cachingConnector struct{ driver.Connector }

// conn is what the store needs of a driver connection (modernc's has all
// of it).
type conn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := dc.(conn)
	if !ok {
		return dc, nil // a driver without these interfaces: no cache
	}
	return &cachingConn{conn: inner, stmts: map[string]*cachedStmt{}}, nil
}

// cachingConn is a connection with its prepared statements. database/sql
// uses a connection from one goroutine at a time, so it needs no lock.
type cachingConn struct {
	conn
	stmts map[string]*cachedStmt
}

// cachedStmt is a prepared statement; busy while rows of it are open, when
// the same text is run again from a statement of its own.
type cachedStmt struct {
	stmt interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	}
	busy bool
}

// lookup returns the cached statement of query, preparing it if needed, or
// nil when query is to be run uncached: a script of several statements, a
// statement whose rows are open, or a full cache.
func (c *cachingConn) lookup(ctx context.Context, query string) (*cachedStmt, error) {
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil, nil
		}
		return s, nil
	}
	if len(c.stmts) >= stmtCacheSize || strings.Contains(query, ";") {
		return nil, nil
	}
	ds, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := ds.(interface {
		driver.Stmt
		driver.StmtExecContext
		driver.StmtQueryContext
	})
	if !ok {
		ds.Close()
		return nil, nil
	}
	s := &cachedStmt{stmt: st}
	c.stmts[query] = s
	return s, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.lookup(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.conn.ExecContext(ctx, query, args)
	}
	return s.stmt.ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.lookup(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.conn.QueryContext(ctx, query, args)
	}
	rows, err := s.stmt.QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	s.busy = true
	return &cachedRows{Rows: rows, stmt: s}, nil
}

// Close finalizes the cached statements, then closes the connection.
func (c *cachingConn) Close() error {
	for q, s := range c.stmts {
		s.stmt.Close()
		delete(c.stmts, q)
	}
	return c.conn.Close()
}

// cachedRows are the rows of a cached statement, which closing them (a
// reset, not a finalize) frees for the next use.
type cachedRows struct {
	driver.Rows
	stmt *cachedStmt
}

func (r *cachedRows) Close() error {
	r.stmt.busy = false
	return r.Rows.Close()
}
