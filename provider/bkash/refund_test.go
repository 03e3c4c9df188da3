package bkash_test

import (
	"context"
	"net/http"
	"testing"
	"time"

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
