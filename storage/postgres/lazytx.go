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
type lazyTx struct {
	conn  *pgxpool.Conn
	begun bool
}

const beginReadWrite = `BEGIN ISOLATION LEVEL READ COMMITTED READ WRITE`

func (l *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
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
	if l.begun {
		return l.conn.Query(ctx, sql, args...)
	}
	var b pgx.Batch
	b.Queue(sql, args...)
	br := l.SendBatch(ctx, &b)
	if _, err := br.Exec(); err != nil { // BEGIN
		_ = br.Close()
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		_ = br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, batch: br}, nil
}

func (l *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if l.begun {
		return l.conn.QueryRow(ctx, sql, args...)
	}
	rows, err := l.Query(ctx, sql, args...)
	return &firstRow{rows: rows, err: err}
}

// SendBatch sends b, with BEGIN ahead of its statements if none has been
// sent yet.
func (l *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if l.begun {
		return l.conn.SendBatch(ctx, b)
	}
	l.begun = true
	b.QueuedQueries = append([]*pgx.QueuedQuery{{SQL: beginReadWrite}}, b.QueuedQueries...)
	return &beginBatch{BatchResults: l.conn.SendBatch(ctx, b), tx: l}
}

// beginBatch is the batch that carries a lazyTx's BEGIN. A statement that
// Postgres refuses to prepare fails the batch before BEGIN runs: then no
// transaction is open, and the next statement must begin one rather than
// run (and commit) on its own.
type beginBatch struct {
	pgx.BatchResults
	tx *lazyTx
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
	if !l.begun {
		return nil
	}
	tag, err := l.conn.Exec(ctx, `COMMIT`)
	if err != nil {
		return err
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
