package postgres

import (
	"context"

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
// of one or more each.
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
	queued pgx.Batch
}

// send sends the queued statements and reads their answers: the first
// error, if any.
func (p *pipe) send(ctx context.Context) error {
	if p.queued.Len() == 0 {
		return nil
	}
	b := p.queued
	p.queued = pgx.Batch{}
	return interpretError(p.sender.SendBatch(ctx, &b).Close())
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
