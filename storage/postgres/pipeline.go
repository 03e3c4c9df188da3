package postgres

import (
	"context"
	"errors"
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

// PipelineCommit is Pipeline whose queued statements, in a transaction
// of InTx, wait for the COMMIT and go with it (engine.Pipeliner): a
// shared transaction's writes and its COMMIT are one round trip instead
// of two. Postgres runs what a pipeline holds up to its first error, and
// skips the rest, COMMIT too: so every statement queued here whose row
// count is checked has Postgres check it (see asserted), and a wrong count
// fails the statement, and the transaction, instead of being found by the
// client after the COMMIT. Elsewhere (a host's transaction, within another
// Pipeline) it is Pipeline.
func (t *tx) PipelineCommit(ctx context.Context, fn func(tx engine.Tx) error) error {
	lt, ok := t.tx.(*lazyTx)
	if !ok || t.pipe != nil {
		return t.Pipeline(ctx, fn)
	}
	if err := lt.sendAtCommit(ctx); err != nil {
		return err
	}
	p := &pipe{querier: lt, sender: lt}
	if err := fn(&tx{tx: p, readOnly: t.readOnly, pipe: p}); err != nil {
		return err
	}
	if len(p.queued) > 0 {
		lt.atCommit = p.assertedBatch()
	}
	return nil
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
	rows  rowCount
	// table, for a one-row insert (insert): the statement up to its
	// VALUES list, what names the row in ErrDuplicate.
	table, what string
}

// queue queues a statement whose row count (see rowCount) turns into its
// error.
func (p *pipe) queue(query string, rows rowCount, args ...any) {
	p.queued = append(p.queued, queued{query: query, args: args, rows: rows})
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

// statements are the statements queued, the one-row inserts queued after
// one another (between two other statements) merged into one INSERT per
// table, with its rows in the order they were queued, the tables in the
// order of their first row: ON CONFLICT DO NOTHING, and ErrDuplicate
// unless every row went in, as for each row alone. A row may refer (a
// foreign key) to a row queued before it: the table it refers to had its
// first row queued earlier, so its insert comes first.
func (p *pipe) statements() []queued {
	var out []queued
	for i := 0; i < len(p.queued); {
		q := p.queued[i]
		if q.table == "" {
			out = append(out, q)
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
			// (Two are kept for asserted's.)
			per := max((maxStatementParams-2)/max(len(rs[0].args), 1), 1)
			for len(rs) > per {
				out = append(out, insertRows(t, rs[:per]))
				rs = rs[per:]
			}
			out = append(out, insertRows(t, rs))
		}
		i = j
	}
	return out
}

// batch is what is queued as a pgx batch, each row count checked by the
// client as its answer comes.
func (p *pipe) batch() *pgx.Batch {
	b := &pgx.Batch{}
	for _, q := range p.statements() {
		b.Queue(q.query, q.args...).Exec(q.rows.check)
	}
	return b
}

// assertedBatch is what is queued as a pgx batch that may end in COMMIT,
// each row count checked by Postgres (asserted), with the errors of the
// checks that fail (see checkedBatch.err).
func (p *pipe) assertedBatch() *checkedBatch {
	c := &checkedBatch{batch: &pgx.Batch{}}
	for _, q := range p.statements() {
		if q.rows.want == 0 {
			c.batch.Queue(q.query, q.args...)
			continue
		}
		c.batch.Queue(asserted(q.query, len(q.args)), append(q.args, q.rows.want, rowCountTag+strconv.Itoa(len(c.fails)))...)
		c.fails = append(c.fails, q.rows.fail)
	}
	return c
}

// rowCountTag starts the text that a failed asserted check casts to an
// integer, so that the error names the check.
const rowCountTag = "payd row count check "

// asserted is query (an INSERT, UPDATE or DELETE of nargs parameters)
// with its row count checked by Postgres: a statement that fails, with an
// invalid integer naming the check ($nargs+2), unless it changed
// $nargs+1 rows. The failing cast is of a value the CASE computes as the
// statement runs, not a constant the planner could fold.
func asserted(query string, nargs int) string {
	return `WITH changed AS (` + query + ` RETURNING 1) SELECT (CASE WHEN count(*) = $` + strconv.Itoa(nargs+1) +
		` THEN '0' ELSE $` + strconv.Itoa(nargs+2) + `::text END)::int FROM changed`
}

// checkedBatch is an assertedBatch.
type checkedBatch struct {
	batch *pgx.Batch
	fails []error // by the number in rowCountTag
}

// err is the error of the batch's answer: the check's own error if a
// check failed, else the batch's.
func (c *checkedBatch) err(err error) error {
	var e *pgconn.PgError
	if errors.As(err, &e) && e.Code == codeInvalidTextRepresentation {
		if i := strings.Index(e.Message, rowCountTag); i >= 0 {
			n, convErr := strconv.Atoi(strings.TrimRight(e.Message[i+len(rowCountTag):], `"`))
			if convErr == nil && n >= 0 && n < len(c.fails) {
				return c.fails[n]
			}
		}
	}
	return interpretError(err)
}

// maxStatementParams is the most parameters Postgres's extended protocol
// takes in one statement (a 16-bit count).
const maxStatementParams = 65535

// insertRows is the one-row inserts rows into table as one statement.
func insertRows(table string, rows []queued) queued {
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
	fail := fmt.Errorf("%w: %s", engine.ErrDuplicate, rows[0].what)
	if len(rows) > 1 {
		fail = fmt.Errorf("%w: one of %d rows (%s, ...)", engine.ErrDuplicate, len(rows), rows[0].what)
	}
	return queued{query: sql.String(), args: args, rows: rowCount{int64(len(rows)), fail}}
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
