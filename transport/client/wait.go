package client

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Defaults of WaitOptions, from the interface's suggested polling interval
// of 2 to 5 seconds with a client-side upper bound.
const (
	DefaultWaitInterval    = 2 * time.Second
	DefaultWaitMaxInterval = 5 * time.Second
	DefaultWaitTimeout     = 10 * time.Minute
)

// WaitOptions tune WaitForDeposit and WaitForWithdrawal. Zero fields take
// the defaults.
type WaitOptions struct {
	// Interval is the first wait between reads (default 2 s).
	Interval time.Duration
	// MaxInterval caps the wait as it grows by half each read (default 5 s).
	MaxInterval time.Duration
	// Timeout is the upper bound of the whole wait (default 10 min).
	Timeout time.Duration
}

// ErrWaitTimeout is returned by WaitForDeposit and WaitForWithdrawal when
// their upper bound passes before the resource is terminal; the last state
// read is returned with it.
var ErrWaitTimeout = errors.New("payd: not terminal before the wait timed out")

// WaitForDeposit polls GetDeposit until the deposit is terminal and returns
// it; check Succeeded before fulfilling. The wait between reads starts at
// Interval and grows to MaxInterval. Transient failures (network, 429, 5xx)
// are ridden out until the bound; any other *Error (401, 404, ...) ends the
// wait at once. When Timeout passes first it returns the last deposit read
// (nil if none) and ErrWaitTimeout; when ctx ends, the last deposit and
// ctx's error.
func (c *Client) WaitForDeposit(ctx context.Context, id string, o WaitOptions) (*Deposit, error) {
	return poll(ctx, o, func() (*Deposit, error) { return c.GetDeposit(ctx, id) }, (*Deposit).IsTerminal)
}

// WaitForWithdrawal polls GetWithdrawal until the payout succeeded or
// failed, like WaitForDeposit. A payout may take long (the provider decides);
// a timeout leaves it processing, not failed.
func (c *Client) WaitForWithdrawal(ctx context.Context, id string, o WaitOptions) (*Withdrawal, error) {
	return poll(ctx, o, func() (*Withdrawal, error) { return c.GetWithdrawal(ctx, id) }, (*Withdrawal).IsTerminal)
}

// poll reads until done, with the backoff and bounds of o.
func poll[T any](ctx context.Context, o WaitOptions, read func() (*T, error), done func(*T) bool) (*T, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultWaitInterval
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = DefaultWaitMaxInterval
	}
	o.MaxInterval = max(o.MaxInterval, o.Interval)
	if o.Timeout <= 0 {
		o.Timeout = DefaultWaitTimeout
	}
	deadline := time.Now().Add(o.Timeout)
	interval := o.Interval
	var last *T
	var lastErr error
	for {
		v, err := read()
		switch {
		case err == nil:
			last, lastErr = v, nil
			if done(v) {
				return v, nil
			}
		case ctx.Err() != nil:
			return last, ctx.Err()
		case !transient(err):
			return last, err
		default:
			lastErr = err
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			if lastErr != nil {
				return last, fmt.Errorf("%w (last error: %w)", ErrWaitTimeout, lastErr)
			}
			return last, ErrWaitTimeout
		}
		t := time.NewTimer(min(interval, remaining))
		select {
		case <-ctx.Done():
			t.Stop()
			return last, ctx.Err()
		case <-t.C:
		}
		interval = min(interval+interval/2, o.MaxInterval)
	}
}

// transient reports whether a failed read is worth repeating later: a
// network failure, or a 429 or 5xx answer.
func transient(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode == 429 || e.StatusCode >= 500
	}
	return retryableNetError(err)
}
