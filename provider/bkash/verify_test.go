package bkash_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash/bkashsim"
)

// TestMerchantVerifiedBySearch: a bkash_merchant deposit's TrxID is
// searched at bKash and held to the contract's rules, each failure with
// its code; bKash unreachable delays the attempt.
func TestMerchantVerifiedBySearch(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		orgID := org.Organization.ID
		ctx := context.Background()
		if _, err := in.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: orgID, Channel: "bkash",
			Operation: engine.OperationMakePayment, Phone: app1.ShortCode, Name: "merchant"}); err != nil {
			t.Fatal(err)
		}
		other := bkashsim.App{AppKey: "app-key-two", AppSecret: "s2", Username: "u2", Password: "p2", ShortCode: "01822222222"}
		w.sim.AddApp(other)
		payer := "01712345678"
		newDeposit := func() *engine.Deposit {
			t.Helper()
			w.clock.Add(time.Second)
			d, _, err := in.Engine.CreateDeposit(ctx, engine.CreateDepositParams{OrganizationID: orgID, CheckoutMode: "h2h",
				Amount: "500", PaymentMethod: "bkash_merchant", RedirectURL: "https://shop.example/r",
				MerchantID: "V-" + engine.RandomToken(4), PayerPhone: payer})
			if err != nil {
				t.Fatal(err)
			}
			w.clock.Add(time.Second)
			return d
		}
		pay := func(app, trx, amount, from, status string, at time.Time) {
			w.sim.AddTransaction(app, bkashsim.Transaction{TrxID: trx, Amount: decimal.RequireFromString(amount),
				Payer: from, Status: status, Completed: at})
		}
		submit := func(d *engine.Deposit, trx string) *engine.Deposit {
			t.Helper()
			if _, err := in.Engine.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: orgID, DepositID: d.ID, TransactionID: trx}); err != nil {
				t.Fatal(err)
			}
			in.work()
			return in.deposit(orgID, d.ID)
		}
		// Paid as asked: succeeds.
		ok := newDeposit()
		pay(app1.AppKey, "BKM0000001", "500", payer, "Completed", w.clock.Now())
		if got := submit(ok, "BKM0000001"); got.Status != engine.StatusSucceeded {
			t.Fatalf("paid as asked: %s %s", got.Status, got.FailureCode)
		}
		before := newDeposit()
		for _, c := range []struct {
			name, trx, app, amount, from, status string
			at                                   time.Time
			code                                 string
		}{
			{"another amount", "BKM0000002", app1.AppKey, "499", payer, "Completed", w.clock.Now(), engine.FailureAmountMismatch},
			{"another payer", "BKM0000003", app1.AppKey, "500", "01798765432", "Completed", w.clock.Now(), engine.FailurePayerMismatch},
			{"another merchant's", "BKM0000004", other.AppKey, "500", payer, "Completed", w.clock.Now(), engine.FailureTransactionNotFound},
			{"not completed", "BKM0000005", app1.AppKey, "500", payer, "Failed", w.clock.Now(), engine.FailurePaymentNotCompleted},
			{"before the deposit", "BKM0000006", app1.AppKey, "500", payer, "Completed", before.CreatedAt.Add(-time.Hour), engine.FailureOutsideWindow},
			{"unknown", "BKM0000007", "", "", "", "", time.Time{}, engine.FailureTransactionNotFound},
		} {
			d := newDeposit()
			if c.app != "" {
				pay(c.app, c.trx, c.amount, c.from, c.status, c.at)
			}
			got := submit(d, c.trx)
			if got.FailureCode != c.code {
				t.Errorf("%s: %s %q, want %s", c.name, got.Status, got.FailureCode, c.code)
			}
		}
		// Used before: refused at submission.
		used := newDeposit()
		_, err := in.Engine.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: orgID, DepositID: used.ID, TransactionID: "BKM0000001"})
		wantCode(t, err, engine.CodeTransactionIDUsed)

		// bKash unreachable: delayed, then verified when it answers.
		late := newDeposit()
		pay(app1.AppKey, "BKM0000008", "500", payer, "Completed", w.clock.Now())
		w.sim.Fault("search", bkashsim.Fault{HTTPStatus: http.StatusServiceUnavailable})
		v, err := in.Engine.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: orgID, DepositID: late.ID, TransactionID: "BKM0000008"})
		if err != nil {
			t.Fatal(err)
		}
		in.work()
		a, err := in.Engine.GetAttempt(ctx, orgID, v.Attempt.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Status != engine.AttemptDelayed {
			t.Fatalf("bKash down: attempt %s %s", a.Status, a.FailureCode)
		}
		w.clock.Add(time.Minute)
		in.work()
		if got := in.deposit(orgID, late.ID); got.Status != engine.StatusSucceeded {
			t.Fatalf("after bKash answered: %s %s", got.Status, got.FailureCode)
		}
	})
}
