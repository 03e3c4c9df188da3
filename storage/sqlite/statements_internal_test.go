package sqlite

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/payd-engine/payd/storage/internal/opcost"
)

// statementCounter counts what payd asks of SQLite: statements (each Exec
// or Query, on any connection) and write transactions (their BEGIN and
// COMMIT are a statement each, and each commit a flush of the WAL).
type statementCounter struct {
	statements, transactions atomic.Int64
}

type countingConnector struct {
	driver.Connector
	n *statementCounter
}

func (c countingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{conn: dc.(conn), n: c.n}, nil
}

type countingConn struct {
	conn
	n *statementCounter
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.n.statements.Add(1)
	return c.conn.ExecContext(ctx, query, args)
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.n.statements.Add(1)
	return c.conn.QueryContext(ctx, query, args)
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if !opts.ReadOnly {
		c.n.transactions.Add(1)
	}
	return c.conn.BeginTx(ctx, opts)
}

// TestStatementsPerOperation counts the statements and write transactions
// of the money path's operations on SQLite (opcost.Measure), and fails
// when one run alone costs more than its ceiling; go test -v prints them.
func TestStatementsPerOperation(t *testing.T) {
	n := &statementCounter{}
	wrapConnector = func(c driver.Connector) driver.Connector { return countingConnector{c, n} }
	libReadHook = func() { n.statements.Add(1) } // reads past database/sql
	t.Cleanup(func() {
		wrapConnector = func(c driver.Connector) driver.Connector { return c }
		libReadHook = nil
	})
	store, err := Open(context.Background(), filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	opcost.Measure(t, store, func() opcost.Counters {
		return opcost.Counters{Statements: n.statements.Load(), Transactions: n.transactions.Load()}
	}, sqliteCeilings)
}

// sqliteCeilings are the statements of the money path's operations run
// alone on SQLite, as BENCHMARKS.md gives them.
var sqliteCeilings = opcost.Ceilings{
	"create":            {Statements: 5},
	"get":               {Statements: 1},
	"submit":            {Statements: 4},
	"worker":            {Statements: 13},
	"withdrawal create": {Statements: 10},
	"payout":            {Statements: 8.2},
}
