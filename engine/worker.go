package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// releaseTimeout bounds the release of leases as Run returns: past it the
// leases simply run out.
const releaseTimeout = 5 * time.Second

// Run does the engine's background work until ctx ends: it checks queued
// verification attempts against the provider (runAttempts, in a goroutine
// of its own), moves payouts and refunds along, ends
// deposits whose deadline passed, and posts webhooks (in goroutines of
// their own, so a slow receiver holds up nothing else). It returns once
// the posts in flight have finished. Every piece of work is claimed in the database with a
// lease, so any number of engines may run over one database. As it returns
// it hands back the leases it still holds (ReleaseLeases), so another engine
// takes that work at once instead of when the leases run out. Run one Run
// per Engine.
//
// A host does not call Run: payd.App.Run does, the one way to start the
// background work, with the provider's own background work and the ledger
// checks beside it, which a Run called apart would miss.
func (e *Engine) Run(ctx context.Context) error {
	defer e.releaseLeasesAtExit(ctx)
	defer e.deliveries.wg.Wait()
	var attempts sync.WaitGroup
	defer attempts.Wait()
	attempts.Go(func() { e.runAttempts(ctx) })
	for {
		busy := false
		began := e.now()
		if n, err := e.ProcessPayouts(ctx); err != nil {
			e.logBackgroundError(ctx, "payouts", err)
		} else {
			e.noteWorked(ctx, began)
			busy = busy || n > 0
		}
		if n, err := e.ProcessRefunds(ctx); err != nil {
			e.logBackgroundError(ctx, "refunds", err)
		} else {
			busy = busy || n > 0
		}
		if n, err := e.ExpireDeposits(ctx); err != nil {
			e.logBackgroundError(ctx, "expiry", err)
		} else {
			busy = busy || n > 0
		}
		if _, err := e.startDeliveries(ctx); err != nil {
			e.logBackgroundError(ctx, "webhooks", err)
		}
		if _, err := e.startCompatIPNs(ctx); err != nil {
			e.logBackgroundError(ctx, "compat IPNs", err)
		}
		if busy {
			continue // more may be due right away
		}
		timer := e.clock.Timer(e.cfg.PollInterval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-e.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

func (e *Engine) logBackgroundError(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	if !e.noteUnavailable(ctx, err) {
		e.cfg.Logger.ErrorContext(ctx, "background work failed", "work", what, "err", err)
	}
	// Back off a little so a database outage is not a busy loop.
	select {
	case <-ctx.Done():
	case <-e.clock.After(time.Second):
	}
}

// forEachClaimed calls fn for each of n claimed items, at most
// WorkerConcurrency at a time, and joins their errors: one failing item
// holds up none of the others.
func (e *Engine) forEachClaimed(n int, fn func(i int) error) error {
	errs := make([]error, n)
	if e.cfg.WorkerConcurrency <= 1 || n <= 1 {
		for i := range n {
			errs[i] = fn(i)
		}
		return errors.Join(errs...)
	}
	slots := make(chan struct{}, e.cfg.WorkerConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// wakeWorkers tells an idle Run that work was queued: payouts or webhook
// deliveries.
func (e *Engine) wakeWorkers() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// wakeAttempts tells Run's verification (runAttempts) that an attempt was
// queued. It does not wake the rest of Run, which would look for payouts,
// expiries and deliveries in vain on every submission.
func (e *Engine) wakeAttempts() {
	select {
	case e.attemptsWake <- struct{}{}:
	default:
	}
}

// ReleaseLeases hands back every lease this engine holds on open work
// (attempts, payouts, webhook deliveries): another engine may claim them at
// once. Call it only when none of this engine's workers is running; Run
// does as it returns. A worker that still finished such work would find its
// lease gone and drop its outcome, and the work would be done again: safe
// (lookups and idempotent payouts repeat harmlessly), only wasted.
func (e *Engine) ReleaseLeases(ctx context.Context) error {
	return e.inTx(ctx, func(ctx context.Context, tx Tx) error { return tx.ReleaseLeases(ctx, e.workerID) })
}

// releaseLeasesAtExit is ReleaseLeases as Run returns: ctx is done by then,
// so it runs on a context of its own, bounded by releaseTimeout.
func (e *Engine) releaseLeasesAtExit(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := e.ReleaseLeases(ctx); err != nil {
		e.cfg.Logger.ErrorContext(ctx, "could not hand back leases at shutdown; they run out by themselves", "err", err)
		return
	}
	e.cfg.Logger.DebugContext(ctx, "handed back leases", "worker", e.workerID)
}

// apiLoad counts the API's write requests whose transactions are queued or
// being written, for background work that yields to them (yieldToAPI).
type apiLoad struct {
	mu sync.Mutex
	n  int
	// idle is closed when n falls to zero, and made anew when it rises.
	idle chan struct{}
}

// begin counts a write in flight until the func it returns is first
// called.
func (l *apiLoad) begin() func() {
	l.mu.Lock()
	if l.n == 0 {
		l.idle = make(chan struct{})
	}
	l.n++
	l.mu.Unlock()
	ended := false
	return func() {
		if ended {
			return
		}
		ended = true
		l.mu.Lock()
		l.n--
		if l.n == 0 {
			close(l.idle)
		}
		l.mu.Unlock()
	}
}

// busy returns a channel closed once no write is in flight, or nil if
// none is.
func (l *apiLoad) busy() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return nil
	}
	return l.idle
}

// yieldToAPI waits until none of this engine's API writes is in flight,
// for at most Config.PayoutYield. On two cores a payout worker running
// flat out took the CPU that withdrawal creates needed: at half of their
// peak their p99 was 9-16 ms without it and 29-43 ms with it
// (BENCHMARKS.md, "Payout steps yield to the API").
func (e *Engine) yieldToAPI(ctx context.Context) {
	idle := e.apiWrites.busy()
	if idle == nil || e.cfg.PayoutYield < 0 {
		return
	}
	start := e.clock.Now()
	timer := e.clock.Timer(e.cfg.PayoutYield)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	case <-ctx.Done():
	}
	if e.cfg.Observer != nil {
		e.cfg.Observer.PayoutYielded(e.clock.Since(start))
	}
}

// dbOutage is an outage of the database as the background work sees it:
// from a piece of work that failed with ErrUnavailable to the next that
// succeeded. It is logged once as it starts and once as it ends, not once
// per failed attempt of each worker.
type dbOutage struct {
	down  atomic.Bool // read by every successful round of work
	mu    sync.Mutex
	since time.Time
}

// noteUnavailable reports whether err means the database is unavailable,
// and logs the start of an outage the first time.
func (e *Engine) noteUnavailable(ctx context.Context, err error) bool {
	if !errors.Is(err, ErrUnavailable) {
		return false
	}
	o := &e.outage
	o.mu.Lock()
	started := o.since.IsZero()
	if started {
		o.since = e.now()
		o.down.Store(true)
	}
	o.mu.Unlock()
	if started {
		e.cfg.Logger.WarnContext(ctx, "database unavailable: background work paused until it answers", "err", err)
	}
	return true
}

// noteWorked ends the outage under way, if any, after background work
// that began at began reached the database, and logs how long the outage
// lasted. Work that began before the outage did (a commit that made it
// just before the primary died) ends nothing.
func (e *Engine) noteWorked(ctx context.Context, began time.Time) {
	o := &e.outage
	if !o.down.Load() {
		return
	}
	o.mu.Lock()
	since := o.since
	if since.IsZero() || began.Before(since) {
		o.mu.Unlock()
		return
	}
	o.since = time.Time{}
	o.down.Store(false)
	o.mu.Unlock()
	e.cfg.Logger.InfoContext(ctx, "database available again: background work resumed", "outage", e.clock.Since(since).Round(time.Millisecond).String())
}
