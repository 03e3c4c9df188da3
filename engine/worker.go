package engine

import (
	"context"
	"time"
)

// Run does the engine's background work until ctx ends: it checks queued
// verification attempts against the provider, moves payouts along, ends
// deposits whose deadline passed, and posts webhooks (in goroutines of
// their own, so a slow receiver holds up nothing else). It returns once
// the posts in flight have finished. Every piece of work is claimed in the database with a
// lease, so any number of engines may run over one database.
func (e *Engine) Run(ctx context.Context) error {
	defer e.deliveries.wg.Wait()
	for {
		busy := false
		if n, err := e.ProcessAttempts(ctx); err != nil {
			e.logBackgroundError(ctx, "verification", err)
		} else {
			busy = busy || n > 0
		}
		if n, err := e.ProcessPayouts(ctx); err != nil {
			e.logBackgroundError(ctx, "payouts", err)
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
	e.cfg.Logger.ErrorContext(ctx, "background work failed", "work", what, "err", err)
	// Back off a little so a database outage is not a busy loop.
	select {
	case <-ctx.Done():
	case <-e.clock.After(time.Second):
	}
}

// wakeWorkers tells an idle Run that work was queued.
func (e *Engine) wakeWorkers() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
