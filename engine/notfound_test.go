package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// attempts returns a deposit's attempts.
func (f *fixture) attempts(d *engine.Deposit) []*engine.Attempt {
	f.t.Helper()
	as, err := f.eng.ListAttempts(f.ctx, d.OrganizationID, d.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return as
}

func (f *fixture) recheck(d *engine.Deposit, txID string) {
	f.t.Helper()
	if err := f.eng.RecheckTransaction(f.ctx, d.OrganizationID, d.Channel, txID); err != nil {
		f.t.Fatal(err)
	}
}

func wantAttempt(t *testing.T, a *engine.Attempt, status, code string) {
	t.Helper()
	if a.Status != status || a.FailureCode != code {
		t.Fatalf("attempt %s is %s %q, want %s %q", a.TransactionID, a.Status, a.FailureCode, status, code)
	}
}

// A provider that answers for the money network (the sandbox, a wallet's
// API) knows an ID it does not show is wrong: the attempt fails at the
// first lookup, and the payer submits the right ID at once. It failed
// before: the attempt was delayed until 15 minutes past the deadline and
// the right ID was refused attempt_in_progress.
func TestNotFoundIsFinal(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.provider.pay(f.payment(d, "TXRIGHT"))
		f.mustSubmit(d, "TXWR0NG")
		f.process()
		wantState(t, f, d, "pending", "awaiting_reference", 1, "transaction_not_found", true)
		wantAttempt(t, f.attempts(d)[0], "failed", "transaction_not_found")
		if v := f.mustSubmit(d, "txwr0ng"); v.Attempt.Status != "failed" { // idempotent repeat
			t.Fatalf("repeat of the failed ID: %+v", v.Attempt)
		}
		if v := f.mustSubmit(d, "TXRIGHT"); v.Deposit.AttemptsUsed != 2 {
			t.Fatalf("the right ID used %d attempts", v.Deposit.AttemptsUsed)
		}
		f.process()
		wantState(t, f, d, "succeeded", "succeeded", 2, "", false)
		if !f.clock.Now().Equal(t0) {
			t.Fatalf("the clock moved: %s", f.clock.Now())
		}
	})
}

// A LateLearner (an SMS inbox) waits NotFoundGrace after the submission
// for the proof: an SMS within it succeeds the attempt; without one the
// attempt fails exactly at the grace's end, and the payer may go on.
func TestNotFoundGrace(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		t.Run("proof within the grace", func(t *testing.T) {
			f := newFixture(t)
			f.provider.set(func(p *fakeProvider) { p.grace = 2 * time.Minute })
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			f.mustSubmit(d, "TX1")
			f.process()
			a := f.attempts(d)[0]
			if a.Status != "delayed" || !a.NextRunAt.Equal(f.clock.Now().Add(5*time.Second)) {
				t.Fatalf("attempt %s next %s", a.Status, a.NextRunAt)
			}
			_, err := f.submit(d, "TX2")
			wantCode(t, err, "attempt_in_progress")
			f.clock.Add(90 * time.Second)
			f.provider.pay(f.payment(d, "TX1"))
			f.recheck(d, "TX1")
			f.process()
			wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
		})
		t.Run("no proof: fails at the grace's end", func(t *testing.T) {
			f := newFixture(t)
			f.provider.set(func(p *fakeProvider) { p.grace = 2 * time.Minute })
			d := f.deposit(f.org.ID, "bkash_agent", "500")
			submitted := f.clock.Now()
			f.mustSubmit(d, "TX1")
			for f.get(d).Status == engine.StatusProcessing {
				f.process()
				if f.get(d).Status != engine.StatusProcessing {
					break
				}
				a := f.attempts(d)[0]
				if a.NextRunAt.After(submitted.Add(2 * time.Minute)) {
					t.Fatalf("next lookup at %s, after the grace", a.NextRunAt.Sub(submitted))
				}
				f.clock.Set(a.NextRunAt)
			}
			if got := f.clock.Now().Sub(submitted); got != 2*time.Minute {
				t.Fatalf("failed %s after the submission, want 2m0s", got)
			}
			wantState(t, f, d, "pending", "awaiting_reference", 1, "transaction_not_found", true)
			wantAttempt(t, f.attempts(d)[0], "failed", "transaction_not_found")
			f.mustSubmit(d, "TX2")
		})
	})
}

