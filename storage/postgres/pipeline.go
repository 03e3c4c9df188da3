package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payd-engine/payd/engine"
)

var _ engine.Pipeliner = (*tx)(nil)

// batchSender is a pgx.Tx.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Pipeline runs fn on a tx whose inserts and journals (execChecked) are
// queued and sent together, in one round trip, before its next other
// statement or when fn returns (engine.Pipeliner): a shared transaction's
// withdrawals, events, deliveries and journals cost one round trip instead
// of one or more each. The one-row inserts queued one after another are
// sent as one multi-row insert per table (see pipe.batch), so that a batch
// of withdrawals costs Postgres a statement per table, not one per row.
func (t *tx) Pipeline(ctx context.Context, fn func(tx engine.Tx) error) error {
	bs, ok := t.tx.(batchSender)
	if !ok || t.pipe != nil {
		return fn(t)
	}
	p := &pipe{querier: t.tx, sender: bs}
	if err := fn(&tx{tx: p, readOnly: t.readOnly, pipe: p}); err != nil {
		return err
	}
	return p.send(ctx)
}

// pipe is the querier of a Pipeline: it sends what is queued before any
// statement of its own.
type pipe struct {
	querier
	sender batchSender
	queued []queued
}

// queued is a statement of a pipe: a one-row insert (rowInsert) or any
// other statement.
type queued struct {
	query string
	args  []any
	check func(pgconn.CommandTag) error
	// table, for a one-row insert (insert): the statement up to its
	// VALUES list, what names the row in ErrDuplicate.
	table, what string
}

// queue queues a statement whose command tag check turns into its error.
func (p *pipe) queue(query string, check func(pgconn.CommandTag) error, args ...any) {
	p.queued = append(p.queued, queued{query: query, args: args, check: check})
}

// queueInsert queues the one-row insert of insert (query ends in a VALUES
// list of exactly its arguments, without ON CONFLICT), to be merged with
// the others into the same table (see batch).
func (p *pipe) queueInsert(what, query string, args ...any) bool {
	i := strings.LastIndex(query, " VALUES (")
	if i < 0 || query[i+len(" VALUES ("):] != params(len(args))+")" {
		return false
	}
	p.queued = append(p.queued, queued{table: query[:i], what: what, args: args})
	return true
}

// batch is what is queued as a pgx batch. The one-row inserts queued
// after one another (between two other statements) become one INSERT per
// table, with its rows in the order they were queued, the tables in the
// order of their first row: ON CONFLICT DO NOTHING, and ErrDuplicate
// unless every row went in, as for each row alone. A row may refer (a
// foreign key) to a row queued before it: the table it refers to had its
// first row queued earlier, so its insert comes first.
func (p *pipe) batch() *pgx.Batch {
	b := &pgx.Batch{}
	for i := 0; i < len(p.queued); {
		q := p.queued[i]
		if q.table == "" {
			b.Queue(q.query, q.args...).Exec(q.check)
			i++
			continue
		}
		// The run of inserts from i, grouped by table.
		j := i
		var tables []string
		rows := map[string][]queued{}
		for ; j < len(p.queued) && p.queued[j].table != ""; j++ {
			t := p.queued[j].table
			if rows[t] == nil {
				tables = append(tables, t)
			}
			rows[t] = append(rows[t], p.queued[j])
		}
		for _, t := range tables {
			// Postgres takes at most maxStatementParams parameters in a
			// statement: a large batch's rows go as several.
			rs := rows[t]
			per := max(maxStatementParams/max(len(rs[0].args), 1), 1)
			for len(rs) > per {
				queueRows(b, t, rs[:per])
				rs = rs[per:]
			}
			queueRows(b, t, rs)
		}
		i = j
	}
	return b
}

// maxStatementParams is the most parameters Postgres's extended protocol
// takes in one statement (a 16-bit count).
const maxStatementParams = 65535

// queueRows queues the one-row inserts rows into table as one statement.
func queueRows(b *pgx.Batch, table string, rows []queued) {
	var sql strings.Builder
	sql.WriteString(table)
	sql.WriteString(" VALUES ")
	var args []any
	for r, row := range rows {
		if r > 0 {
			sql.WriteString(", ")
		}
		sql.WriteByte('(')
		for k := range row.args {
			if k > 0 {
				sql.WriteString(", ")
			}
			sql.WriteString("$" + strconv.Itoa(len(args)+k+1))
		}
		sql.WriteByte(')')
		args = append(args, row.args...)
	}
	sql.WriteString(" ON CONFLICT DO NOTHING")
	b.Queue(sql.String(), args...).Exec(func(tag pgconn.CommandTag) error {
		if n := tag.RowsAffected(); n != int64(len(rows)) {
			if len(rows) == 1 {
				return fmt.Errorf("%w: %s", engine.ErrDuplicate, rows[0].what)
			}
			return fmt.Errorf("%w: %d of %d rows (%s, ...)", engine.ErrDuplicate, int64(len(rows))-n, len(rows), rows[0].what)
		}
		return nil
	})
}

// send sends the queued statements and reads their answers: the first
// error, if any.
func (p *pipe) send(ctx context.Context) error {
	if len(p.queued) == 0 {
		return nil
	}
	b := p.batch()
	p.queued = nil
	return interpretError(p.sender.SendBatch(ctx, b).Close())
}

func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := p.send(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return p.querier.Exec(ctx, sql, args...)
}

func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := p.send(ctx); err != nil {
		return nil, err
	}
	return p.querier.Query(ctx, sql, args...)
}

func (p *pipe) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := p.send(ctx); err != nil {
		return errRow{err}
	}
	return p.querier.QueryRow(ctx, sql, args...)
}
