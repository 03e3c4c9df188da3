package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// claimCounter is a store that counts its claims of attempts and the
// attempts they lease.
type claimCounter struct {
	engine.Store
	claims, claimed atomic.Int64
}

// waitForWorker waits until a worker over s has looked for due attempts,
// which it does first thing: its hand-off is open by then.
func (s *claimCounter) waitForWorker(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.claims.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the worker never started")
		}
	}
}

func (s *claimCounter) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx engine.Tx) error { return fn(ctx, countingTx{tx, s}) })
}

type countingTx struct {
	engine.Tx
	s *claimCounter
}

func (t countingTx) ClaimDueAttempts(ctx context.Context, p engine.ClaimParams) ([]*engine.Attempt, error) {
	as, err := t.Tx.ClaimDueAttempts(ctx, p)
	t.s.claims.Add(1)
	t.s.claimed.Add(int64(len(as)))
	return as, err
}

// runEngine starts Run of an engine over cfg and returns it, with a stop
// that waits for Run to return.
func runEngine(t *testing.T, cfg engine.Config) (*engine.Engine, func()) {
	t.Helper()
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- e.Run(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-ran:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	}
	t.Cleanup(stop)
	return e, stop
}

// An attempt submitted to an engine whose worker runs is checked by that
// worker without a claim: leased to it in the submission's transaction.
// Every deposit succeeds, and no claim leases any attempt.
func TestSubmittedAttemptsGoToTheWorkerUnclaimed(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		store := &claimCounter{Store: f.store}
		e, _ := runEngine(t, engine.Config{Store: store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, WorkerConcurrency: 4})
		store.waitForWorker(t)
		var ds []*engine.Deposit
		for i := range 12 {
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			txID := fmt.Sprintf("HAND%d", i)
			f.provider.pay(f.payment(d, txID))
			v, err := e.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: f.org.ID, DepositID: d.ID, TransactionID: txID})
			if err != nil {
				t.Fatal(err)
			}
			// The same ID again is its attempt, not a second one to check.
			if _, err := e.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: f.org.ID, DepositID: d.ID, TransactionID: txID}); err != nil {
				t.Fatal(err)
			}
			if v.Attempt.LeaseOwner == "" {
				t.Fatalf("attempt %s queued unleased while the worker runs", v.Attempt.ID)
			}
			ds = append(ds, d)
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			done := 0
			for _, d := range ds {
				if f.get(d).Status == engine.StatusSucceeded {
					done++
				}
			}
			if done == len(ds) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d deposits succeeded", done, len(ds))
			}
		}
		if n := store.claimed.Load(); n != 0 {
			t.Errorf("claims leased %d attempts, want none", n)
		}
		f.provider.mu.Lock()
		lookups := f.provider.lookups
		f.provider.mu.Unlock()
		if lookups != len(ds) {
			t.Errorf("%d lookups for %d attempts", lookups, len(ds))
		}
	})
}

// Attempts handed to a worker that stops before checking them are not
// held until their leases run out: Run hands the leases back, and another
// engine claims them at once. Without a worker running, a submission's
// attempt is queued unleased, for any engine's claim.
func TestHandedAttemptsOutliveTheirWorker(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		started := make(chan string, 16)
		store := &claimCounter{Store: f.store}
		a, stop := runEngine(t, engine.Config{
			Store: store, Provider: blockingProvider(f.provider, started), Clock: f.clock, Keyring: f.keyring,
			LeaseDuration: time.Hour, WorkerConcurrency: 1,
		})
		store.waitForWorker(t)
		var ds []*engine.Deposit
		for i := range 3 {
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			txID := fmt.Sprintf("STOP%d", i)
			f.provider.pay(f.payment(d, txID))
			if _, err := a.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: f.org.ID, DepositID: d.ID, TransactionID: txID}); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d)
		}
		select {
		case <-started: // the first is being looked up; the others wait in the hand-off
		case <-time.After(10 * time.Second):
			t.Fatal("the worker never looked an attempt up")
		}
		stop()
		if n := store.claimed.Load(); n != 0 {
			t.Fatalf("the worker claimed %d attempts, want all handed over", n)
		}
		// The clock has not moved: only the hand-back frees them.
		if n := f.process(); n != len(ds) {
			t.Fatalf("another engine claimed %d attempts after the worker stopped, want %d", n, len(ds))
		}
		for _, d := range ds {
			if got := f.get(d).Status; got != engine.StatusSucceeded {
				t.Errorf("deposit %s is %s", d.ID, got)
			}
		}

		// No worker running: the attempt is anyone's to claim.
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.provider.pay(f.payment(d, "NOWORKER"))
		v, err := a.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: f.org.ID, DepositID: d.ID, TransactionID: "NOWORKER"})
		if err != nil {
			t.Fatal(err)
		}
		if v.Attempt.LeaseOwner != "" {
			t.Fatalf("attempt leased to %s with no worker running", v.Attempt.LeaseOwner)
		}
		if n := f.process(); n != 1 {
			t.Fatalf("claimed %d, want 1", n)
		}
	})
}
