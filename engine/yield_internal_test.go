package engine

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// TestYieldToAPI: a payout step waits while an API write is in flight,
// until the last one ends or PayoutYield has passed, whichever is first;
// with none in flight, or PayoutYield negative, it does not wait.
func TestYieldToAPI(t *testing.T) {
	clk := clock.NewMock()
	e := &Engine{cfg: Config{PayoutYield: 50 * time.Millisecond}, clock: clk}
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
