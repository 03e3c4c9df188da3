package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// newOrg creates an H2H organization without fees and with a bKash agent
// wallet of phone.
func (f *fixture) newOrg(name, phone string) string {
	f.t.Helper()
	creds, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr(name), H2HEnabled: ptr(true)})
	if err != nil {
		f.t.Fatal(err)
	}
	f.addWallet(creds.Organization.ID, "bkash", "cash_out", phone)
	return creds.Organization.ID
}

// payingEveryone makes the provider show any ID as a payment that matches
// the deposit asking (its recipient and payer, 500 BDT, a minute after t0):
// a provider that shows one payment to several organizations, so that only
// the store's constraint stands between the payment and two credits.
func payingEveryone(req engine.LookupRequest) *engine.ProviderTransaction {
	return &engine.ProviderTransaction{
		Channel: req.Channel, TransactionID: req.TransactionID, Type: engine.TransactionCashOut,
		Status: engine.TransactionCompleted, Amount: decimal.RequireFromString("500"), Currency: "BDT",
		PayerPhone: req.PayerPhone, RecipientPhone: req.RecipientPhone, CompletedAt: t0.Add(time.Minute),
	}
}

// Organization B submits, first, the transaction ID of a payment made to
// organization A's wallet. Before, any submission held the ID in every
// organization: A's payer got 409 transaction_id_used and the payment A
// received was never credited. Now B's submission holds the ID in B only;
// once the ID has succeeded A's deposit it is used everywhere.
func TestTransactionIDSquattingAcrossOrganizations(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		b := f.newOrg("Squatter", "01822222222")
		c := f.newOrg("Bystander", "01833333333")
		dA := f.deposit(f.org.ID, "bkash_agent", "500")
		f.provider.pay(f.payment(dA, "PAYA1"))
		dB := f.deposit(b, "bkash_agent", "500")
		f.mustSubmit(dB, "PAYA1")

		if v := f.mustSubmit(dA, "paya1"); v.Attempt.Status != "processing" || v.Deposit.AttemptsUsed != 1 {
			t.Fatalf("A's payer's submission: attempt %s, %d used", v.Attempt.Status, v.Deposit.AttemptsUsed)
		}
		f.process()
		wantState(t, f, dA, "succeeded", "succeeded", 1, "", false)
		wantState(t, f, dB, "pending", "awaiting_reference", 1, "recipient_mismatch", true)
		if got := f.balances(f.org.ID)["available"]; !got.Equal(decimal.RequireFromString("490.5")) {
			t.Fatalf("A's available is %s, want 490.50", got)
		}
		if got := f.balances(b)["available"]; !got.IsZero() {
			t.Fatalf("B's available is %s", got)
		}

		// Within an organization a submitted ID stays used; across them a
		// succeeded one is.
		for name, d := range map[string]*engine.Deposit{
			"A, another deposit":           f.deposit(f.org.ID, "bkash_agent", "500"),
			"B, which submitted it":        f.deposit(b, "bkash_agent", "500"),
			"C, after it succeeded A's":    f.deposit(c, "bkash_agent", "500"),
			"B, the deposit that tried it": nil,
		} {
			if d == nil {
				if v := f.mustSubmit(dB, "PAYA1"); v.Attempt.Status != "failed" { // a repeat
					t.Fatalf("%s: %+v", name, v.Attempt)
				}
				continue
			}
			_, err := f.submit(d, "PAYA1")
			if engine.ErrorCode(err) != "transaction_id_used" {
				t.Fatalf("%s: %v, want transaction_id_used", name, err)
			}
			wantState(t, f, d, "pending", "awaiting_reference", 0, "", true)
		}
	})
}

