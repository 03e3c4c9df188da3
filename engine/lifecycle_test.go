package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// TestStateTable walks every row of the contract's deposit and
// verification state table.
func TestStateTable(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		t.Run("created with instructions", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			wantState(t, f, d, "pending", "awaiting_reference", 0, "", true)
			if view := engine.DepositView(d, f.clock.Now(), "/api").(engine.H2HDeposit); view.Verification.AttemptsRemaining != 3 {
				t.Fatalf("attempts_remaining %d, want 3", view.Verification.AttemptsRemaining)
			}
		})
		t.Run("created with a redirect", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash", "500")
			wantState(t, f, d, "pending", "processing", 0, "", true)
			view := engine.DepositView(d, f.clock.Now(), "/api").(engine.H2HDeposit)
			if _, ok := view.NextAction.(engine.RedirectAction); !ok || view.Verification.AttemptsRemaining != 0 {
				t.Fatalf("next_action %#v, attempts_remaining %d", view.NextAction, view.Verification.AttemptsRemaining)
			}
			_, err := f.submit(d, "TX1")
			wantCode(t, err, "redirect_action")
		})
		t.Run("transaction ID queued", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			v := f.mustSubmit(d, " tx1 ")
			if v.Attempt.TransactionID != "TX1" || v.Attempt.Status != "processing" {
				t.Fatalf("attempt %+v", v.Attempt)
			}
			wantState(t, f, d, "processing", "processing", 1, "", true)
		})
		t.Run("attempt failed, attempts and time remain", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			p := f.payment(d, "TX1")
			p.Amount = decimal.RequireFromString("499.99")
			f.provider.pay(p)
			f.mustSubmit(d, "TX1")
			f.process()
			wantState(t, f, d, "pending", "awaiting_reference", 1, "amount_mismatch", true)
			if view := engine.DepositView(f.get(d), f.clock.Now(), "/api").(engine.H2HDeposit); view.Verification.AttemptsRemaining != 2 {
				t.Fatalf("attempts_remaining %d, want 2", view.Verification.AttemptsRemaining)
			}
		})
		t.Run("attempt succeeded", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "1000")
			f.provider.pay(f.payment(d, "TX1"))
			f.mustSubmit(d, "tx1")
			if n := f.process(); n != 1 {
				t.Fatalf("processed %d, want 1", n)
			}
			wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
			if got := f.get(d); got.ProviderTransactionID != "TX1" {
				t.Fatalf("provider_transaction_id %q", got.ProviderTransactionID)
			}
			// 1000 - (1.5% of 1000 + 2) = 983.00 credited; the fee is 17.00.
			b := f.balances(f.org.ID)
			if !b["available"].Equal(decimal.RequireFromString("983")) || !b["fees"].Equal(decimal.RequireFromString("17")) || !b["external"].Equal(decimal.RequireFromString("-1000")) {
				t.Fatalf("balances %v", b)
			}
			wantEvents(t, f, d, "deposit.succeeded")
		})
		t.Run("third distinct ID failed", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			for i, code := range []string{"payer_mismatch", "recipient_mismatch", "amount_mismatch"} {
				p := f.payment(d, fmt.Sprintf("TX%d", i))
				switch code {
				case "payer_mismatch":
					p.PayerPhone = "01999999999"
				case "recipient_mismatch":
					p.RecipientPhone = "01899999999"
				case "amount_mismatch":
					p.Amount = decimal.RequireFromString("500.01")
				}
				f.provider.pay(p)
				f.mustSubmit(d, p.TransactionID)
				f.process()
			}
			wantState(t, f, d, "failed", "failed", 3, "amount_mismatch", false)
			wantEvents(t, f, d, "deposit.failed")
			_, err := f.submit(d, "TX9")
			wantCode(t, err, "attempt_limit_reached")
			if b := f.balances(f.org.ID); len(b) != 0 {
				t.Fatalf("a failed deposit moved money: %v", b)
			}
		})
		t.Run("deadline passed, no ID ever submitted", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			f.clock.Add(15*time.Minute - time.Second)
			if n := f.expire(); n != 0 {
				t.Fatalf("expired %d before the deadline", n)
			}
			f.clock.Add(time.Second)
			if n := f.expire(); n != 1 {
				t.Fatalf("expired %d at the deadline, want 1", n)
			}
			wantState(t, f, d, "expired", "expired", 0, "", false)
			wantEvents(t, f, d, "deposit.expired")
		})
		t.Run("deadline passed, only failed IDs", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			p := f.payment(d, "TX1")
			p.Status = engine.TransactionFailed
			f.provider.pay(p)
			f.mustSubmit(d, "TX1")
			f.process()
			f.clock.Add(15 * time.Minute)
			f.expire()
			wantState(t, f, d, "failed", "failed", 1, "payment_not_completed", false)
			wantEvents(t, f, d, "deposit.failed")
		})
		t.Run("redirect checkout expires", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "nagad", "500")
			f.clock.Add(30 * time.Minute)
			f.expire()
			wantState(t, f, d, "expired", "expired", 0, "", false)
		})
	})
}

