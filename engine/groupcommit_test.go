package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
)

// createConcurrently makes n H2H creates of amount at once and returns
// their deposits and errors, by index.
func createConcurrently(f *fixture, orgID string, n int, amount string) ([]*engine.Deposit, []error) {
	ds, errs := make([]*engine.Deposit, n), make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			ds[i], _, errs[i] = f.eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
				OrganizationID: orgID, CheckoutMode: "h2h", Amount: amount, PaymentMethod: "bkash_agent",
				RedirectURL: "https://shop.example/r", MerchantID: fmt.Sprintf("gc-%s-%d", amount, i), PayerPhone: "01712345678",
			})
		})
	}
	close(start)
	wg.Wait()
	return ds, errs
}

// tickingClock is a mock clock that moves a microsecond every time it is
// read, so that concurrent creates get distinct times.
type tickingClock struct {
	*clock.Mock
	mu sync.Mutex
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Mock.Add(time.Microsecond)
	return c.Mock.Now()
}

// TestGroupCommitRotation: creates that share transactions (group commit)
// rotate through the pool: 60 concurrent creates over three wallets spread
// over all three (the exact order of concurrent creates is not defined; see
// TestPickWalletInBatch for the exact rotation), and the wallets' last
// assignments are written.
func TestGroupCommitRotation(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		f.addWallet(f.org.ID, "bkash", "cash_out", "01811111112")
		f.addWallet(f.org.ID, "bkash", "cash_out", "01811111113")
		eng, err := engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: &tickingClock{Mock: f.clock}, Keyring: f.keyring})
		if err != nil {
			t.Fatal(err)
		}
		f.eng = eng
		ds, errs := createConcurrently(f, f.org.ID, 60, "500")
		count := map[string]int{}
		for i, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
			count[ds[i].WalletID]++
		}
		for id, n := range count {
			if len(count) != 3 || n < 15 {
				t.Fatalf("wallet %s assigned %d times of 60 (%v)", id, n, count)
			}
		}
		ws, err := f.eng.ListWallets(f.ctx, f.org.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.LastAssignedAt == nil {
				t.Fatalf("wallet %s: last assignment not written", w.ID)
			}
		}
	})
}

// TestGroupCommitDailyLimit: a daily limit holds exactly under concurrent
// creates; those it refuses fail alone (method_unavailable) and fail no
// other create of their batch.
func TestGroupCommitDailyLimit(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		if _, err := f.eng.SetWalletEnabled(f.ctx, f.org.ID, f.wallet.ID, false); err != nil {
			t.Fatal(err)
		}
		limited, err := f.eng.AddWallet(f.ctx, engine.AddWalletParams{
			OrganizationID: f.org.ID, Channel: "bkash", Operation: "cash_out", Phone: "01811111119", DailyLimit: "2000",
		})
		if err != nil {
			t.Fatal(err)
		}
		ds, errs := createConcurrently(f, f.org.ID, 10, "500")
		ok := 0
		for i, err := range errs {
			switch {
			case err == nil && ds[i].WalletID == limited.ID:
				ok++
			case engine.ErrorCode(err) == engine.CodeMethodUnavailable:
			default:
				t.Fatalf("create %d: %v", i, err)
			}
		}
		if ok != 4 {
			t.Fatalf("%d creates within a daily limit of 2000 at 500 each, want 4", ok)
		}
	})
}
