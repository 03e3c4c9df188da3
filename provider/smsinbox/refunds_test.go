package smsinbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// paid is a deposit of amount paid by 01712345678 (cashOut's payer) and
// proven by its SMS.
func (f *fixture) paid(amount, balance, txID string) *engine.Deposit {
	f.t.Helper()
	d := f.deposit(amount)
	at := f.clock.Now()
	f.submit(d, txID)
	if m := f.ingest(cashOut(amount+".00", balance, txID, at)); m.Status != smsinbox.StatusAccepted {
		f.t.Fatalf("the payment is %s: %s", m.Status, m.Reason)
	}
	f.work()
	f.wantDeposit(d, "succeeded", "")
	return d
}

var refundSeq int

// refund creates a refund of d and has the worker queue it.
func (f *fixture) refund(d *engine.Deposit, amount string) *engine.Refund {
	f.t.Helper()
	refundSeq++
	r, _, err := f.eng.CreateRefund(f.ctx, engine.CreateRefundParams{OrganizationID: f.org, DepositID: d.ID,
		Amount: amount, AmountGiven: true, MerchantID: fmt.Sprintf("refund-%d", refundSeq)})
	if err != nil {
		f.t.Fatal(err)
	}
	f.refundWork()
	return r
}

func (f *fixture) refundWork() {
	f.t.Helper()
	if _, err := f.eng.ProcessRefunds(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

// refundState is the engine's refund's status and reference.
func (f *fixture) refundState(id string) string {
	f.t.Helper()
	r, err := f.eng.GetRefund(f.ctx, f.org, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.Status + " " + r.ProviderReference
}

// A refund is queued for the operator to the number that paid, and is
// completed by the debit SMS of its exact send only: a forger who knows
// the balance (every message below is accepted) completes it with no
// send that differs in amount, recipient or time, nor with a held one.
func TestForgedSendCompletesNoRefund(t *testing.T) {
	onBothStores(t, func(t *testing.T, f *fixture) {
		f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
		d := f.paid("500", "10,500.00", "PAY0000001")
		f.clock.Add(2 * time.Minute)
		queuedAt := f.clock.Now()
		r := f.refund(d, "200")
		if got := f.payout(r.ID); got != "queued" {
			t.Fatalf("the refund is %s in the inbox", got)
		}
		q, _ := f.inbox.ListPayouts(f.ctx, smsinbox.ListPayoutsParams{OrganizationID: f.org, Status: smsinbox.PayoutQueued})
		if len(q) != 1 || !q[0].IsRefund() || q[0].DepositID != d.ID || q[0].Account != "01712345678" || q[0].Method != "bkash" {
			t.Fatalf("queue %+v", q)
		}
		if _, err := f.inbox.GetPayout(f.ctx, r.ID); !errors.Is(err, engine.ErrPayoutNotFound) {
			t.Fatalf("a refund read as a payout: %v", err)
		}
		f.clock.Add(time.Minute)
		for _, c := range []struct {
			name   string
			in     smsinbox.Incoming
			status string
		}{
			{"wrong amount", cashInAt("199.00", "01712345678", "10,301.00", "RFF0000001", queuedAt), smsinbox.StatusAccepted},
			{"wrong recipient", cashInAt("200.00", "01712345679", "10,101.00", "RFF0000002", queuedAt), smsinbox.StatusAccepted},
			{"sent before the refund was queued", cashInAt("200.00", "01712345678", "9,901.00", "RFF0000003", queuedAt.Add(-time.Minute)), smsinbox.StatusAccepted},
			{"held (its balance does not follow)", cashInAt("200.00", "01712345678", "1,000.00", "RFF0000004", queuedAt), smsinbox.StatusHeld},
		} {
			wantStatus(t, f.ingest(c.in), c.status)
			f.refundWork()
			if got := f.payout(r.ID); got != "queued" {
				t.Fatalf("%s: the refund is %s", c.name, got)
			}
			if got := f.refundState(r.ID); got != "processing " {
				t.Fatalf("%s: the engine's refund is %s", c.name, got)
			}
		}
		wantStatus(t, f.ingest(cashInAt("200.00", "01712345678", "9,701.00", "RFS0000005", queuedAt)), smsinbox.StatusAccepted)
		f.refundWork()
		if got := f.refundState(r.ID); got != "succeeded RFS0000005" {
			t.Fatalf("the exact send left the refund %s", got)
		}
		if a := f.audits(r.ID); len(a) != 1 || a[0].Action != smsinbox.AuditRefundComplete || a[0].Details["deposit_id"] != d.ID {
			t.Fatalf("audit %+v", a)
		}
	})
}

// One send that fits a queued payout and a queued refund alike completes
// neither: which one was sent is the operator's to say.
func TestSendFittingAPayoutAndARefundCompletesNeither(t *testing.T) {
	f := newFixture(t)
	f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
	if _, err := f.inbox.Heartbeat(f.ctx, f.device); err != nil {
		t.Fatal(err)
	}
	f.anchor("10000")
	d := f.paid("500", "10,500.00", "PAY0000001")
	r := f.refund(d, "200")
	f.queue("wd_1", "bkash", "01712345678", "200")
	wantStatus(t, f.ingest(cashIn("200.00", "01712345678", "10,300.00", "RFS0000001")), smsinbox.StatusAccepted)
	if a, b := f.payout(r.ID), f.payout("wd_1"); a != "queued" || b != "queued" {
		t.Fatalf("refund %s, payout %s", a, b)
	}
	// The operator says which: the refund.
	if _, err := f.inbox.CompletePayout(engine.WithActor(f.ctx, "ops"), r.ID, "RFS0000001"); err != nil {
		t.Fatal(err)
	}
	f.refundWork()
	if got := f.refundState(r.ID); got != "succeeded RFS0000001" {
		t.Fatalf("the operator's completion left the refund %s", got)
	}
}

// Two devices each posting many copies of a send that fits one refund, at
// once, on both stores: the refund is completed once, by one of them, and
// the deposit's totals and the balance count it once.
func TestOneSMSCompletesOneRefundConcurrently(t *testing.T) {
	onBothStores(t, func(t *testing.T, f *fixture) {
		f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
		other := f.addWallet("bkash", "01822222222")
		creds, err := f.inbox.AddDevice(f.ctx, smsinbox.AddDeviceParams{OrganizationID: f.org, Name: "phone 2", WalletIDs: []string{other.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.inbox.Anchor(f.ctx, f.org, other.ID, decimal.RequireFromString("20000")); err != nil {
			t.Fatal(err)
		}
		d := f.paid("500", "10,500.00", "PAY0000001")
		before, err := f.eng.GetBalance(f.ctx, f.org)
		if err != nil {
			t.Fatal(err)
		}
		r := f.refund(d, "200")
		sends := []struct {
			dev *smsinbox.Device
			in  smsinbox.Incoming
		}{
			{f.device, cashIn("200.00", "01712345678", "10,300.00", "RFS0000001")},
			{creds.Device, cashIn("200.00", "01712345678", "19,800.00", "RFS0000002")},
		}
		var wg sync.WaitGroup
		for i := range 16 {
			s := sends[i%2]
			wg.Go(func() {
				if _, _, err := f.inbox.Ingest(f.ctx, s.dev, s.in); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got := f.payout(r.ID)
		if got != "succeeded RFS0000001" && got != "succeeded RFS0000002" {
			t.Fatalf("the refund is %s", got)
		}
		f.refundWork()
		if state := f.refundState(r.ID); state != got {
			t.Fatalf("the engine's refund is %s, the inbox's %s", state, got)
		}
		if n := len(f.audits(r.ID)); n != 1 {
			t.Fatalf("%d audit entries for one refund", n)
		}
		after, err := f.eng.GetBalance(f.ctx, f.org)
		if err != nil {
			t.Fatal(err)
		}
		if !after.Available.Equal(before.Available.Sub(decimal.NewFromInt(200))) || !after.Held.Equal(before.Held) {
			t.Fatalf("balance %+v after one refund of 200 from %+v", after, before)
		}
		dep, err := f.eng.GetDeposit(f.ctx, f.org, d.ID)
		if err != nil || !dep.RefundedAmount.Equal(decimal.NewFromInt(200)) || !dep.RefundReserved.Equal(decimal.NewFromInt(200)) {
			t.Fatalf("deposit refunded %s reserved %s, %v", dep.RefundedAmount, dep.RefundReserved, err)
		}
	})
}

// A debit accepted by a re-synchronization over a gap (a patient forger's
// run may be) only matches a refund, even where SMS complete payouts: the
// engine sees it processing until the operator confirms.
func TestResyncedDebitOnlyMatchesARefund(t *testing.T) {
	f := newFixture(t)
	f.settings(smsinbox.SettingsUpdate{PayoutSMSConfirm: ptr(false)})
	if _, err := f.inbox.Heartbeat(f.ctx, f.device); err != nil {
		t.Fatal(err)
	}
	f.anchor("10000")
	d := f.paid("500", "10,500.00", "PAY0000001")
	r := f.refund(d, "500")
	f.clock.Add(time.Minute)
	at := f.clock.Now()
	f.ingest(cashOut("100.00", "40,100.00", "FRG0000001", at))
	f.clock.Add(6 * time.Minute)
	f.ingest(cashOut("100.00", "40,200.00", "FRG0000002", at))
	f.clock.Add(6 * time.Minute)
	wantStatus(t, f.ingest(cashInAt("500.00", "01712345678", "39,700.00", "FRG0000003", at)), smsinbox.StatusAccepted)
	if got := f.payout(r.ID); got != "matched FRG0000003" {
		t.Fatalf("a re-synchronized send left the refund %s", got)
	}
	f.refundWork()
	if got := f.refundState(r.ID); got != "processing " {
		t.Fatalf("the engine's refund is %s before the operator confirmed", got)
	}
	if _, err := f.inbox.ConfirmPayout(engine.WithActor(f.ctx, "ops"), r.ID); err != nil {
		t.Fatal(err)
	}
	f.refundWork()
	if got := f.refundState(r.ID); got != "succeeded FRG0000003" {
		t.Fatalf("after confirmation the refund is %s", got)
	}
	f.wantDeposit(d, "refunded", "")
}

// The operator fails a refund: the engine releases its hold; a refund's
// key asked by another organization is not found.
func TestOperatorFailsARefund(t *testing.T) {
	f := newFixture(t)
	if _, err := f.inbox.Heartbeat(f.ctx, f.device); err != nil {
		t.Fatal(err)
	}
	f.anchor("10000")
	d := f.paid("500", "10,500.00", "PAY0000001")
	r := f.refund(d, "200")
	req := engine.RefundRequest{IdempotencyKey: r.ID, OrganizationID: f.otherOrg()}
	if _, err := f.inbox.GetRefund(f.ctx, req); !errors.Is(err, engine.ErrRefundNotFound) {
		t.Fatalf("another organization's refund: %v", err)
	}
	if _, err := f.inbox.FailPayout(engine.WithActor(f.ctx, "ops"), r.ID, "number closed"); err != nil {
		t.Fatal(err)
	}
	f.refundWork()
	if got := f.refundState(r.ID); got != "failed " {
		t.Fatalf("the refund is %s", got)
	}
	dep, _ := f.eng.GetDeposit(context.Background(), f.org, d.ID)
	if !dep.RefundReserved.IsZero() {
		t.Fatalf("a failed refund still reserves %s", dep.RefundReserved)
	}
}