// wantEvents checks the events of a deposit by type, and that each carries
// the deposit as its status endpoint shows it.
func wantEvents(t *testing.T, f *fixture, d *engine.Deposit, types ...string) {
	t.Helper()
	evs := f.events(d.ID)
	if len(evs) != len(types) {
		t.Fatalf("%d events, want %v", len(evs), types)
	}
	for i, ev := range evs {
		var body struct {
			ID, Type, Timestamp string
			Data                json.RawMessage
		}
		if err := json.Unmarshal(ev.Payload, &body); err != nil {
			t.Fatal(err)
		}
		if ev.Type != types[i] || body.Type != types[i] || body.ID != ev.ID {
			t.Fatalf("event %d is %s (%s), want %s", i, ev.Type, body.Type, types[i])
		}
		want, _ := json.Marshal(engine.DepositView(f.get(d), ev.CreatedAt, "/api"))
		if string(body.Data) != string(want) {
			t.Fatalf("event data\n%s\nwant\n%s", body.Data, want)
		}
	}
}

// TestFailureCodes produces every failure_code of the contract.
func TestFailureCodes(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		tests := []struct {
			name   string
			code   string // "" means the payment matches
			mutate func(p *engine.ProviderTransaction, d *engine.Deposit)
		}{
			{"paid on another channel", "channel_mismatch", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.Channel = "nagad" }},
			{"sent money instead of a cash out", "channel_mismatch", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.Type = engine.TransactionSendMoney }},
			{"paid another wallet", "recipient_mismatch", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.RecipientPhone = "01899999999" }},
			{"paid from another number", "payer_mismatch", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.PayerPhone = "01799999999" }},
			{"underpaid by a poisha", "amount_mismatch", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.Amount = p.Amount.Sub(decimal.New(1, -2)) }},
			{"overpaid by a poisha", "amount_mismatch", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.Amount = p.Amount.Add(decimal.New(1, -2)) }},
			{"paid in another currency", "amount_mismatch", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.Currency = "USD" }},
			{"payment failed", "payment_not_completed", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.Status = engine.TransactionFailed }},
			{"paid before the deposit", "outside_payment_window", func(p *engine.ProviderTransaction, d *engine.Deposit) { p.CompletedAt = d.CreatedAt.Add(-time.Second) }},
			{"paid after the deadline", "outside_payment_window", func(p *engine.ProviderTransaction, d *engine.Deposit) { p.CompletedAt = d.ExpiresAt.Add(time.Second) }},
			{"paid at the deadline", "", func(p *engine.ProviderTransaction, d *engine.Deposit) { p.CompletedAt = d.ExpiresAt }},
			{"paid in the deposit's first second", "", func(p *engine.ProviderTransaction, d *engine.Deposit) {
				p.CompletedAt = d.CreatedAt.Truncate(time.Second)
			}},
			{"minute precision in the deposit's first minute", "", func(p *engine.ProviderTransaction, d *engine.Deposit) {
				p.CompletedAt = d.CreatedAt.Truncate(time.Minute)
				p.TimePrecision = time.Minute
			}},
			{"type unknown to the provider", "", func(p *engine.ProviderTransaction, _ *engine.Deposit) { p.Type = "" }},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				f := newFixture(t)
				f.clock.Add(30 * time.Second) // so that the window's start is not on a minute
				d := f.deposit(f.org.ID, "bkash_agent", "500")
				p := f.payment(d, "TXA")
				tt.mutate(&p, d)
				f.provider.pay(p)
				f.mustSubmit(d, "TXA")
				f.process()
				if tt.code == "" {
					wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
					return
				}
				wantState(t, f, d, "pending", "awaiting_reference", 1, tt.code, true)
				attempts, _ := f.eng.ListAttempts(f.ctx, f.org.ID, d.ID)
				if len(attempts) != 1 || attempts[0].Status != "failed" || attempts[0].FailureCode != tt.code {
					t.Fatalf("attempts %+v", attempts)
				}
			})
		}
		t.Run("transaction_not_found at once", func(t *testing.T) {
			// The provider answers for the network: an unknown ID is a
			// failed attempt (TestNotFoundGrace for one that learns late).
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			f.mustSubmit(d, "NOPE")
			f.process()
			wantState(t, f, d, "pending", "awaiting_reference", 1, "transaction_not_found", true)
		})
		t.Run("provider_unavailable after the bound", func(t *testing.T) {
			f := newFixture(t)
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			f.provider.pay(f.payment(d, "TX1"))
			f.provider.setDown(true)
			f.mustSubmit(d, "TX1")
			runUntilResolved(t, f, d)
			wantState(t, f, d, "failed", "failed", 1, "provider_unavailable", false)
			wantEvents(t, f, d, "deposit.failed")
		})
		t.Run("transaction_id_used is refused at submission", func(t *testing.T) {
			f := newFixture(t)
			f.addWallet(f.org.ID, "bkash", "make_payment", "01822222222")
			d1 := f.deposit(f.org.ID, "bkash_agent", "500")
			d2 := f.deposit(f.org.ID, "bkash_merchant", "500")
			f.mustSubmit(d1, "TXU")
			_, err := f.submit(d2, "txu")
			wantCode(t, err, "transaction_id_used")
		})
	})
}