// An SMS accepted after the grace: the failed attempt is reopened while its
// deposit is open, and succeeds it; the payer used no further attempt.
// Before, a finished attempt was left alone and the payment lost.
func TestLatePaymentReopensOpenDeposit(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		f.provider.set(func(p *fakeProvider) { p.grace = 2 * time.Minute })
		other := f.otherOrg()
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.mustSubmit(d, "TX1")
		runUntilResolved(t, f, d)
		wantState(t, f, d, "pending", "awaiting_reference", 1, "transaction_not_found", true)
		f.provider.pay(f.payment(d, "TX1"))

		// Another organization's SMS with the ID is none of this deposit's.
		if err := f.eng.RecheckTransaction(f.ctx, other.ID, "bkash", "TX1"); err != nil {
			t.Fatal(err)
		}
		wantState(t, f, d, "pending", "awaiting_reference", 1, "transaction_not_found", true)

		f.recheck(d, "TX1")
		wantState(t, f, d, "processing", "processing", 1, "transaction_not_found", true)
		wantAttempt(t, f.attempts(d)[0], "processing", "")
		if _, err := f.submit(d, "TX2"); engine.ErrorCode(err) != "attempt_in_progress" {
			t.Fatalf("a new ID while the late payment is checked: %v", err)
		}
		if n := f.process(); n != 1 {
			t.Fatalf("claimed %d", n)
		}
		wantState(t, f, d, "succeeded", "succeeded", 1, "", false)
		wantEvents(t, f, d, "deposit.succeeded")
		if got := f.balances(f.org.ID)["available"]; !got.Equal(decimal.RequireFromString("490.5")) {
			t.Fatalf("available %s, want 490.50", got)
		}
		f.recheck(d, "TX1") // again: finished, left alone
		f.recheck(d, "NOSUCH")
		wantAttempt(t, f.attempts(d)[0], "succeeded", "")
		wantEvents(t, f, d, "deposit.succeeded")
	})
}

// A late SMS for a deposit that is closed, past its deadline, or checking
// another ID changes nothing: the operator credits it.
func TestLatePaymentLeavesClosedDeposit(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		f.provider.set(func(p *fakeProvider) { p.grace = 2 * time.Minute })

		checking := f.deposit(f.org.ID, "bkash_agent", "500")
		pastDeadline := f.deposit(f.org.ID, "bkash_agent", "501")
		failed := f.deposit(f.org.ID, "bkash_agent", "502")
		for _, d := range []*engine.Deposit{checking, pastDeadline, failed} {
			f.mustSubmit(d, "A"+d.ID)
		}
		f.clock.Add(2 * time.Minute)
		f.process()
		f.mustSubmit(checking, "B"+checking.ID) // delayed: another ID being checked
		f.process()
		for _, d := range []*engine.Deposit{checking, pastDeadline, failed} {
			f.provider.pay(f.payment(d, "A"+d.ID))
		}
		f.recheck(checking, "A"+checking.ID)
		wantAttempt(t, f.attempts(checking)[0], "failed", "transaction_not_found")
		wantAttempt(t, f.attempts(checking)[1], "delayed", "")

		f.clock.Set(pastDeadline.ExpiresAt)
		f.recheck(pastDeadline, "A"+pastDeadline.ID)
		wantState(t, f, pastDeadline, "pending", "awaiting_reference", 1, "transaction_not_found", false)
		f.expire()
		f.recheck(failed, "A"+failed.ID)
		wantState(t, f, failed, "failed", "failed", 1, "transaction_not_found", false)
		wantAttempt(t, f.attempts(failed)[0], "failed", "transaction_not_found")
	})
}

// otherOrg creates a second organization with a bKash agent wallet.
func (f *fixture) otherOrg() *engine.Organization {
	f.t.Helper()
	creds, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Other"), H2HEnabled: ptr(true)})
	if err != nil {
		f.t.Fatal(err)
	}
	f.addWallet(creds.Organization.ID, "bkash", "cash_out", "01822222222")
	return creds.Organization
}

func (f *fixture) credit(d *engine.Deposit, txID string) (*engine.LateCredit, error) {
	return f.eng.CreditLatePayment(engine.WithActor(f.ctx, "ops@example"), engine.CreditLatePaymentParams{
		OrganizationID: d.OrganizationID, DepositID: d.ID, TransactionID: txID,
	})
}

// failDeposits submits for each deposit the ID of the same index, which
// the provider does not show, and lets the deadlines pass: they fail.
func (f *fixture) failDeposits(ds []*engine.Deposit, ids ...string) {
	f.t.Helper()
	for i, d := range ds {
		f.mustSubmit(d, ids[i])
	}
	f.process()
	for _, d := range ds {
		if d.ExpiresAt.After(f.clock.Now()) {
			f.clock.Set(d.ExpiresAt)
		}
	}
	f.expire()
	for _, d := range ds {
		wantState(f.t, f, d, "failed", "failed", 1, "transaction_not_found", false)
	}
}

