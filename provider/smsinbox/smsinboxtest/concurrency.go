package smsinboxtest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Copies of conformance/storetest's race and lock helpers, for the
// inbox's transactions.

// raceForOneIn is raceForOne in the transactions that inTx runs.
func raceForOneIn[X any](t *testing.T, inTx runTx[X], n int, insert func(ctx context.Context, tx X, i int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = inTx(context.Background(), func(ctx context.Context, tx X) error { return insert(ctx, tx, i) })
		})
	}
	wg.Wait()
	var ok, dup int
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, engine.ErrDuplicate):
			dup++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || dup != n-1 {
		t.Errorf("%d succeeded and %d were duplicates, want 1 and %d", ok, dup, n-1)
	}
}

// txCounter is a row that a lock test increments in transactions of type
// X: lock reads it locked, get reads it plainly, count is its counter, inc
// adds one to it, and update (a method expression such as
// engine.Tx.UpdateAttempt) writes it back.
type txCounter[X, T any] struct {
	lock   func(ctx context.Context, tx X) (T, error)
	get    func(ctx context.Context, tx X) (T, error)
	update func(tx X, ctx context.Context, row T) error
	count  func(row T) int
	inc    func(row T)
}

// runTx is a store's way of running a transaction of type X: InTx, ReadTx,
// InboxTx, InboxReadTx.
type runTx[X any] func(ctx context.Context, fn func(ctx context.Context, tx X) error) error

// lockSerializesIn is lockSerializes in the transactions that inTx and
// readTx run.
func lockSerializesIn[X, T any](t *testing.T, inTx, readTx runTx[X], n int, c txCounter[X, T]) {
	t.Helper()
	seen := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			err := inTx(context.Background(), func(ctx context.Context, tx X) error {
				row, err := c.lock(ctx, tx)
				if err != nil {
					return err
				}
				seen[i] = c.count(row)
				c.inc(row)
				return c.update(tx, ctx, row)
			})
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	var last T
	if err := readTx(context.Background(), func(ctx context.Context, tx X) error {
		var err error
		last, err = c.get(ctx, tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := c.count(last); got != n {
		t.Errorf("counter = %d after %d increments", got, n)
	}
	slices.Sort(seen)
	for i, v := range seen {
		if v != i {
			t.Errorf("transactions saw %v, want each of 0 to %d once", seen, n-1)
			break
		}
	}
}

// microsAfter is how many microseconds after base at is; nil is none.
func microsAfter(at *time.Time) int {
	if at == nil {
		return 0
	}
	return int(at.Sub(base) / time.Microsecond)
}
