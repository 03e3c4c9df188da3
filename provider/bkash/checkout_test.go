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
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/bkash/bkashsim"
)

// TestRedirectPaid: the payer pays on bKash's page and comes back; payd
// executes once and the deposit succeeds with bKash's trxID.
func TestRedirectPaid(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		d, pid := in.redirect(org.Organization.ID, "500")
		cb, err := w.sim.Approve(pid, "01712345678")
		if err != nil {
			t.Fatal(err)
		}
		if got := in.visit(cb); got != http.StatusSeeOther {
			t.Fatalf("callback answered %d, want 303 to the merchant's page", got)
		}
		in.work()
		pay, _ := w.sim.Payment(pid)
		got := in.deposit(org.Organization.ID, d.ID)
		if got.Status != engine.StatusSucceeded || got.ProviderTransactionID != pay.TrxID || pay.Invoice != d.ID {
			t.Fatalf("deposit %s with %q (bKash's %q, invoice %q)", got.Status, got.ProviderTransactionID, pay.TrxID, pay.Invoice)
		}
		if n := w.sim.Calls("execute"); n != 1 {
			t.Fatalf("%d executes", n)
		}
	})
}

// TestCallbackReplayedAndRaced: the same success callback sent at once by
// many and then replayed executes once and succeeds the deposit once.
func TestCallbackReplayedAndRaced(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		store := open()
		a, b := w.instance(store), w.instance(store)
		org := a.org()
		d, pid := a.redirect(org.Organization.ID, "750")
		cb, _ := w.sim.Approve(pid, "01712345678")
		var wg sync.WaitGroup
		for i := range 12 {
			in := a
			if i%2 == 1 {
				in = b
			}
			wg.Go(func() { in.visit(in.onInstance(cb)) })
		}
		wg.Wait()
		a.work()
		b.work()
		for range 3 {
			a.visit(cb)
		}
		a.work()
		if n := w.sim.Calls("execute"); n != 1 {
			t.Fatalf("%d executes, want 1", n)
		}
		if got := a.deposit(org.Organization.ID, d.ID); got.Status != engine.StatusSucceeded {
			t.Fatalf("deposit %s", got.Status)
		}
		bal, err := a.Engine.GetBalance(context.Background(), org.Organization.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !bal.Available.Equal(decimal.RequireFromString("750")) {
			t.Fatalf("balance %s, want 750 credited once", bal.Available)
		}
	})
}

// TestCallbackForged: callbacks nobody at bKash sent change nothing: an
// unknown payment, a success before the payer paid (which must not spend
// the payment's one execute), a cancel of a payment being paid.
func TestCallbackForged(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		d, pid := in.redirect(org.Organization.ID, "500")
		if got := in.visit(in.url + bkash.CallbackPath + "?paymentID=TR0011FORGED&status=success"); got != http.StatusNotFound {
			t.Fatalf("unknown payment: %d", got)
		}
		in.visit(bkashsim.CallbackURL(in.url+bkash.CallbackPath, pid, "success"))
		in.visit(bkashsim.CallbackURL(in.url+bkash.CallbackPath, pid, "cancel"))
		in.visit(bkashsim.CallbackURL(in.url+bkash.CallbackPath, pid, "failure"))
		in.work()
		if got := in.deposit(org.Organization.ID, d.ID); got.Status != engine.StatusPending {
			t.Fatalf("forged callbacks moved the deposit to %s", got.Status)
		}
		// The payer then really pays: their callback executes it.
		cb, err := w.sim.Approve(pid, "01712345678")
		if err != nil {
			t.Fatal(err)
		}
		in.visit(cb)
		in.work()
		if got := in.deposit(org.Organization.ID, d.ID); got.Status != engine.StatusSucceeded {
			t.Fatalf("after a forged success the real payment left the deposit %s", got.Status)
		}
	})
}

