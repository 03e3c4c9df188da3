package engine

import (
	"context"
	"time"
)

// Observer is told of outcomes once the transaction that made them has
// committed (never for one rolled back or retried), for metrics. Its
// methods are called from the workers' goroutines at once: they must be
// quick and safe for concurrent use. The engine knows no metrics library;
// the wiring adapts one to this.
type Observer interface {
	// VerificationResolved: an attempt succeeded or failed (AttemptSucceeded
	// or AttemptFailed, with its Failure* code when it failed).
	VerificationResolved(result, failureCode string)
	// DepositFinished: a deposit reached a terminal status.
	DepositFinished(status string)
	// WithdrawalFinished: a withdrawal settled (WithdrawalSucceeded or
	// WithdrawalFailed).
	WithdrawalFinished(status string)
	// WebhookPosted: one post of a delivery answered ("delivered") or did
	// not ("failed"); disabled is set when it disabled its endpoint.
	WebhookPosted(result string, disabled bool)
	// PayoutYielded: a payout step waited this long for the API's writes
	// in flight before it called the provider (Config.PayoutYield). It is
	// told as the wait ends, not after a commit.
	PayoutYielded(wait time.Duration)
}

// RefundObserver is an Observer that is also told of refunds; an
// Observer without it (written before refunds) is not.
type RefundObserver interface {
	// RefundFinished: a refund settled (RefundSucceeded or RefundFailed).
	RefundFinished(status string)
}

// outcome is one Observer call waiting for its transaction to commit.
type outcome func(Observer)

type outcomesKey struct{}

// note records o for the transaction running on ctx; inTx reports it once
// that transaction commits.
func note(ctx context.Context, o outcome) {
	if notes, ok := ctx.Value(outcomesKey{}).(*[]outcome); ok {
		*notes = append(*notes, o)
	}
}

// inTx is Store.InTx that reports the outcomes its fn noted to the
// Observer after the commit; a retried try's notes are dropped with it.
func (e *Engine) inTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	obs := e.cfg.Observer
	if obs == nil {
		return e.store.InTx(ctx, fn)
	}
	var notes []outcome
	err := e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		notes = notes[:0]
		return fn(context.WithValue(ctx, outcomesKey{}, &notes), tx)
	})
	if err == nil {
		for _, o := range notes {
			o(obs)
		}
	}
	return err
}

// Queue is one queue of background work: how many items wait in it and
// when the oldest of them was created (zero when it is empty).
type Queue struct {
	Items  int
	Oldest time.Time
}

// Queues are the depths of the background work, for metrics.
type Queues struct {
	// AttemptsProcessing are verification attempts waiting for their first
	// or next look-up; AttemptsDelayed wait to try again later.
	AttemptsProcessing, AttemptsDelayed Queue
	// PayoutsProcessing are withdrawals whose payout is not settled yet.
	PayoutsProcessing Queue
	// RefundsProcessing are refunds not settled yet.
	RefundsProcessing Queue
	// DeliveriesPending are webhook deliveries not yet delivered or
	// exhausted.
	DeliveriesPending Queue
}

// Queues reads the depths of the background work. Each store serves it
// from the partial indexes the workers claim from, so its cost follows
// the work waiting, not the history.
func (e *Engine) Queues(ctx context.Context) (*Queues, error) {
	var q *Queues
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		q, err = tx.CountQueues(ctx)
		return err
	})
	return q, err
}

// DisabledWebhookEndpoints counts the webhook endpoints disabled now, in
// every organization, for metrics (from the index of the disabled ones).
func (e *Engine) DisabledWebhookEndpoints(ctx context.Context) (int, error) {
	var n int
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		n, err = tx.CountDisabledWebhookEndpoints(ctx)
		return err
	})
	return n, err
}

// PoolStats are one database connection pool's statistics, for metrics.
type PoolStats struct {
	// Pool names the pool within its store: "writer", "reader" and
	// "reader_one" (ReadOne's one-row reads) for SQLite's three, "main"
	// for Postgres's one.
	Pool string
	// MaxOpen is the most connections the pool opens (0: no limit); Open
	// are open now, InUse of them serving a transaction, Idle waiting.
	MaxOpen, Open, InUse, Idle int
	// Waits counts, since the pool opened, the times a caller had to wait
	// for a connection; WaitDuration is the time all of them waited.
	Waits        int64
	WaitDuration time.Duration
	// WriteBusy is the time, since the pool opened, that the store's
	// write transactions held its connections, from their BEGIN to their
	// COMMIT or ROLLBACK, summed over connections. Its rate is how many
	// connections writes keep busy: SQLite's one writer is saturated at
	// 1, whatever the CPUs. Zero for a pool that only reads.
	WriteBusy time.Duration
}

// PoolStatser is a Store that reports its connection pools' statistics
// (storage/sqlite and storage/postgres do). It reads counters the pools
// keep in memory: it never asks the database.
type PoolStatser interface {
	PoolStats() []PoolStats
}

// DBHealth is a store's account of its database's availability, for
// readiness and metrics.
type DBHealth struct {
	// UnavailableSince is when the current outage began: the first
	// transaction that failed with ErrUnavailable after the last one that
	// succeeded. Zero while the database answers.
	UnavailableSince time.Time
	// Outages counts the outages that ended; UnavailableTotal is their
	// total length.
	Outages          int64
	UnavailableTotal time.Duration
	// Reconnects counts connections opened during an outage: to a
	// restarted or newly promoted primary.
	Reconnects int64
	// Failures counts the transactions that failed with ErrUnavailable,
	// by cause (the store's names, e.g. "connect", "read_only").
	Failures map[string]int64
}

// DBHealther is a Store that keeps a DBHealth (storage/postgres does). It
// reads counters kept in memory: it never asks the database.
type DBHealther interface {
	DBHealth() DBHealth
}
