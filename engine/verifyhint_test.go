package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// TestLookupSameOnEitherInstance: the worker that took a submission asks
// the provider from what it remembers of the deposit, another instance's
// worker from the deposit it reads; both ask the same (the deposit's
// operation, wallet and payer), so which instance checks changes nothing.
func TestLookupSameOnEitherInstance(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		var mu sync.Mutex
		var seen []engine.LookupRequest
		f.provider.setLookup(func(req engine.LookupRequest) (*engine.ProviderTransaction, error) {
			mu.Lock()
			seen = append(seen, req)
			mu.Unlock()
			return nil, engine.ErrProviderUnavailable // delayed: asked again
		})
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.mustSubmit(d, "TXHINT0001")
		f.process() // this instance: the hint
		other, err := engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring})
		if err != nil {
			t.Fatal(err)
		}
		f.clock.Add(2 * time.Minute)
		if _, err := other.ProcessAttempts(f.ctx); err != nil { // another: a read
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		want := engine.LookupRequest{OrganizationID: f.org.ID, Channel: "bkash", Operation: engine.OperationCashOut,
			TransactionID: "TXHINT0001", RecipientPhone: f.wallet.Phone, PayerPhone: "01712345678"}
		if len(seen) != 2 {
			t.Fatalf("%d lookups, want 2", len(seen))
		}
		for i, got := range seen {
			if got != want {
				t.Errorf("lookup %d: %+v, want %+v", i, got, want)
			}
		}
	})
}
