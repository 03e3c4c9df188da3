package bkash_test

// The provider end to end through payd's HTTP API: the real handler of the
// root package, the merchant calling /api/v1 with the Go client (signed
// with the test's clock), the payer's browser on the simulator's payment
// page and back to payd's callback, on SQLite and Postgres. Background work
// (the engine's workers, the provider's status checks) is run by the test,
// as payd serve runs it on a timer, so that the clock can jump.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/bkash/bkashsim"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport/client"
)

// merchant is an organization's Go client of the instance's API.
func (in *instance) merchant(org *engine.OrganizationCredentials) *client.Client {
	return client.New(in.url+"/api", org.APIKey.APIKey, org.APIKey.SigningSecret,
		client.WithClock(in.w.clock.Now), client.WithRetries(0))
}

// browser is the payer's: it follows redirects (the simulator's page to
// payd's callback) and stops at the merchant's return page.
var browser = &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
	if req.URL.Host == "shop.example" {
		return http.ErrUseLastResponse
	}
	return nil
}}

// pay is the payer on the simulator's page: approve (as payer), cancel or
// fail, then back to wherever bKash sends them. It returns the last answer's
// status and where it sent the browser next.
func pay(t *testing.T, checkout, action, payer string) (int, string) {
	t.Helper()
	u, err := url.Parse(checkout)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := browser.Get(checkout); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("bKash's page: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	q := url.Values{"paymentID": {u.Query().Get("paymentID")}, "payer": {payer}}
	resp, err := browser.Get(u.Scheme + "://" + u.Host + "/pay/" + action + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

func paymentIDOf(t *testing.T, checkout string) string {
	t.Helper()
	u, err := url.Parse(checkout)
	if err != nil || u.Query().Get("paymentID") == "" {
		t.Fatalf("checkout URL %q is not bKash's page", checkout)
	}
	return u.Query().Get("paymentID")
}

func wantAPIError(t *testing.T, what string, err error, status int, code string) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) || e.StatusCode != status || e.Code != code {
		t.Fatalf("%s: %v, want %d %s", what, err, status, code)
	}
}

func createRedirect(t *testing.T, m *client.Client, amount string) *client.Deposit {
	t.Helper()
	d, err := m.CreateRedirectDeposit(context.Background(), client.RedirectDepositRequest{Amount: amount, PaymentMethod: "bkash",
		RedirectURL: "https://shop.example/return", MerchantID: "H-" + engine.RandomToken(6)})
	if err != nil {
		t.Fatal(err)
	}
	if d.RedirectURL == nil {
		t.Fatal("no redirect_url")
	}
	return d
}

func getDeposit(t *testing.T, m *client.Client, id string) *client.Deposit {
	t.Helper()
	d, err := m.GetDeposit(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestHTTPRedirectPaid: a merchant's redirect deposit is paid on bKash's
// page; the payer's browser comes back to payd's callback, which executes
// the payment once and sends them to the merchant's page; the deposit reads
// succeeded with bKash's trxID. A replay of the callback, a forged one and
// an execute bKash answers "already executed" (2117, its answer to an
// execute it had done) change nothing; another organization cannot read it.
// An H2H bkash deposit's redirect action is paid the same way.
func TestHTTPRedirectPaid(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		m := in.merchant(org)
		d := createRedirect(t, m, "500")
		if !strings.HasPrefix(*d.RedirectURL, w.sim.URL+"/pay?") || d.Status != client.StatusPending {
			t.Fatalf("create: %s to %s", d.Status, *d.RedirectURL)
		}
		status, next := pay(t, *d.RedirectURL, "approve", "01712345678")
		if status != http.StatusSeeOther || !strings.HasPrefix(next, "https://shop.example/return") {
			t.Fatalf("back from bKash: %d to %q, want 303 to the merchant's page", status, next)
		}
		in.work()
		pid := paymentIDOf(t, *d.RedirectURL)
		sp, _ := w.sim.Payment(pid)
		got := getDeposit(t, m, d.ID)
		if got.Status != client.StatusSucceeded || got.BankTransactionID == nil || *got.BankTransactionID != sp.TrxID || sp.Invoice != d.ID {
			t.Fatalf("deposit %s with %v (bKash's trxID %q, invoice %q)", got.Status, got.BankTransactionID, sp.TrxID, sp.Invoice)
		}
		// Replayed and forged callbacks.
		for _, cb := range []string{
			bkashsim.CallbackURL(in.url+bkash.CallbackPath, pid, "success"),
			bkashsim.CallbackURL(in.url+bkash.CallbackPath, pid, "cancel"),
			bkashsim.CallbackURL(in.url+bkash.CallbackPath, "TR0011FORGED", "success"),
		} {
			in.visit(cb)
		}
		in.work()
		if got := getDeposit(t, m, d.ID); got.Status != client.StatusSucceeded || w.sim.Calls("execute") != 1 {
			t.Fatalf("after replays: %s, %d executes", got.Status, w.sim.Calls("execute"))
		}
		bal, err := m.Balance(context.Background())
		if err != nil || bal.Available != "500.00" {
			t.Fatalf("balance %+v %v, want 500.00 credited once", bal, err)
		}
		// Another organization: not found.
		other := in.merchant(in.org())
		_, err = other.GetDeposit(context.Background(), d.ID)
		wantAPIError(t, "another organization's read", err, http.StatusNotFound, client.CodeNotFound)

		// bKash executes and answers 2117 ("already executed"): the status
		// query finds it completed.
		d2 := createRedirect(t, m, "600")
		w.sim.Fault("execute", bkashsim.Fault{AfterWork: true, Code: "2117"})
		pay(t, *d2.RedirectURL, "approve", "01712345678")
		in.work()
		if got := getDeposit(t, m, d2.ID); got.Status != client.StatusSucceeded {
			t.Fatalf("execute answered 2117: deposit %s", got.Status)
		}
		if n := w.sim.Calls("execute"); n != 2 {
			t.Fatalf("%d executes for two payments", n)
		}

		// The H2H bkash deposit: a redirect action to bKash's page, paid
		// from the payer's number, read signed.
		h, _, err := m.CreateH2HDeposit(context.Background(), client.H2HDepositRequest{Amount: "700", PaymentMethod: "bkash",
			RedirectURL: "https://shop.example/return", MerchantID: "H2H-1", PayerPhone: "01712345678"})
		if err != nil || h.NextAction == nil || h.NextAction.Type != "redirect" || !strings.HasPrefix(h.NextAction.URL, w.sim.URL+"/pay?") {
			t.Fatalf("H2H bkash: %+v %v", h, err)
		}
		pay(t, h.NextAction.URL, "approve", "01712345678")
		in.work()
		hp, _ := w.sim.Payment(paymentIDOf(t, h.NextAction.URL))
		if got := getDeposit(t, m, h.ID); got.Status != client.StatusSucceeded || got.ProviderTransactionID == nil ||
			*got.ProviderTransactionID != hp.TrxID {
			t.Fatalf("H2H bkash paid: %s %v (bKash's %q)", got.Status, got.ProviderTransactionID, hp.TrxID)
		}
	})
}

// TestHTTPPayerNeverReturns: payers who leave bKash's page without coming
// back. One cancelled there: the status query ends the deposit cancelled.
// One whose execute answer was lost: the status query finds it completed
// and the deposit succeeds. One who approved and left (payd executes only
// on its payer's callback): the deposit expires with its window and bKash's
// payment is closed, never executed.
func TestHTTPPayerNeverReturns(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		m := in.merchant(org)
		ctx := context.Background()
		cancelled, lost, left := createRedirect(t, m, "500"), createRedirect(t, m, "600"), createRedirect(t, m, "700")
		if _, err := w.sim.Cancel(paymentIDOf(t, *cancelled.RedirectURL)); err != nil {
			t.Fatal(err)
		}
		w.sim.Fault("execute", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusGatewayTimeout})
		w.sim.Fault("status", bkashsim.Fault{HTTPStatus: http.StatusServiceUnavailable}) // the query after the lost execute
		pay(t, *lost.RedirectURL, "approve", "01712345678")
		if _, err := w.sim.Approve(paymentIDOf(t, *left.RedirectURL), "01712345678"); err != nil {
			t.Fatal(err)
		}
		in.work()
		for _, d := range []*client.Deposit{cancelled, lost, left} {
			if got := getDeposit(t, m, d.ID); got.Status != client.StatusPending {
				t.Fatalf("before the status query: %s %s", d.ID, got.Status)
			}
		}
		w.clock.Add(2 * time.Minute)
		if err := in.prov.CheckPayments(ctx); err != nil {
			t.Fatal(err)
		}
		in.work()
		if got := getDeposit(t, m, cancelled.ID); got.Status != client.StatusCancelled {
			t.Fatalf("cancelled at bKash: %s", got.Status)
		}
		if got := getDeposit(t, m, lost.ID); got.Status != client.StatusSucceeded {
			t.Fatalf("execute answer lost: %s", got.Status)
		}
		for range 8 {
			w.clock.Add(10 * time.Minute)
			if err := in.prov.CheckPayments(ctx); err != nil {
				t.Fatal(err)
			}
			in.work()
		}
		if got := getDeposit(t, m, left.ID); got.Status != client.StatusExpired {
			t.Fatalf("approved and left: %s", got.Status)
		}
		if sp, _ := w.sim.Payment(paymentIDOf(t, *left.RedirectURL)); sp.TrxID != "" {
			t.Fatal("a payment executed without its payer's callback")
		}
		if n := w.sim.Calls("execute"); n != 1 {
			t.Fatalf("%d executes, want 1", n)
		}
	})
}