// An operator credits a payment proven after its deposit closed: once, only
// a payment the provider shows and that matches, never with an ID another
// deposit claimed. The deposit keeps its terminal status; the organization
// gets the amount less the fee; the audit log names the operator.
func TestCreditLatePayment(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		mismatched := f.deposit(f.org.ID, "bkash_agent", "600")
		busy := f.deposit(f.org.ID, "bkash_agent", "800")
		f.mustSubmit(busy, "BUSY")
		f.provider.set(func(p *fakeProvider) { p.down = true })
		f.process() // busy stays processing
		f.provider.set(func(p *fakeProvider) { p.down = false })
		f.failDeposits([]*engine.Deposit{d, mismatched}, "LATE1", "LATE2")
		availableBefore := f.balances(f.org.ID)["available"]

		// Not shown by the provider (a forged SMS stays held): refused.
		_, err := f.credit(d, "LATE1")
		wantCode(t, err, "not_found")

		f.provider.pay(f.payment(d, "LATE1"))
		wrong := f.payment(mismatched, "LATE2")
		wrong.Amount = decimal.RequireFromString("599")
		f.provider.pay(wrong)
		_, err = f.credit(mismatched, "LATE2")
		wantCode(t, err, "conflict")
		// d's payment for another deposit: the ID is d's.
		_, err = f.credit(mismatched, "LATE1")
		wantCode(t, err, "transaction_id_used")
		if got := f.balances(f.org.ID)["available"]; !got.Equal(availableBefore) {
			t.Fatalf("refusals moved the balance to %s", got)
		}

		c, err := f.credit(d, "late1")
		if err != nil {
			t.Fatal(err)
		}
		if c.Journal.Kind != engine.JournalLatePayment || c.Attempt.Status != "succeeded" || c.Deposit.Status != "failed" {
			t.Fatalf("credit: journal %s attempt %s deposit %s", c.Journal.Kind, c.Attempt.Status, c.Deposit.Status)
		}
		wantState(t, f, d, "failed", "failed", 1, "transaction_not_found", false)
		wantEvents(t, f, d, "deposit.failed")
		if got := f.balances(f.org.ID)["available"].Sub(availableBefore); !got.Equal(decimal.RequireFromString("490.5")) {
			t.Fatalf("credited %s, want 490.50", got)
		}
		entries, err := f.eng.ListAudit(f.ctx, f.org.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if e := entries[0]; e.Action != engine.AuditLatePaymentCredit || e.Actor != "ops@example" || e.Subject != d.ID ||
			e.Details["provider_transaction_id"] != "LATE1" || e.Details["journal"] != c.Journal.ID {
			t.Fatalf("audit %+v", e)
		}

		// Twice, with the same or another proven payment: refused.
		_, err = f.credit(d, "LATE1")
		wantCode(t, err, "deposit_terminal")
		p := f.payment(d, "LATE3")
		f.provider.pay(p)
		_, err = f.credit(d, "LATE3")
		wantCode(t, err, "deposit_terminal")

		// An ID being checked elsewhere and a deposit checking one.
		f.provider.pay(f.payment(busy, "BUSY"))
		_, err = f.credit(busy, "BUSY")
		wantCode(t, err, "attempt_in_progress")

		// An open deposit whose payer never submitted the right ID succeeds,
		// and the ID is claimed: it serves no other deposit.
		open := f.deposit(f.org.ID, "bkash_agent", "700")
		f.provider.pay(f.payment(open, "NEVERSENT"))
		c, err = f.credit(open, "NEVERSENT")
		if err != nil {
			t.Fatal(err)
		}
		if c.Journal.Kind != engine.JournalDepositCredit {
			t.Fatalf("journal %s", c.Journal.Kind)
		}
		wantState(t, f, open, "succeeded", "succeeded", 0, "", false)
		wantEvents(t, f, open, "deposit.succeeded")
		other := f.deposit(f.org.ID, "bkash_agent", "700")
		_, err = f.submit(other, "NEVERSENT")
		wantCode(t, err, "transaction_id_used")
	})
}

// Operators crediting the same closed deposit at once, with its ID and
// with another proven payment, credit it exactly once.
func TestCreditLatePaymentConcurrent(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.deposit(f.org.ID, "bkash_agent", "500")
		f.failDeposits([]*engine.Deposit{d}, "LATE1")
		f.provider.pay(f.payment(d, "LATE1"))
		f.provider.pay(f.payment(d, "LATE2"))
		before := f.balances(f.org.ID)["available"]
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = f.eng.CreditLatePayment(context.Background(), engine.CreditLatePaymentParams{
					OrganizationID: d.OrganizationID, DepositID: d.ID, TransactionID: []string{"LATE1", "LATE2"}[i%2],
				})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch engine.ErrorCode(err) {
			case "internal_error":
				if err == nil {
					ok++
					continue
				}
				t.Fatal(err)
			case "deposit_terminal":
			default:
				t.Fatalf("unexpected %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d credits succeeded, want 1", ok)
		}
		if got := f.balances(f.org.ID)["available"].Sub(before); !got.Equal(decimal.RequireFromString("490.5")) {
			t.Fatalf("credited %s, want 490.50 once", got)
		}
	})
}
