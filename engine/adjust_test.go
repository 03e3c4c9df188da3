package engine_test

import (
	"sync"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// TestAdjustBalanceOnceByJournalID: one adjustment's form sent by eight
// goroutines at once (a double tap, a replay) credits once; the others are
// conflicts. A journal ID of another form is refused unless it is one.
func TestAdjustBalanceOnceByJournalID(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		id := engine.NewID(engine.PrefixJournal, f.eng.Now())
		p := engine.AdjustParams{OrganizationID: f.org.ID, Amount: "250", Reason: "opening float", Actor: "console:owner@example.com", JournalID: id}
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = f.eng.AdjustBalance(f.ctx, p)
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case engine.ErrorCode(err) != engine.CodeConflict:
				t.Errorf("a replay: %v, want conflict", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of 8 sends adjusted, want 1", ok)
		}
		bal, err := f.eng.GetBalance(f.ctx, f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !bal.Available.Equal(dec("250")) {
			t.Errorf("available %s, want 250", bal.Available)
		}
		p.JournalID = "jnl_not-one"
		if _, err := f.eng.AdjustBalance(f.ctx, p); engine.ErrorCode(err) != engine.CodeInvalidRequest {
			t.Errorf("a malformed journal ID: %v", err)
		}
	})
}
