package transport_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport"
)

// compatOrg is an organization with its compat key.
type compatOrg struct {
	*testOrg
	compatKey string
}

func (h *harness) newCompatOrg() *compatOrg {
	h.t.Helper()
	org := h.NewOrg(engine.OrganizationSettings{})
	key, err := h.Engine.EnableCompat(context.Background(), org.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	return &compatOrg{org, key}
}

// compat posts body to a compat endpoint with key in the UddoktaPay header.
func (h *harness) compat(path, key, body string) *response {
	h.t.Helper()
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if key != "" {
		header.Set("RT-UDDOKTAPAY-API-KEY", key)
	}
	return h.SendHeaders(http.MethodPost, "/api/"+path, body, header)
}

const compatBody = `{"full_name":"Rahim","email":"r@example.com","amount":%s,"metadata":{"order_id":"42"},` +
	`"redirect_url":"https://shop.example/ok?order=42","return_type":"GET","cancel_url":"https://shop.example/cancel","webhook_url":"https://shop.example/ipn"}`

func compatCheckoutBody(amount string) string { return strings.Replace(compatBody, "%s", amount, 1) }

// wantCompatRefusal: a refusal in UddoktaPay's shape, never a 500.
func wantCompatRefusal(t *testing.T, what string, res *response, status int) {
	t.Helper()
	if res.Status != status || res.JSON["status"] != false || paydtest.Str(res.JSON, "message") == "" {
		t.Errorf("%s: %d %s, want %d {\"status\":false,\"message\":…}", what, res.Status, res.Body, status)
	}
}

func invoiceOf(t *testing.T, res *response) string {
	t.Helper()
	if res.Status != http.StatusOK || res.JSON["status"] != true || paydtest.Str(res.JSON, "message") != "Payment Url" {
		t.Fatalf("checkout-v2: %d %s", res.Status, res.Body)
	}
	u := paydtest.Str(res.JSON, "payment_url")
	return u[strings.LastIndexByte(u, '/')+1:]
}

// TestCompatCredentials: only the organization's compat key opens the
// compat endpoints, and it opens nothing else; an invoice is found only by
// its own organization.
func TestCompatCredentials(t *testing.T) {
	h := newHarness(t)
	a, b := h.newCompatOrg(), h.newCompatOrg()
	inv := invoiceOf(t, h.compat("checkout-v2", a.compatKey, compatCheckoutBody("100")))

	wantCompatRefusal(t, "another organization's invoice", h.compat("verify-payment", b.compatKey, `{"invoice_id":"`+inv+`"}`), http.StatusNotFound)
	wantCompatRefusal(t, "an unknown invoice", h.compat("verify-payment", a.compatKey, `{"invoice_id":"nope"}`), http.StatusNotFound)
	wantCompatRefusal(t, "the account API key on checkout-v2", h.compat("checkout-v2", a.APIKey, compatCheckoutBody("100")), http.StatusUnauthorized)
	wantCompatRefusal(t, "the account API key on verify-payment", h.compat("verify-payment", a.APIKey, `{"invoice_id":"`+inv+`"}`), http.StatusUnauthorized)
	wantCompatRefusal(t, "no key", h.compat("checkout-v2", "", compatCheckoutBody("100")), http.StatusUnauthorized)
	wantCompatRefusal(t, "a made-up compat key", h.compat("checkout-v2", "payd_up_"+strings.Repeat("A", 43), compatCheckoutBody("100")), http.StatusUnauthorized)
	dup := http.Header{"Content-Type": {"application/json"}, "Rt-Uddoktapay-Api-Key": {a.compatKey, b.compatKey}}
	wantCompatRefusal(t, "a duplicated key header", h.SendHeaders(http.MethodPost, "/api/checkout-v2", compatCheckoutBody("100"), dup), http.StatusBadRequest)
	wantCompatRefusal(t, "GET", h.SendHeaders(http.MethodGet, "/api/checkout-v2", "", http.Header{"Rt-Uddoktapay-Api-Key": {a.compatKey}}), http.StatusMethodNotAllowed)

	for _, path := range []string{"/api/v1/balance", "/api/v1/deposits"} {
		res := h.Do(nil, request{Method: http.MethodGet, Path: path, APIKey: a.compatKey})
		if res.Status != http.StatusUnauthorized {
			t.Errorf("the compat key on %s: %d %s, want 401", path, res.Status, res.Body)
		}
	}
	if err := h.Engine.DisableCompat(context.Background(), a.ID); err != nil {
		t.Fatal(err)
	}
	wantCompatRefusal(t, "a disabled key", h.compat("verify-payment", a.compatKey, `{"invoice_id":"`+inv+`"}`), http.StatusUnauthorized)
}

// TestCompatAmounts: the amount comes as a JSON number or a string, and
// is then held to payd's money rules: exact, at most two decimal places,
// within what the page's methods take. Nothing is rounded.
func TestCompatAmounts(t *testing.T) {
	h := newHarness(t)
	a := h.newCompatOrg()
	for _, ok := range []string{`100`, `"100"`, `1500.5`, `"1500.50"`, `"  199.99 "`, `300000`} {
		inv := invoiceOf(t, h.compat("checkout-v2", a.compatKey, compatCheckoutBody(ok)))
		res := h.compat("verify-payment", a.compatKey, `{"invoice_id":"`+inv+`"}`)
		want := strings.Trim(ok, `" `)
		if res.Status != http.StatusOK || paydtest.Str(res.JSON, "status") != "PENDING" || !strings.HasPrefix(paydtest.Str(res.JSON, "amount"), want) {
			t.Errorf("amount %s: verify %d %s", ok, res.Status, res.Body)
		}
	}
	for _, bad := range []string{`1e3`, `"1e3"`, `100.001`, `"100.001"`, `99.99`, `"300000.01"`, `-5`, `"-5"`, `0`, `"0.00"`, `1000000000000000`,
		`"99999999999999999999999999"`, `0.30000000000000004`, `"abc"`, `true`, `null`, `{}`, `[]`, `"0x10"`, `"1,000"`, `""`} {
		wantCompatRefusal(t, "amount "+bad, h.compat("checkout-v2", a.compatKey, compatCheckoutBody(bad)), http.StatusBadRequest)
	}
}

// TestCompatBodies: malformed bodies and fields are refused in
// UddoktaPay's shape; PHP's empty metadata ([]) is an empty object.
func TestCompatBodies(t *testing.T) {
	h := newHarness(t)
	a := h.newCompatOrg()
	invoiceOf(t, h.compat("checkout-v2", a.compatKey, `{"amount":"100","metadata":[],"redirect_url":"https://shop.example/ok"}`))
	for what, body := range map[string]string{
		"not JSON":                   `amount=10`,
		"an array":                   `[1]`,
		"no redirect_url":            `{"amount":"10"}`,
		"a relative redirect":        `{"amount":"100","redirect_url":"/ok"}`,
		"an ftp webhook":             `{"amount":"100","redirect_url":"https://s.example/","webhook_url":"ftp://s.example/"}`,
		"a webhook with credentials": `{"amount":"100","redirect_url":"https://s.example/","webhook_url":"https://u:p@s.example/ipn"}`,
		"a bad return_type":          `{"amount":"100","redirect_url":"https://s.example/","return_type":"PUT"}`,
		"string metadata":            `{"amount":"100","redirect_url":"https://s.example/","metadata":"x"}`,
		"a numeric name":             `{"amount":"100","redirect_url":"https://s.example/","full_name":5}`,
		"a control character":        `{"amount":"100","redirect_url":"https://s.example/","full_name":"a\u0000b"}`,
		"two objects":                `{"amount":"100","redirect_url":"https://s.example/"}{}`,
	} {
		wantCompatRefusal(t, what, h.compat("checkout-v2", a.compatKey, body), http.StatusBadRequest)
	}
	wantCompatRefusal(t, "verify without invoice_id", h.compat("verify-payment", a.compatKey, `{}`), http.StatusBadRequest)
	wantCompatRefusal(t, "verify with a numeric invoice_id", h.compat("verify-payment", a.compatKey, `{"invoice_id":5}`), http.StatusBadRequest)
}

// payInvoice pays an invoice as its payer would: bKash chosen on its
// page, paid in the sandbox, verified.
func (h *harness) payInvoice(org *compatOrg, invoice, txID, amount string) {
	h.t.Helper()
	ctx := context.Background()
	d, err := h.Engine.PayPaymentLink(ctx, engine.PayPaymentLinkParams{Token: invoice, PaymentMethod: "bkash", ReturnURL: h.URL + "/pay/" + invoice})
	if err != nil {
		h.t.Fatal(err)
	}
	if r := h.SandboxPay(org.testOrg, `{"channel":"bkash","transaction_id":"`+txID+`","payer_phone":"01712345678","amount":"`+amount+`","status":"completed"}`); r.Status != http.StatusCreated {
		h.t.Fatalf("sandbox pay: %d %s", r.Status, r.Body)
	}
	if _, err := h.Engine.SubmitCheckoutPayment(ctx, d.CheckoutToken, txID); err != nil {
		h.t.Fatal(err)
	}
	h.Work()
}

// TestCompatIPN: a paid invoice's IPN carries the verify-payment body and
// the compat key (not the account key), is retried on the webhooks'
// schedule after a failure, and is sent once.
func TestCompatIPN(t *testing.T) {
	h := newHarness(t, func(c *payd.Config) { c.Webhooks = transport.NewWebhookClient(true) }) // the receiver is on loopback
	a := h.newCompatOrg()
	ctx := context.Background()
	recv := paydtest.NewReceiver(t, func(n int) (int, map[string]string) {
		if n == 1 {
			return http.StatusInternalServerError, nil
		}
		return http.StatusOK, nil
	})
	inv := invoiceOf(t, h.compat("checkout-v2", a.compatKey, strings.Replace(compatCheckoutBody(`"150"`), "https://shop.example/ipn", recv.URL+"/ipn", 1)))
	if n, err := h.Engine.DeliverCompatIPNs(ctx); err != nil || n != 0 {
		t.Fatalf("an unpaid invoice's IPN: %d %v", n, err)
	}
	h.payInvoice(a, inv, "UPIPN0001", "150.00")
	if _, err := h.Engine.DeliverCompatIPNs(ctx); err != nil {
		t.Fatal(err)
	}
	ipn, err := h.Engine.GetCompatIPN(ctx, a.ID, inv)
	if err != nil || ipn.Status != engine.DeliveryPending || ipn.Attempts != 1 || ipn.LastStatusCode != 500 {
		t.Fatalf("after a 500: %+v %v", ipn, err)
	}
	h.Clock.Add(10 * time.Second) // the first retry waits 5 s ± 10%
	if _, err := h.Engine.DeliverCompatIPNs(ctx); err != nil {
		t.Fatal(err)
	}
	if ipn, _ = h.Engine.GetCompatIPN(ctx, a.ID, inv); ipn.Status != engine.DeliveryDelivered || ipn.Attempts != 2 {
		t.Fatalf("after a 200: %+v", ipn)
	}
	h.Clock.Add(time.Hour)
	if n, _ := h.Engine.DeliverCompatIPNs(ctx); n != 0 {
		t.Errorf("a delivered IPN was claimed again")
	}
	got := recv.Deliveries()
	if len(got) != 2 {
		t.Fatalf("the receiver got %d posts, want 2", len(got))
	}
	last := got[1]
	if k := last.Header.Values("Rt-Uddoktapay-Api-Key"); len(k) != 1 || k[0] != a.compatKey {
		t.Errorf("the IPN's key header = %q, want the compat key", k)
	}
	verify := h.compat("verify-payment", a.compatKey, `{"invoice_id":"`+inv+`"}`)
	if string(last.Body) != string(verify.Body) || paydtest.Str(verify.JSON, "status") != engine.CompatCompleted {
		t.Errorf("the IPN's body\n%s\nis not verify-payment's\n%s", last.Body, verify.Body)
	}
}

// TestCompatIPNPrivateAddress: the IPN goes through the webhooks' client,
// whose private-address rule (production's) refuses a webhook_url on
// loopback: nothing reaches it, and the refusal is recorded.
func TestCompatIPNPrivateAddress(t *testing.T) {
	h := newHarness(t)
	a := h.newCompatOrg()
	ctx := context.Background()
	recv := paydtest.NewReceiver(t, nil)
	inv := invoiceOf(t, h.compat("checkout-v2", a.compatKey, strings.Replace(compatCheckoutBody(`"150"`), "https://shop.example/ipn", recv.URL+"/ipn", 1)))
	h.payInvoice(a, inv, "UPIPN0002", "150.00")
	if _, err := h.Engine.DeliverCompatIPNs(ctx); err != nil {
		t.Fatal(err)
	}
	ipn, err := h.Engine.GetCompatIPN(ctx, a.ID, inv)
	if err != nil || !strings.Contains(ipn.LastError, "not a public address") || len(recv.Deliveries()) != 0 {
		t.Fatalf("an IPN to loopback: %+v %v, %d posts", ipn, err, len(recv.Deliveries()))
	}
}

// TestCompatIPNRedeliver: an IPN the merchant's site refused past the last
// retry is queued again by an operator of its organization (audited), with
// a fresh schedule, and delivered; another organization cannot name it,
// and a queued one is left alone.
func TestCompatIPNRedeliver(t *testing.T) {
	h := newHarness(t, func(c *payd.Config) { c.Webhooks = transport.NewWebhookClient(true) })
	a := h.newCompatOrg()
	other := h.newCompatOrg()
	ctx := context.Background()
	var up atomic.Bool
	recv := paydtest.NewReceiver(t, func(int) (int, map[string]string) {
		if up.Load() {
			return http.StatusOK, nil
		}
		return http.StatusServiceUnavailable, nil
	})
	inv := invoiceOf(t, h.compat("checkout-v2", a.compatKey, strings.Replace(compatCheckoutBody(`"150"`), "https://shop.example/ipn", recv.URL+"/ipn", 1)))
	h.payInvoice(a, inv, "UPIPN0003", "150.00")
	ipn, err := h.Engine.GetCompatIPN(ctx, a.ID, inv)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Engine.RedeliverCompatIPN(ctx, a.ID, ipn.LinkID); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Engine.GetCompatIPN(ctx, a.ID, inv); got.Attempts != 0 || got.Status != engine.DeliveryPending {
		t.Fatalf("a queued IPN redelivered: %+v", got)
	}
	for i := 0; i < 30 && ipn.Status != engine.DeliveryExhausted; i++ {
		if _, err := h.Engine.DeliverCompatIPNs(ctx); err != nil {
			t.Fatal(err)
		}
		h.Clock.Add(48 * time.Hour)
		ipn, _ = h.Engine.GetCompatIPN(ctx, a.ID, inv)
	}
	if ipn.Status != engine.DeliveryExhausted {
		t.Fatalf("after the retries: %+v, want exhausted", ipn)
	}
	posts := len(recv.Deliveries())

	var e *engine.Error
	if err := h.Engine.RedeliverCompatIPN(ctx, other.ID, ipn.LinkID); !errors.As(err, &e) || e.Code != engine.CodeNotFound {
		t.Fatalf("another organization's IPN: %v, want not_found", err)
	}
	if got, _ := h.Engine.GetCompatIPN(ctx, a.ID, inv); got.Status != engine.DeliveryExhausted {
		t.Fatalf("another organization's redeliver changed it: %+v", got)
	}
	up.Store(true)
	if err := h.Engine.RedeliverCompatIPN(engine.WithActor(ctx, "op@shop.example"), a.ID, ipn.LinkID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Engine.DeliverCompatIPNs(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.Engine.GetCompatIPN(ctx, a.ID, inv); got.Status != engine.DeliveryDelivered || got.Attempts != 1 || len(recv.Deliveries()) != posts+1 {
		t.Fatalf("redelivered: %+v after %d posts, want delivered at the first attempt", got, len(recv.Deliveries())-posts)
	}
	entries, err := h.Engine.ListAudit(ctx, a.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, en := range entries {
		found = found || en.Action == engine.AuditCompatIPNRedeliver && en.Actor == "op@shop.example" && en.Subject == ipn.LinkID
	}
	if !found {
		t.Errorf("no audit entry of the redelivery among %d", len(entries))
	}
	if got, _ := h.Engine.ListCompatIPNs(ctx, other.ID, 10); len(got) != 0 {
		t.Errorf("another organization lists %d IPNs", len(got))
	}
	if got, _ := h.Engine.ListCompatIPNs(ctx, a.ID, 10); len(got) != 1 || got[0].LinkID != ipn.LinkID {
		t.Errorf("the organization lists %+v", got)
	}
}
