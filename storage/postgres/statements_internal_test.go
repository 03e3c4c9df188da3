package postgres

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payd-engine/payd/storage/internal/opcost"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// statementCounter is a pgx tracer that counts statements (BEGIN, COMMIT
// and ROLLBACK apart), read-write transactions begun, and round trips: a
// statement sent alone (BEGIN and COMMIT too) or a batch, a pipeline of
// statements, is one.
type statementCounter struct {
	statements, transactions, roundTrips atomic.Int64
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.roundTrips.Add(1)
	c.count(data.SQL)
	return ctx
}

// count counts a statement, a BEGIN as a transaction (a read-write one
// only), a COMMIT or ROLLBACK not at all.
func (c *statementCounter) count(sql string) {
	sql = strings.ToLower(strings.TrimSpace(sql))
	switch {
	case strings.HasPrefix(sql, "begin"):
		if !strings.Contains(sql, "read only") {
			c.transactions.Add(1)
		}
	case sql == "commit", sql == "rollback":
	default:
		c.statements.Add(1)
	}
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// The statements of a Pipeline count as statements too, though they share
// a round trip.
func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.roundTrips.Add(1)
	return ctx
}

func (c *statementCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	c.count(data.SQL)
}

func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestStatementsPerOperation counts the statements, write transactions
// and round trips of the money path's operations on Postgres
// (opcost.Measure), and fails when one run alone costs more than its
// ceiling; go test -v prints them.
func TestStatementsPerOperation(t *testing.T) {
	n := &statementCounter{}
	configHook = func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = n }
	t.Cleanup(func() { configHook = func(*pgxpool.Config) {} })
	store, err := Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	opcost.Measure(t, store, func() opcost.Counters {
		return opcost.Counters{Statements: n.statements.Load(), Transactions: n.transactions.Load(), RoundTrips: n.roundTrips.Load()}
	}, postgresCeilings)
}

// postgresCeilings are the costs of the money path's operations run alone
// on Postgres, as BENCHMARKS.md gives them.
var postgresCeilings = opcost.Ceilings{
	"create":            {Statements: 5, RoundTrips: 3},
	"get":               {Statements: 1, RoundTrips: 1},
	"submit":            {Statements: 4, RoundTrips: 4},
	"worker":            {Statements: 17, RoundTrips: 7},
	"withdrawal create": {Statements: 8, RoundTrips: 2},
	"payout":            {Statements: 13, RoundTrips: 4.3},
}