// TestExecuteAnswerLost: bKash executes but its answer is lost; the status
// query settles it, and no second execute is sent, even when the status
// query is down at first (the background check settles it).
func TestExecuteAnswerLost(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		d, pid := in.redirect(org.Organization.ID, "500")
		cb, _ := w.sim.Approve(pid, "01712345678")
		w.sim.Fault("execute", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusBadGateway})
		w.sim.Fault("status", bkashsim.Fault{HTTPStatus: http.StatusServiceUnavailable, Times: 2})
		in.visit(cb)
		in.visit(cb) // the payer reloads
		in.work()
		if got := in.deposit(org.Organization.ID, d.ID); got.Status == engine.StatusSucceeded {
			t.Fatal("succeeded without bKash's word")
		}
		w.clock.Add(2 * time.Minute)
		if err := in.prov.CheckPayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		in.work()
		if got := in.deposit(org.Organization.ID, d.ID); got.Status != engine.StatusSucceeded {
			t.Fatalf("deposit %s", got.Status)
		}
		if n := w.sim.Calls("execute"); n != 1 {
			t.Fatalf("%d executes, want 1", n)
		}
	})
}

// TestPayerNeverReturns: without a callback, the background status query
// resolves the payment: cancelled on bKash's page ends the deposit; never
// paid, it expires with its window and the payment is closed.
func TestPayerNeverReturns(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		dc, pc := in.redirect(org.Organization.ID, "500")
		dn, _ := in.redirect(org.Organization.ID, "600")
		if _, err := w.sim.Cancel(pc); err != nil {
			t.Fatal(err)
		}
		w.clock.Add(2 * time.Minute)
		if err := in.prov.CheckPayments(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := in.deposit(org.Organization.ID, dc.ID); got.Status != engine.StatusCancelled {
			t.Fatalf("cancelled at bKash: deposit %s", got.Status)
		}
		if got := in.deposit(org.Organization.ID, dn.ID); got.Status != engine.StatusPending {
			t.Fatalf("unpaid: deposit %s", got.Status)
		}
		for range 10 {
			w.clock.Add(10 * time.Minute)
			if err := in.prov.CheckPayments(context.Background()); err != nil {
				t.Fatal(err)
			}
			in.work()
		}
		if got := in.deposit(org.Organization.ID, dn.ID); got.Status != engine.StatusExpired {
			t.Fatalf("unpaid after its window: deposit %s", got.Status)
		}
		queries := w.sim.Calls("status")
		w.clock.Add(time.Hour)
		_ = in.prov.CheckPayments(context.Background())
		if w.sim.Calls("status") != queries {
			t.Fatal("a closed payment is still asked about")
		}
	})
}

// TestCancelAndFailureCallbacks end the deposit as bKash reports.
func TestCancelAndFailureCallbacks(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		d1, p1 := in.redirect(org.Organization.ID, "500")
		d2, p2 := in.redirect(org.Organization.ID, "600")
		cb1, _ := w.sim.Cancel(p1)
		cb2, _ := w.sim.Fail(p2)
		in.visit(cb1)
		in.visit(cb2)
		for _, id := range []string{d1.ID, d2.ID} {
			if got := in.deposit(org.Organization.ID, id); got.Status != engine.StatusCancelled {
				t.Fatalf("deposit %s", got.Status)
			}
		}
		if n := w.sim.Calls("execute"); n != 0 {
			t.Fatalf("%d executes", n)
		}
	})
}

// TestCreateFaults: bKash unreachable, failing or refusing at create is 503
// method_unavailable, never a 500, over HTTP too.
func TestCreateFaults(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		for _, f := range []bkashsim.Fault{
			{HTTPStatus: http.StatusInternalServerError},
			{Code: "2001"},
			{Delay: 2500 * time.Millisecond},
		} {
			w.sim.Fault("create", f)
			_, _, err := in.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{OrganizationID: org.Organization.ID,
				Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "F-" + engine.RandomToken(4)})
			wantCode(t, err, engine.CodeMethodUnavailable)
		}
		w.sim.Fault("create", bkashsim.Fault{HTTPStatus: http.StatusBadGateway})
		req, _ := http.NewRequest(http.MethodPost, in.url+"/api/v1/deposits",
			strings.NewReader(`{"amount":"500","payment_method":"bkash","redirect_url":"https://shop.example/r","merchant_id":"HTTP1"}`))
		req.Header.Set("Authorization", "Bearer "+org.APIKey.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("HTTP create with bKash down: %d", resp.StatusCode)
		}
		// A grant that fails is the same.
		in2 := w.instance(open())
		org2 := in2.org()
		w.sim.Fault("grant", bkashsim.Fault{HTTPStatus: http.StatusServiceUnavailable})
		_, _, err = in2.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{OrganizationID: org2.Organization.ID,
			Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "G1"})
		wantCode(t, err, engine.CodeMethodUnavailable)
	})
}