// TestHTTPMerchantVerifiedBySearch: bkash_merchant H2H deposits, the TrxID
// submitted through POST /v1/deposits/{id}/verify (signed) and searched at
// bKash under the organization's credentials. Paid as asked it succeeds;
// each way a payment can be wrong fails its attempt with the contract's
// code; a TrxID used before is refused at once; another merchant's TrxID
// is not found; bKash unreachable leaves the attempt delayed and it is
// retried to success.
func TestHTTPMerchantVerifiedBySearch(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		orgID := org.Organization.ID
		m := in.merchant(org)
		ctx := context.Background()
		if _, err := in.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: orgID, Channel: "bkash",
			Operation: engine.OperationMakePayment, Phone: app1.ShortCode, Name: "merchant"}); err != nil {
			t.Fatal(err)
		}
		other := bkashsim.App{AppKey: "app-key-two", AppSecret: "s2", Username: "u2", Password: "p2", ShortCode: "01822222222"}
		w.sim.AddApp(other)
		payer := "01712345678"
		create := func() *client.Deposit {
			t.Helper()
			w.clock.Add(time.Second)
			d, created, err := m.CreateH2HDeposit(ctx, client.H2HDepositRequest{Amount: "500", PaymentMethod: "bkash_merchant",
				RedirectURL: "https://shop.example/r", MerchantID: "V-" + engine.RandomToken(6), PayerPhone: payer})
			if err != nil || !created {
				t.Fatalf("create: %v %v", created, err)
			}
			if d.NextAction == nil || d.NextAction.Recipient.Value != app1.ShortCode {
				t.Fatalf("next_action %+v: not the merchant number", d.NextAction)
			}
			w.clock.Add(time.Second)
			return d
		}
		bkashPays := func(app, trx, amount, from, status string, at time.Time) {
			w.sim.AddTransaction(app, bkashsim.Transaction{TrxID: trx, Amount: decimal.RequireFromString(amount),
				Payer: from, Status: status, Completed: at})
		}
		submit := func(d *client.Deposit, trx string) *client.Deposit {
			t.Helper()
			v, err := m.SubmitTransactionID(ctx, d.ID, trx)
			if err != nil || !v.Queued {
				t.Fatalf("verify %s: %+v %v", trx, v, err)
			}
			in.work()
			return getDeposit(t, m, d.ID)
		}
		ok := create()
		bkashPays(app1.AppKey, "BKH0000001", "500", payer, "Completed", w.clock.Now())
		if got := submit(ok, "bkh0000001"); got.Status != client.StatusSucceeded || got.ProviderTransactionID == nil ||
			*got.ProviderTransactionID != "BKH0000001" {
			t.Fatalf("paid as asked: %s %v", got.Status, got.ProviderTransactionID)
		}
		before := create()
		for _, c := range []struct {
			name, trx, app, amount, from, status string
			at                                   time.Time
			code                                 string
		}{
			{"not completed", "BKH0000002", app1.AppKey, "500", payer, "Failed", w.clock.Now(), engine.FailurePaymentNotCompleted},
			{"another amount", "BKH0000003", app1.AppKey, "499.99", payer, "Completed", w.clock.Now(), engine.FailureAmountMismatch},
			{"another merchant's", "BKH0000004", other.AppKey, "500", payer, "Completed", w.clock.Now(), engine.FailureTransactionNotFound},
			{"another payer's number", "BKH0000005", app1.AppKey, "500", "01798765432", "Completed", w.clock.Now(), engine.FailurePayerMismatch},
			{"before the window", "BKH0000006", app1.AppKey, "500", payer, "Completed", before.ExpiresAt.Add(-2 * time.Hour), engine.FailureOutsideWindow},
			{"after the window", "BKH0000007", app1.AppKey, "500", payer, "Completed", w.clock.Now().Add(2 * time.Hour), engine.FailureOutsideWindow},
		} {
			d := create()
			bkashPays(c.app, c.trx, c.amount, c.from, c.status, c.at)
			got := submit(d, c.trx)
			if got.Status == client.StatusSucceeded || got.Verification == nil || got.Verification.FailureCode == nil ||
				*got.Verification.FailureCode != c.code {
				t.Errorf("%s: %s %+v, want %s", c.name, got.Status, got.Verification, c.code)
			}
		}
		// The TrxID that paid the first deposit, submitted for another.
		_, err := m.SubmitTransactionID(ctx, create().ID, "BKH0000001")
		wantAPIError(t, "a TrxID already used", err, http.StatusConflict, client.CodeTransactionIDUsed)

		// bKash unreachable: the attempt is delayed, then retried.
		late := create()
		bkashPays(app1.AppKey, "BKH0000008", "500", payer, "Completed", w.clock.Now())
		w.sim.Fault("search", bkashsim.Fault{HTTPStatus: http.StatusBadGateway, Times: 2})
		v, err := m.SubmitTransactionID(ctx, late.ID, "BKH0000008")
		if err != nil {
			t.Fatal(err)
		}
		in.work()
		a, err := in.Engine.GetAttempt(ctx, orgID, v.AttemptID)
		if err != nil || a.Status != engine.AttemptDelayed {
			t.Fatalf("bKash down: attempt %+v %v, want delayed", a, err)
		}
		if got := getDeposit(t, m, late.ID); got.Status != client.StatusProcessing && got.Status != client.StatusPending {
			t.Fatalf("bKash down: deposit %s", got.Status)
		}
		for range 3 {
			w.clock.Add(time.Minute)
			in.work()
		}
		if got := getDeposit(t, m, late.ID); got.Status != client.StatusSucceeded {
			t.Fatalf("after bKash came back: %s %+v", got.Status, got.Verification)
		}
	})
}

