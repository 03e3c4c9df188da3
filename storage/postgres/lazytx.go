package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lazyTx is a read-write transaction whose BEGIN goes with its first
// statement, in one pipeline, instead of in a round trip of its own: a
// batch of withdrawal creates was four round trips (BEGIN, the gate's
// reads, the writes, COMMIT) and is three. A transaction that runs no
// statement sends neither BEGIN nor COMMIT. In a pipeline, a statement
// after BEGIN runs inside that transaction, and one that fails leaves it
// failed, as if the two had been sent one by one.
//
// The statements a PipelineCommit queued (atCommit) go with COMMIT, or
// ahead of the next statement.
type lazyTx struct {
	conn     *pgxpool.Conn
	begun    bool
	atCommit *checkedBatch
}

// sendAtCommit sends the statements waiting for the COMMIT, if any, now.
func (l *lazyTx) sendAtCommit(ctx context.Context) error {
	c := l.atCommit
	if c == nil {
		return nil
	}
	l.atCommit = nil
	return c.err(l.SendBatch(ctx, c.batch).Close())
}

const beginReadWrite = `BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE`

func (l *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := l.sendAtCommit(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	if l.begun {
		return l.conn.Exec(ctx, sql, args...)
	}
	var tag pgconn.CommandTag
	var b pgx.Batch
	b.Queue(sql, args...).Exec(func(ct pgconn.CommandTag) error { tag = ct; return nil })
	err := l.SendBatch(ctx, &b).Close()
	return tag, err
}

func (l *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := l.sendAtCommit(ctx); err != nil {
		return nil, err
	}
	if l.begun {
		return l.conn.Query(ctx, sql, args...)
	}
	var b pgx.Batch
	b.Queue(sql, args...)
	br := l.SendBatch(ctx, &b)
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, batch: br}, nil
}

func (l *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := l.sendAtCommit(ctx); err != nil {
		return errRow{err}
	}
	if l.begun {
		return l.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := l.Query(ctx, sql, args...)
	return &firstRow{rows: rows, err: err}
}

// SendBatch sends b, with BEGIN ahead of its statements if none has been
// sent yet. Its results are b's: BEGIN's is read here.
func (l *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := l.sendAtCommit(ctx); err != nil {
		return failedBatch{err: err}
	}
	if l.begun {
		return l.conn.SendBatch(ctx, b)
	}
	l.begun = true
	b.QueuedQueries = append([]*pgx.QueuedQuery{{SQL: beginReadWrite}}, b.QueuedQueries...)
	bb := &beginBatch{BatchResults: l.conn.SendBatch(ctx, b), tx: l}
	_, bb.err = bb.BatchResults.Exec()
	return bb
}

// beginBatch is the batch that carries a lazyTx's BEGIN. A statement that
// Postgres refuses to prepare fails the batch before BEGIN runs: then no
// transaction is open, and the next statement must begin one rather than
// run (and commit) on its own.
type beginBatch struct {
	pgx.BatchResults
	tx  *lazyTx
	err error // BEGIN's: every result is then this error
}

func (b *beginBatch) Exec() (pgconn.CommandTag, error) {
	if b.err != nil {
		return pgconn.CommandTag{}, b.err
	}
	return b.BatchResults.Exec()
}

func (b *beginBatch) Query() (pgx.Rows, error) {
	if b.err != nil {
		return nil, b.err
	}
	return b.BatchResults.Query()
}

func (b *beginBatch) QueryRow() pgx.Row {
	if b.err != nil {
		return errRow{b.err}
	}
	return b.BatchResults.QueryRow()
}

func (b *beginBatch) Close() error {
	err := b.BatchResults.Close()
	if err != nil && b.tx.conn.Conn().PgConn().TxStatus() == 'I' {
		b.tx.begun = false
	}
	return err
}

// commit ends the transaction; like pgx.Tx's Commit, it fails with
// pgx.ErrTxCommitRollback when the transaction had failed and COMMIT
// rolled it back.
func (l *lazyTx) commit(ctx context.Context) error {
	var tag pgconn.CommandTag
	var err error
	switch {
	case l.atCommit != nil:
		c := l.atCommit
		l.atCommit = nil
		c.batch.Queue(`COMMIT`).Exec(func(t pgconn.CommandTag) error { tag = t; return nil })
		if err := c.err(l.SendBatch(ctx, c.batch).Close()); err != nil {
			return err
		}
	case !l.begun:
		return nil
	default:
		if tag, err = l.conn.Exec(ctx, `COMMIT`); err != nil {
			return err
		}
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// rollback ends a transaction still open even when ctx is done, so that
// the connection goes back to the pool clean. If ROLLBACK fails the
// connection is broken, and the pool closes it, which ends the
// transaction on the server.
func (l *lazyTx) rollback(ctx context.Context) {
	if !l.begun || l.conn.Conn().PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = l.conn.Exec(ctx, `ROLLBACK`)
}

// batchRows are the rows of a batch's last statement: closing them closes
// the batch.
type batchRows struct {
	pgx.Rows
	batch pgx.BatchResults
}

func (r *batchRows) Close() {
	r.Rows.Close()
	_ = r.batch.Close()
}

// firstRow is a pgx.Row over the rows of a query: ErrNoRows without one.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r *firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// failedBatch is the answer of a batch that was never sent: every result
// is its error.
type failedBatch struct {
	pgx.BatchResults // nil: only for its Tx method, which nothing here calls
	err              error
}

func (f failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, f.err }
func (f failedBatch) Query() (pgx.Rows, error)         { return nil, f.err }
func (f failedBatch) QueryRow() pgx.Row                { return errRow{f.err} }
func (f failedBatch) Close() error                     { return f.err }
