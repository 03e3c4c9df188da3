// Package txretry is the loop both stores run a transaction in: again while
// the database says "try again" (SQLite busy, a Postgres serialization
// failure or deadlock), with jittered exponential backoff, up to a bound.
// What counts as "try again" and how giving up reads are the adapter's.
package txretry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy bounds the retries of one store.
type Policy struct {
	MaxAttempts  int
	FirstBackoff time.Duration
	MaxBackoff   time.Duration
	// Retryable reports whether running the attempt again may succeed.
	Retryable func(error) bool
	// GiveUp is the error returned after MaxAttempts retryable failures,
	// the last of which is err.
	GiveUp func(attempts int, err error) error
}

// Do calls attempt until it returns an error the policy does not retry
// (or nil), or MaxAttempts have failed, or ctx is done.
func (p Policy) Do(ctx context.Context, attempt func() error) error {
	backoff := p.FirstBackoff
	for i := 1; ; i++ {
		err := attempt()
		if err == nil || !p.Retryable(err) {
			return err
		}
		if i == p.MaxAttempts {
			return p.GiveUp(i, err)
		}
		// Jitter keeps the attempts that met from meeting again in
		// lockstep.
		d := backoff/2 + rand.N(backoff/2+1)
		backoff = min(2*backoff, p.MaxBackoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}