// TestHTTPRefunds: a deposit paid on bKash's checkout refunded through
// POST /v1/deposits/{id}/refunds: in part (bKash's answer lost, the refund
// found in its status and made once), the same request again (the same
// refund, nothing sent), then the rest; the deposit reads refunded. A
// bkash_merchant deposit proven by bKash's search cannot be refunded
// through bKash's API (its refund takes a checkout paymentID): 503
// method_unavailable, nothing held.
func TestHTTPRefunds(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		in := w.instance(open())
		org := in.org()
		orgID := org.Organization.ID
		m := in.merchant(org)
		ctx := context.Background()
		d := createRedirect(t, m, "1000")
		pay(t, *d.RedirectURL, "approve", "01712345678")
		in.work()
		settle := func(r *client.Refund) *client.Refund {
			t.Helper()
			for range 6 {
				in.work()
				got, err := m.GetRefund(ctx, r.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status != client.RefundProcessing {
					return got
				}
				w.clock.Add(time.Minute)
			}
			t.Fatalf("refund %s still processing", r.ID)
			return nil
		}
		w.sim.Fault("refund", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusGatewayTimeout})
		part := client.RefundRequest{Amount: "300", MerchantID: "RF-1", Reason: "returned goods"}
		r1, created, err := m.CreateRefund(ctx, d.ID, part)
		if err != nil || !created || r1.Status != client.RefundProcessing {
			t.Fatalf("partial refund: %+v %v %v", r1, created, err)
		}
		if got := settle(r1); got.Status != client.RefundSucceeded {
			t.Fatalf("partial refund: %s", got.Status)
		}
		again, created, err := m.CreateRefund(ctx, d.ID, part)
		if err != nil || created || again.ID != r1.ID || again.Status != client.RefundSucceeded {
			t.Fatalf("the same refund again: %+v %v %v", again, created, err)
		}
		_, _, err = m.CreateRefund(ctx, d.ID, client.RefundRequest{Amount: "700.01", MerchantID: "RF-big"})
		wantAPIError(t, "beyond the deposit", err, http.StatusConflict, "refund_exceeds_deposit")
		rest, _, err := m.CreateRefund(ctx, d.ID, client.RefundRequest{MerchantID: "RF-2"})
		if err != nil || rest.Amount != "700.00" {
			t.Fatalf("the rest: %+v %v", rest, err)
		}
		if got := settle(rest); got.Status != client.RefundSucceeded {
			t.Fatalf("the rest: %s", got.Status)
		}
		sp, _ := w.sim.Payment(paymentIDOf(t, *d.RedirectURL))
		trx, _ := w.sim.Transaction(sp.TrxID)
		if len(trx.Refunds) != 2 || trx.Refunds[0].Amount.String() != "300" || trx.Refunds[1].Amount.String() != "700" {
			t.Fatalf("bKash made %+v, want 300 then 700", trx.Refunds)
		}
		if got := getDeposit(t, m, d.ID); got.Status != client.StatusRefunded || got.RefundedAmount != "1000.00" {
			t.Fatalf("deposit %s refunded %s", got.Status, got.RefundedAmount)
		}

		// Proven by search: not refundable through bKash.
		if _, err := in.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: orgID, Channel: "bkash",
			Operation: engine.OperationMakePayment, Phone: app1.ShortCode, Name: "merchant"}); err != nil {
			t.Fatal(err)
		}
		md, _, err := m.CreateH2HDeposit(ctx, client.H2HDepositRequest{Amount: "500", PaymentMethod: "bkash_merchant",
			RedirectURL: "https://shop.example/r", MerchantID: "M-1", PayerPhone: "01712345678"})
		if err != nil {
			t.Fatal(err)
		}
		w.clock.Add(time.Second)
		w.sim.AddTransaction(app1.AppKey, bkashsim.Transaction{TrxID: "BKR0000001", Amount: decimal.RequireFromString("500"),
			Payer: "01712345678", Status: "Completed", Completed: w.clock.Now()})
		if _, err := m.SubmitTransactionID(ctx, md.ID, "BKR0000001"); err != nil {
			t.Fatal(err)
		}
		in.work()
		if got := getDeposit(t, m, md.ID); got.Status != client.StatusSucceeded {
			t.Fatalf("merchant deposit %s", got.Status)
		}
		_, _, err = m.CreateRefund(ctx, md.ID, client.RefundRequest{MerchantID: "RF-M"})
		wantAPIError(t, "refund of a payment proven by search", err, http.StatusServiceUnavailable, client.CodeMethodUnavailable)
		bal, _ := m.Balance(ctx)
		if bal.Available != "500.00" || bal.Held != "0.00" {
			t.Fatalf("balance %+v after a refused refund", bal)
		}
		if refunds := w.sim.Calls("refund"); refunds != 2 {
			t.Fatalf("%d refund calls at bKash, want 2", refunds)
		}

		// A checkout deposit of an organization since disconnected: no
		// credentials to refund with, 503.
		d3 := createRedirect(t, m, "400")
		pay(t, *d3.RedirectURL, "approve", "01712345678")
		in.work()
		if _, err := in.prov.Disconnect(ctx, orgID); err != nil {
			t.Fatal(err)
		}
		_, _, err = m.CreateRefund(ctx, d3.ID, client.RefundRequest{MerchantID: "RF-D"})
		wantAPIError(t, "refund after a disconnect", err, http.StatusServiceUnavailable, client.CodeMethodUnavailable)
	})
}