// runUntilResolved moves the mock clock through the retry schedule until
// the deposit's attempt resolves, failing if it takes unreasonably long.
func runUntilResolved(t *testing.T, f *fixture, d *engine.Deposit) {
	t.Helper()
	for range 200 {
		f.process()
		if f.get(d).Status != engine.StatusProcessing {
			return
		}
		f.clock.Add(time.Minute)
	}
	t.Fatal("attempt never resolved")
}

func TestDelayedAttemptRecovers(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.provider.pay(f.payment(d, "TX1"))
		f.provider.setDown(true)
		f.mustSubmit(d, "TX1")
		f.process()
		attempts, _ := f.eng.ListAttempts(f.ctx, f.org.ID, d.ID)
		a := attempts[0]
		if a.Status != "delayed" || !a.NextRunAt.Equal(f.clock.Now().Add(5*time.Second)) {
			t.Fatalf("attempt %s next %s", a.Status, a.NextRunAt)
		}
		// Not due yet: nothing is claimed. The repeat shows it still queued.
		if n := f.process(); n != 0 {
			t.Fatalf("claimed %d before the backoff ran out", n)
		}
		if v := f.mustSubmit(d, "tx1"); v.Attempt.ID != a.ID || !v.Attempt.Running() {
			t.Fatalf("repeat gave %+v", v.Attempt)
		}
		f.clock.Add(5 * time.Second)
		f.process()
		attempts, _ = f.eng.ListAttempts(f.ctx, f.org.ID, d.ID)
		if attempts[0].Tries != 2 || !attempts[0].NextRunAt.Equal(f.clock.Now().Add(10*time.Second)) {
			t.Fatalf("second backoff: tries %d next %s", attempts[0].Tries, attempts[0].NextRunAt)
		}
		// The deadline passes while the attempt waits: it still resolves.
		f.clock.Add(16 * time.Minute)
		f.expire()
		wantState(t, f, d, "processing", "processing", 1, "", false)
		f.provider.setDown(false)
		f.process()
		wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
		wantEvents(t, f, d, "deposit.succeeded")
	})
}

func TestSubmissionRules(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		_, err := f.submit(d, "ab")
		wantCode(t, err, "invalid_request")
		_, err = f.submit(d, string(make([]byte, 65)))
		wantCode(t, err, "invalid_request")
		_, err = f.submit(d, "AB CD")
		wantCode(t, err, "invalid_request")

		first := f.mustSubmit(d, "TX1")
		again := f.mustSubmit(d, "  tx1")
		if again.Attempt.ID != first.Attempt.ID || f.get(d).AttemptsUsed != 1 {
			t.Fatal("a repeat consumed an attempt")
		}
		_, err = f.submit(d, "TX2")
		wantCode(t, err, "attempt_in_progress")

		other := f.deposit(f.org.ID, "bkash_agent", "500")
		_, err = f.submit(other, "TX1")
		wantCode(t, err, "transaction_id_used")

		otherOrg, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Other"), H2HEnabled: ptr(true)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.eng.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: otherOrg.Organization.ID, DepositID: d.ID, TransactionID: "TX3"})
		wantCode(t, err, "not_found")

		f.provider.pay(f.payment(d, "TX1"))
		f.process()
		resolved := f.mustSubmit(d, "TX1")
		if resolved.Attempt.Status != "succeeded" || resolved.Deposit.Status != "succeeded" {
			t.Fatalf("repeat after success: %+v", resolved.Attempt)
		}
		_, err = f.submit(d, "TX4")
		wantCode(t, err, "deposit_terminal")

		// Terminal states absorb: expiry and further work change nothing.
		f.clock.Add(time.Hour)
		f.expire()
		f.process()
		wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
		wantEvents(t, f, d, "deposit.succeeded")

		late := f.deposit(f.org.ID, "bkash_agent", "500")
		f.clock.Add(15 * time.Minute)
		_, err = f.submit(late, "TX5")
		wantCode(t, err, "deposit_terminal")
	})
}