// The late credit of a payment A's wallet received is not blocked by other
// organizations' submissions of its ID (one failed, one still checking),
// and a success elsewhere afterwards loses to it on the constraint: the
// attempt fails transaction_id_used and credits nothing.
func TestLateCreditAfterSquatting(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		b := f.newOrg("Squatter", "01822222222")
		c := f.newOrg("Other", "01833333333")
		dA := f.deposit(f.org.ID, "bkash_agent", "500")
		dB := f.deposit(b, "bkash_agent", "500")
		dC := f.deposit(c, "bkash_agent", "500")
		f.provider.pay(f.payment(dA, "LATEA"))
		f.mustSubmit(dB, "LATEA")
		f.process()
		wantState(t, f, dB, "pending", "awaiting_reference", 1, "recipient_mismatch", true)
		f.mustSubmit(dC, "LATEA") // still being checked when A's credit comes
		f.clock.Set(dA.ExpiresAt)
		f.expire()
		wantState(t, f, dA, "expired", "expired", 0, "", false)

		lc, err := f.credit(dA, "LATEA")
		if err != nil {
			t.Fatalf("A's late credit: %v", err)
		}
		if lc.Journal.Kind != engine.JournalLatePayment || lc.Attempt.Status != "succeeded" {
			t.Fatalf("credit: journal %s attempt %s", lc.Journal.Kind, lc.Attempt.Status)
		}
		if got := f.balances(f.org.ID)["available"]; !got.Equal(decimal.RequireFromString("490.5")) {
			t.Fatalf("A's available is %s, want 490.50", got)
		}

		f.provider.setLookup(func(req engine.LookupRequest) (*engine.ProviderTransaction, error) {
			return payingEveryone(req), nil
		})
		f.process()
		wantState(t, f, dC, "failed", "failed", 1, "transaction_id_used", false) // its deadline passed
		wantAttempt(t, f.attempts(dC)[0], "failed", "transaction_id_used")
		wantEvents(t, f, dC, "deposit.failed")
		for _, org := range []string{b, c} {
			if got := f.balances(org)["available"]; !got.IsZero() {
				t.Fatalf("%s's available is %s", org, got)
			}
		}
		// B's operator cannot credit it either.
		_, err = f.credit(dB, "LATEA")
		wantCode(t, err, "transaction_id_used")
	})
}

// Organizations that each submitted one ID race, in several engines (as
// processes) and workers, to succeed it: the provider shows the payment
// to all of them, and every lookup is answered at once. Exactly one
// deposit succeeds and is credited; the others' attempts fail
// transaction_id_used, their deposits open for another ID; every ledger
// stays balanced. In one engine whose workers check them all at once,
// their verdicts share transactions (group commit), so the successes of
// the one ID meet in one transaction.
func TestTransactionIDRaceAcrossOrganizations(t *testing.T) {
	for _, shape := range []struct {
		name                string
		engines, concurrent int
	}{{"three engines", 3, 2}, {"one engine", 1, 6}} {
		t.Run(shape.name, func(t *testing.T) { raceTransactionID(t, shape.engines, shape.concurrent) })
	}
}

func raceTransactionID(t *testing.T, engineCount, concurrent int) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		const n = 6
		f := newFixture(t)
		orgs := make([]string, n)
		deposits := make([]*engine.Deposit, n)
		for i := range n {
			orgs[i] = f.newOrg(fmt.Sprintf("Org %d", i), fmt.Sprintf("0182000000%d", i))
			deposits[i] = f.deposit(orgs[i], "bkash_agent", "500")
			f.mustSubmit(deposits[i], "RACE1")
		}
		arrived, release := make(chan struct{}, n), make(chan struct{})
		f.provider.setLookup(func(req engine.LookupRequest) (*engine.ProviderTransaction, error) {
			arrived <- struct{}{}
			<-release
			return payingEveryone(req), nil
		})
		engines := make([]*engine.Engine, engineCount)
		for i := range engines {
			e, err := engine.New(engine.Config{
				Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring,
				ClaimBatch: concurrent, WorkerConcurrency: concurrent,
			})
			if err != nil {
				t.Fatal(err)
			}
			engines[i] = e
		}
		var wg sync.WaitGroup
		for _, e := range engines {
			wg.Go(func() {
				if _, err := e.ProcessAttempts(f.ctx); err != nil {
					t.Errorf("ProcessAttempts: %v", err)
				}
			})
		}
		timeout := time.After(10 * time.Second)
		for range n {
			select {
			case <-arrived:
			case <-timeout:
				close(release)
				wg.Wait()
				t.Fatal("the lookups did not all start")
			}
		}
		close(release)
		wg.Wait()

		won := 0
		credited := decimal.Zero
		for i, d := range deposits {
			got := f.get(d)
			switch got.Status {
			case "succeeded":
				won++
				wantEvents(t, f, d, "deposit.succeeded")
			default:
				wantState(t, f, d, "pending", "awaiting_reference", 1, "transaction_id_used", true)
				wantAttempt(t, f.attempts(d)[0], "failed", "transaction_id_used")
				wantEvents(t, f, d)
			}
			credited = credited.Add(f.balances(orgs[i])["available"])
			if diff := f.ledgerDifferences(orgs[i]); len(diff) > 0 {
				t.Errorf("org %d's ledger: %+v", i, diff)
			}
		}
		if won != 1 || !credited.Equal(decimal.RequireFromString("500")) {
			t.Fatalf("%d deposits succeeded, %s credited; want 1 and 500", won, credited)
		}
	})
}