// TestHTTPTokenGrantedOnce: many merchants' requests at once on two payd
// instances over one database are served with one token grant.
func TestHTTPTokenGrantedOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		a, b := w.instance(open()), w.instance(open())
		org := a.org()
		ma, mb := a.merchant(org), b.merchant(org)
		var wg sync.WaitGroup
		for i := range 24 {
			m := ma
			if i%2 == 1 {
				m = mb
			}
			wg.Go(func() {
				if _, err := m.CreateRedirectDeposit(context.Background(), client.RedirectDepositRequest{Amount: "500",
					PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "TK-" + engine.RandomToken(6)}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if g, r, c := w.sim.Calls("grant"), w.sim.Calls("refresh"), w.sim.Calls("create"); g != 1 || r != 0 || c != 24 {
			t.Fatalf("%d grants, %d refreshes, %d creates for 24 requests on two instances, want 1, 0, 24", g, r, c)
		}
	})
}

// TestHTTPCredentialsNeverShown: after connecting, paying, refunding and
// bKash failing in every way, no credential or token of bKash's is in the
// logs, in any answer of the API or in the database's text, on both stores.
func TestHTTPCredentialsNeverShown(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		store := open()
		in := w.instance(store)
		org := in.org()
		m := in.merchant(org)
		ctx := context.Background()
		var answers []string
		w.sim.Fault("create", bkashsim.Fault{Code: bkashsim.CodeInvalidAppKey})
		_, err := m.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{Amount: "500", PaymentMethod: "bkash",
			RedirectURL: "https://shop.example/r", MerchantID: "CR-0"})
		wantAPIError(t, "create with bKash refusing", err, http.StatusServiceUnavailable, client.CodeMethodUnavailable)
		answers = append(answers, err.Error())
		d := createRedirect(t, m, "500")
		w.sim.Fault("execute", bkashsim.Fault{AfterWork: true, HTTPStatus: http.StatusBadGateway})
		pay(t, *d.RedirectURL, "approve", "01712345678")
		w.sim.RevokeTokens() // a 401: the token renewed
		w.clock.Add(2 * time.Minute)
		_ = in.prov.CheckPayments(ctx)
		in.work()
		w.sim.Fault("refund", bkashsim.Fault{Code: "2072"})
		r, _, err := m.CreateRefund(ctx, d.ID, client.RefundRequest{Amount: "100", MerchantID: "CR-1"})
		if err != nil {
			t.Fatal(err)
		}
		in.work()
		got, _ := m.GetRefund(ctx, r.ID)
		dep := getDeposit(t, m, d.ID)
		answers = append(answers, got.Status, dep.Status)
		if w.sim.Calls("grant")+w.sim.Calls("refresh") < 2 {
			t.Fatal("the token was never renewed: the test proves less than it says")
		}
		text := dbText(t, store)
		for _, secret := range []string{app1.AppSecret, app1.Password, "idtok-", "reftok-"} {
			if strings.Contains(w.logs.String(), secret) {
				t.Errorf("the logs show %q", secret)
			}
			if strings.Contains(strings.Join(answers, " "), secret) {
				t.Errorf("an answer shows %q", secret)
			}
			if strings.Contains(text, secret) {
				t.Errorf("the database's text shows %q", secret)
			}
		}
		if !strings.Contains(text, org.Organization.ID) || !strings.Contains(w.logs.String(), "bkash") {
			t.Fatal("the database's text or the logs are empty: the test proves nothing")
		}
	})
}