// TestConcurrentSubmissions races many IDs at one deposit, and one ID at
// many deposits of several organizations, with real goroutines: within an
// organization exactly one submission holds the ID; across organizations
// a submission that has not succeeded holds nothing.
func TestConcurrentSubmissions(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		results := race(40, func(i int) error {
			_, err := f.submit(d, fmt.Sprintf("MANY%02d", i))
			return err
		})
		if results["ok"] != 1 || results["attempt_in_progress"] != 39 {
			t.Fatalf("many IDs at one deposit: %v", results)
		}
		if got := f.get(d); got.AttemptsUsed != 1 || got.Status != "processing" {
			t.Fatalf("deposit after the race: %+v", got)
		}

		var deposits []*engine.Deposit
		const orgs = 4
		for i := range orgs {
			org, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Org"), H2HEnabled: ptr(true)})
			if err != nil {
				t.Fatal(err)
			}
			f.addWallet(org.Organization.ID, "bkash", "cash_out", fmt.Sprintf("0181000000%d", i))
			for range 10 {
				deposits = append(deposits, f.deposit(org.Organization.ID, "bkash_agent", "500"))
			}
		}
		results = race(len(deposits), func(i int) error {
			_, err := f.submit(deposits[i], "SHARED")
			return err
		})
		if results["ok"] != orgs || results["transaction_id_used"] != len(deposits)-orgs {
			t.Fatalf("one ID at %d deposits of %d organizations: %v", len(deposits), orgs, results)
		}
		owners := map[string]int{}
		for _, dep := range deposits {
			if f.get(dep).AttemptsUsed == 1 {
				owners[dep.OrganizationID]++
			}
		}
		for org, k := range owners {
			if k != 1 {
				t.Fatalf("%d deposits of %s own the ID", k, org)
			}
		}
		if len(owners) != orgs {
			t.Fatalf("the ID is held in %d organizations, want %d", len(owners), orgs)
		}
	})
}

// race runs fn n times at once and counts the outcomes by error code.
func race(n int, fn func(i int) error) map[string]int {
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			err := fn(i)
			key := "ok"
			if err != nil {
				key = engine.ErrorCode(err)
			}
			mu.Lock()
			counts[key]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return counts
}

// TestRestartBetweenQueueAndProcess queues an attempt, restarts the engine
// over the same database, and shows the attempt resolves afterwards.
func TestRestartBetweenQueueAndProcess(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.provider.pay(f.payment(d, "TX1"))
		f.mustSubmit(d, "TX1")
		if err := f.store.Close(); err != nil {
			t.Fatal(err)
		}
		f.open()
		if n := f.process(); n != 1 {
			t.Fatalf("after restart processed %d, want 1", n)
		}
		wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
	})
}

// TestLeaseTakeover: a worker that claimed an attempt and died leaves it
// leased; once the lease runs out another worker resolves it, and the dead
// worker's late answer changes nothing.
func TestLeaseTakeover(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.provider.pay(f.payment(d, "TX1"))
		f.mustSubmit(d, "TX1")

		stuck := make(chan struct{})
		release := make(chan struct{})
		f.provider.setLookup(func(req engine.LookupRequest) (*engine.ProviderTransaction, error) {
			close(stuck)
			<-release
			return nil, errors.New("connection reset")
		})
		done := make(chan struct{})
		go func() {
			defer close(done)
			f.eng.ProcessAttempts(f.ctx) // the first worker hangs in the lookup
		}()
		<-stuck
		f.provider.setLookup(nil)

		second, err := engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring})
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := second.ProcessAttempts(f.ctx); n != 0 {
			t.Fatalf("claimed %d while leased", n)
		}
		f.clock.Add(time.Minute)
		if n, err := second.ProcessAttempts(f.ctx); n != 1 || err != nil {
			t.Fatalf("after the lease: claimed %d, %v", n, err)
		}
		wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
		close(release)
		<-done
		wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
		if b := f.balances(f.org.ID); !b["available"].Equal(decimal.RequireFromString("490.50")) {
			t.Fatalf("credited %v, want exactly one credit of 490.50", b["available"])
		}
	})
}