// TestH2HRedirectAction: an H2H bkash deposit (the redirect action) pays on
// bKash's page too, and must be paid from the payer's own number.
func TestH2HRedirectAction(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		orgID := org.Organization.ID
		create := func(merchantID string) (*engine.Deposit, string) {
			d, _, err := in.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{OrganizationID: orgID, CheckoutMode: "h2h",
				Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: merchantID, PayerPhone: "01712345678"})
			if err != nil {
				t.Fatal(err)
			}
			if d.Action != engine.ActionRedirect || !strings.HasPrefix(d.CheckoutURL, w.sim.URL) {
				t.Fatalf("H2H bkash: action %s to %s", d.Action, d.CheckoutURL)
			}
			return d, d.CheckoutURL[strings.Index(d.CheckoutURL, "paymentID=")+len("paymentID="):]
		}
		d, pid := create("H1")
		cb, _ := w.sim.Approve(pid, "01712345678")
		in.visit(cb)
		in.work()
		if got := in.deposit(orgID, d.ID); got.Status != engine.StatusSucceeded {
			t.Fatalf("paid by the payer: %s %s", got.Status, got.FailureCode)
		}
		d2, pid2 := create("H2")
		cb2, _ := w.sim.Approve(pid2, "01798765432")
		in.visit(cb2)
		in.work()
		if got := in.deposit(orgID, d2.ID); got.Status == engine.StatusSucceeded || got.FailureCode != engine.FailurePayerMismatch {
			t.Fatalf("paid from another number: %s %q", got.Status, got.FailureCode)
		}
	})
}

// TestBackgroundAndCallbacksRace: two instances' background checks and the
// payer's callbacks, at once, on payments whose execute answers are lost:
// each payment is executed once and its deposit credited once.
func TestBackgroundAndCallbacksRace(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		store := open()
		a, b := w.instance(store), w.instance(open())
		org := a.org()
		const n = 6
		var cbs []string
		var ids []string
		for i := range n {
			d, pid := a.redirect(org.Organization.ID, "500")
			ids = append(ids, d.ID)
			cb, _ := w.sim.Approve(pid, "01712345678")
			cbs = append(cbs, cb)
			if i%2 == 0 {
				w.sim.Fault("execute", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusBadGateway})
			}
		}
		w.clock.Add(2 * time.Minute) // every payment due for the background check too
		var wg sync.WaitGroup
		for _, cb := range cbs {
			wg.Go(func() { a.visit(cb) })
			wg.Go(func() { b.visit(b.onInstance(cb)) })
		}
		for _, in := range []*instance{a, b} {
			wg.Go(func() {
				if err := in.prov.CheckPayments(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		w.clock.Add(time.Minute)
		_ = a.prov.CheckPayments(context.Background())
		a.work()
		b.work()
		if got := w.sim.Calls("execute"); got != n {
			t.Fatalf("%d executes for %d payments", got, n)
		}
		for _, id := range ids {
			if got := a.deposit(org.Organization.ID, id); got.Status != engine.StatusSucceeded {
				t.Fatalf("deposit %s", got.Status)
			}
		}
		bal, _ := a.Engine.GetBalance(context.Background(), org.Organization.ID)
		if want := decimal.NewFromInt(500 * n); !bal.Available.Equal(want) {
			t.Fatalf("balance %s, want %s", bal.Available, want)
		}
	})
}