// dbText is every row of every table as text (Postgres), or the database's
// files (SQLite).
func dbText(t *testing.T, store payd.Store) string {
	t.Helper()
	if p, ok := sqlitePaths.Load(store); ok {
		path := p.(string)
		var b strings.Builder
		for _, f := range []string{path, path + "-wal"} {
			raw, _ := os.ReadFile(f)
			b.Write(raw)
		}
		return b.String()
	}
	var b strings.Builder
	err := store.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		sqlTx := tx.(engine.SQLTx)
		var tables []string
		if err := sqlTx.QuerySQL(ctx, `SELECT table_name FROM information_schema.tables
			WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`, nil, func(scan func(...any) error) error {
			var name string
			err := scan(&name)
			tables = append(tables, name)
			return err
		}); err != nil {
			return err
		}
		for _, table := range tables {
			if err := sqlTx.QuerySQL(ctx, `SELECT t::text FROM "`+table+`" t`, nil, func(scan func(...any) error) error {
				var row string
				err := scan(&row)
				b.WriteString(row)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestHTTPMerchantBesideSMSInbox: with an SMS inbox beside it (payd serve
// --provider smsinbox), a connected organization's bkash_merchant deposits
// are proven by bKash's search, so its merchant wallet needs no phone
// forwarding SMS to be in the pool; an organization not connected still
// needs one (the inbox proves its payments).
func TestHTTPMerchantBesideSMSInbox(t *testing.T) {
	eachStore(t, func(t *testing.T, open func() payd.Store) {
		w := newWorld(t)
		store := open()
		inbox, err := smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(store), Clock: w.clock, Keyring: w.keyring})
		if err != nil {
			t.Fatal(err)
		}
		in := w.instanceOn(store, inbox)
		ctx := context.Background()
		connected := in.org()
		name := "Not connected"
		plain, err := in.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: &name, H2HEnabled: &[]bool{true}[0]})
		if err != nil {
			t.Fatal(err)
		}
		for _, org := range []*engine.OrganizationCredentials{connected, plain} {
			if _, err := in.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org.Organization.ID, Channel: "bkash",
				Operation: engine.OperationMakePayment, Phone: app1.ShortCode, Name: "merchant"}); err != nil {
				t.Fatal(err)
			}
		}
		create := func(org *engine.OrganizationCredentials) (*client.Deposit, error) {
			d, _, err := in.merchant(org).CreateH2HDeposit(ctx, client.H2HDepositRequest{Amount: "500", PaymentMethod: "bkash_merchant",
				RedirectURL: "https://shop.example/r", MerchantID: "S-" + engine.RandomToken(6), PayerPhone: "01712345678"})
			return d, err
		}
		d, err := create(connected)
		if err != nil {
			t.Fatalf("connected, no phone forwarding the merchant wallet: %v", err)
		}
		w.clock.Add(time.Second)
		w.sim.AddTransaction(app1.AppKey, bkashsim.Transaction{TrxID: "BKS0000001", Amount: decimal.RequireFromString("500"),
			Payer: "01712345678", Status: "Completed", Completed: w.clock.Now()})
		m := in.merchant(connected)
		if _, err := m.SubmitTransactionID(ctx, d.ID, "BKS0000001"); err != nil {
			t.Fatal(err)
		}
		in.work()
		if got := getDeposit(t, m, d.ID); got.Status != client.StatusSucceeded {
			t.Fatalf("verified by search beside the inbox: %s %+v", got.Status, got.Verification)
		}
		_, err = create(plain)
		wantAPIError(t, "not connected, no phone", err, http.StatusServiceUnavailable, client.CodeMethodUnavailable)
	})
}
