package bkash_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash/bkashsim"
)

// TestRefunds: a deposit paid on bKash's checkout is refunded in part and
// then in full through bKash's refund; a refund whose answer is lost is
// found by its sku on the next try and made once; bKash down at the send
// retries.
func TestRefunds(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		orgID := org.Organization.ID
		ctx := context.Background()
		d, pid := in.redirect(orgID, "1000")
		cb, _ := w.sim.Approve(pid, "01712345678")
		in.visit(cb)
		in.work()
		if got := in.deposit(orgID, d.ID); got.Status != engine.StatusSucceeded {
			t.Fatalf("deposit %s", got.Status)
		}
		pay, _ := w.sim.Payment(pid)
		refund := func(amount string) *engine.Refund {
			t.Helper()
			r, _, err := in.Engine.CreateRefund(ctx, engine.CreateRefundParams{OrganizationID: orgID, DepositID: d.ID,
				Amount: amount, AmountGiven: amount != "", Reason: "returned goods", MerchantID: "R-" + engine.RandomToken(4)})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		settle := func(r *engine.Refund, want string) {
			t.Helper()
			for range 6 {
				in.work()
				got, err := in.Engine.GetRefund(ctx, orgID, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status == want {
					return
				}
				w.clock.Add(time.Minute)
			}
			got, _ := in.Engine.GetRefund(ctx, orgID, r.ID)
			t.Fatalf("refund %s %s (%s), want %s", got.Status, got.FailureCode, got.FailureReason, want)
		}
		// Partial, its answer lost after bKash made it.
		w.sim.Fault("refund", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusBadGateway})
		r1 := refund("300")
		settle(r1, engine.RefundSucceeded)
		// Partial, bKash down at first.
		w.sim.Fault("refund", bkashsim.Fault{HTTPStatus: http.StatusServiceUnavailable, Times: 2})
		r2 := refund("200")
		settle(r2, engine.RefundSucceeded)
		// The rest.
		r3 := refund("")
		settle(r3, engine.RefundSucceeded)
		trx, _ := w.sim.Transaction(pay.TrxID)
		if len(trx.Refunds) != 3 {
			t.Fatalf("bKash made %d refunds, want 3", len(trx.Refunds))
		}
		for i, want := range []string{"300", "200", "500"} {
			if trx.Refunds[i].Amount.String() != want || trx.Refunds[i].SKU == "" {
				t.Fatalf("refund %d at bKash: %s sku %q", i, trx.Refunds[i].Amount, trx.Refunds[i].SKU)
			}
		}
		if got := in.deposit(orgID, d.ID); got.Status != engine.StatusRefunded {
			t.Fatalf("deposit %s after a full refund", got.Status)
		}
	})
}

// TestRefundsRacedAndRefused: refunds of one payment sent at once by two
// payd instances, some of whose answers are lost, are each made once
// (bKash's refund status lists refunds without the sku sent, so payd sends
// them one at a time and finds a lost one as the one no row names); an
// eleventh refund bKash refuses fails and gives the hold back.
func TestRefundsRacedAndRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		a, b := w.instance(open()), w.instance(open())
		org := a.org()
		orgID := org.Organization.ID
		ctx := context.Background()
		d, pid := a.redirect(orgID, "200")
		cb, _ := w.sim.Approve(pid, "01712345678")
		a.visit(cb)
		a.work()
		var refunds []*engine.Refund
		for range 10 {
			r, _, err := a.Engine.CreateRefund(ctx, engine.CreateRefundParams{OrganizationID: orgID, DepositID: d.ID,
				Amount: "15", AmountGiven: true, MerchantID: "RR-" + engine.RandomToken(4)})
			if err != nil {
				t.Fatal(err)
			}
			refunds = append(refunds, r)
		}
		w.sim.Fault("refund", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusBadGateway, Times: 3})
		for range 12 {
			var wg sync.WaitGroup
			for _, in := range []*instance{a, b} {
				wg.Go(func() {
					if _, err := in.Engine.ProcessRefunds(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			w.clock.Add(10 * time.Minute)
		}
		pay, _ := w.sim.Payment(pid)
		trx, _ := w.sim.Transaction(pay.TrxID)
		if len(trx.Refunds) != 10 {
			t.Fatalf("bKash made %d refunds for 10", len(trx.Refunds))
		}
		for _, r := range refunds {
			if got, _ := a.Engine.GetRefund(ctx, orgID, r.ID); got.Status != engine.RefundSucceeded {
				t.Fatalf("refund %s: %s %s", r.ID, got.Status, got.FailureReason)
			}
		}
		// The eleventh: bKash takes ten at most.
		r, _, err := a.Engine.CreateRefund(ctx, engine.CreateRefundParams{OrganizationID: orgID, DepositID: d.ID,
			Amount: "10", AmountGiven: true, MerchantID: "RR-11"})
		if err != nil {
			t.Fatal(err)
		}
		a.work()
		got, _ := a.Engine.GetRefund(ctx, orgID, r.ID)
		if got.Status != engine.RefundFailed || !strings.Contains(got.FailureReason, bkashsim.CodeCannotReverse) {
			t.Fatalf("eleventh refund: %s %q", got.Status, got.FailureReason)
		}
		bal, _ := a.Engine.GetBalance(ctx, orgID)
		if !bal.Available.Equal(decimal.RequireFromString("50")) || !bal.Held.IsZero() {
			t.Fatalf("balance %s held %s, want 50 and 0", bal.Available, bal.Held)
		}
	})
}

// TestRefundNeverReachedBkash: a refund whose send never reached bKash (a
// 502 before the work) and whose refund status answers an error code (bKash
// publishes none for "no refund yet") is sent again once it had time to be
// listed, and made once; before then, nothing is sent again.
func TestRefundNeverReachedBkash(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		orgID := org.Organization.ID
		ctx := context.Background()
		d, pid := in.redirect(orgID, "500")
		cb, _ := w.sim.Approve(pid, "01712345678")
		in.visit(cb)
		in.work()
		w.sim.Fault("refund", bkashsim.Fault{HTTPStatus: http.StatusBadGateway})
		w.sim.Fault("refund_status", bkashsim.Fault{Code: bkashsim.CodeInvalidTrxID, Times: 10})
		r, _, err := in.Engine.CreateRefund(ctx, engine.CreateRefundParams{OrganizationID: orgID, DepositID: d.ID, MerchantID: "NR-1"})
		if err != nil {
			t.Fatal(err)
		}
		in.work() // sent: lost
		for range 3 {
			w.clock.Add(30 * time.Second)
			in.work()
		}
		if n := w.sim.Calls("refund"); n != 1 {
			t.Fatalf("%d sends before the settle time, want 1", n)
		}
		for range 4 {
			w.clock.Add(time.Minute)
			in.work()
		}
		got, _ := in.Engine.GetRefund(ctx, orgID, r.ID)
		pay, _ := w.sim.Payment(pid)
		trx, _ := w.sim.Transaction(pay.TrxID)
		if got.Status != engine.RefundSucceeded || len(trx.Refunds) != 1 || w.sim.Calls("refund") != 2 {
			t.Fatalf("refund %s, bKash made %d in %d sends; want succeeded, 1 in 2", got.Status, len(trx.Refunds), w.sim.Calls("refund"))
		}
	})
}
