package engine_test

import (
	"testing"

	"github.com/payd-engine/payd/engine"
)

// An SMS inbox learns of a payment after the payer submitted its ID: the
// waiting attempt is looked up again at once, not after its backoff.
func TestRecheckTransaction(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.mustSubmit(d, "TX1")
		f.process() // not found yet: delayed for 5 s
		if err := f.eng.RecheckTransaction(f.ctx, "bkash", "TX1"); err != nil {
			t.Fatal(err)
		}
		f.provider.pay(f.payment(d, "TX1"))
		// Made due before the provider knew: checked now, found.
		if n := f.process(); n != 1 {
			t.Fatalf("claimed %d attempts after the recheck, want 1", n)
		}
		wantState(t, f, d, "succeeded", "succeeded", 1, "", false)

		// Unknown and finished IDs are left alone.
		if err := f.eng.RecheckTransaction(f.ctx, "bkash", "NOSUCH"); err != nil {
			t.Fatal(err)
		}
		if err := f.eng.RecheckTransaction(f.ctx, "bkash", "TX1"); err != nil {
			t.Fatal(err)
		}
		attempts, _ := f.eng.ListAttempts(f.ctx, f.org.ID, d.ID)
		if attempts[0].Status != engine.AttemptSucceeded || attempts[0].Tries != 2 {
			t.Fatalf("finished attempt became %s after %d tries", attempts[0].Status, attempts[0].Tries)
		}
	})
}
