package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// TestYieldToAPI: a payout step waits while an API write is in flight,
// until the last one ends or PayoutYield has passed, whichever is first;
// with none in flight, or PayoutYield negative, it does not wait.
func TestYieldToAPI(t *testing.T) {
	clk := clock.NewMock()
	obs := &yieldObserver{}
	e := &Engine{cfg: Config{PayoutYield: 50 * time.Millisecond, Observer: obs}, clock: clk}
	ctx := context.Background()
	yielded := func() chan struct{} {
		done := make(chan struct{})
		go func() { e.yieldToAPI(ctx); close(done) }()
		return done
	}
	stillWaiting := func(done chan struct{}, what string) {
		t.Helper()
		select {
		case <-done:
			t.Fatalf("%s: the step went ahead", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
	wait := func(done chan struct{}, what string) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the step still waits", what)
		}
	}

	wait(yielded(), "no API write in flight")

	// Until the last of two writes ends.
	end1, end2 := e.apiWrites.begin(), e.apiWrites.begin()
	done := yielded()
	stillWaiting(done, "two writes in flight")
	end1()
	end1() // ending twice counts once
	stillWaiting(done, "one write still in flight")
	end2()
	wait(done, "the writes ended")

	// At most PayoutYield.
	end := e.apiWrites.begin()
	done = yielded()
	stillWaiting(done, "a write in flight")
	waitFor(t, func() bool { clk.Add(10 * time.Millisecond); return isClosed(done) })
	if elapsed := clk.Now().Sub(time.Unix(0, 0)); elapsed < 50*time.Millisecond || elapsed > 60*time.Millisecond {
		t.Errorf("the step waited %v of the clock, want 50ms", elapsed)
	}
	// The waits were told: the two of the writes that ended (none of the
	// clock), then this one.
	if got := obs.waits(); len(got) != 2 || got[0] != 0 || got[1] < 50*time.Millisecond || got[1] > 60*time.Millisecond {
		t.Errorf("waits told: %v, want [0s 50ms]", got)
	}
	// And not at all when yielding is off.
	e.cfg.PayoutYield = -1
	wait(yielded(), "PayoutYield negative")
	end()
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// yieldObserver records what PayoutYielded is told.
type yieldObserver struct {
	mu     sync.Mutex
	waited []time.Duration
}

func (o *yieldObserver) PayoutYielded(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waited = append(o.waited, d)
}

func (o *yieldObserver) waits() []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]time.Duration(nil), o.waited...)
}

func (*yieldObserver) VerificationResolved(string, string) {}
func (*yieldObserver) DepositFinished(string)              {}
func (*yieldObserver) WithdrawalFinished(string)           {}
func (*yieldObserver) WebhookPosted(string, bool)          {}
