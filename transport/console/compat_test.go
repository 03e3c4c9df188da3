package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

// compatCheckout creates an invoice through checkout-v2 and returns its ID.
func compatCheckout(t *testing.T, srv *paydtest.Server, key, body string) string {
	t.Helper()
	res := srv.SendHeaders(http.MethodPost, "/api/checkout-v2", body, http.Header{"Rt-Uddoktapay-Api-Key": {key}, "Content-Type": {"application/json"}})
	u := paydtest.Str(res.JSON, "payment_url")
	if res.Status != http.StatusOK || !strings.HasPrefix(u, srv.URL+"/pay/") {
		t.Fatalf("checkout-v2: %d %s", res.Status, res.Body)
	}
	return u[strings.LastIndexByte(u, '/')+1:]
}

func compatVerify(t *testing.T, srv *paydtest.Server, key, invoice string) map[string]any {
	t.Helper()
	res := srv.SendHeaders(http.MethodPost, "/api/verify-payment", `{"invoice_id":"`+invoice+`"}`, http.Header{"Rt-Uddoktapay-Api-Key": {key}})
	if res.Status != http.StatusOK {
		t.Fatalf("verify-payment: %d %s", res.Status, res.Body)
	}
	return res.JSON
}

// TestCompatInvoicePage: the payer of an invoice picks a method on the
// payment-link page (English and Bangla, forms only), may cancel back to
// cancel_url, pays, and is sent to redirect_url with invoice_id; the
// payment is an ordinary deposit of the organization.
func TestCompatInvoicePage(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	fee := decimal.RequireFromString("1.5")
	org := srv.NewOrg(engine.OrganizationSettings{DepositFeePercent: &fee})
	key, err := srv.Engine.EnableCompat(ctx, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	inv := compatCheckout(t, srv, key, `{"full_name":"Rahim","email":"r@example.com","amount":"1250.50","metadata":{"order_id":42},`+
		`"redirect_url":"https://shop.example/ok?order=42","cancel_url":"https://shop.example/cancel","webhook_url":"https://shop.example/ipn"}`)
	payer := newBrowser(t, srv)
	p := payer.get("/pay/" + inv)
	if p.status != http.StatusOK || !strings.Contains(p.body, "৳1,250.50") || !strings.Contains(p.body, `id="pay-bkash"`) ||
		!strings.Contains(p.body, `id="pay-cancel"`) || strings.Contains(p.body, "<script") {
		t.Fatalf("the invoice's page: %d %s", p.status, p.body)
	}
	if p := payer.get("/pay/" + inv + "?lang=bn"); !strings.Contains(p.body, "বাতিল করে দোকানে ফিরে যান") {
		t.Error("the invoice's page in Bangla has no cancel in Bangla")
	}
	if p := payer.post("/pay/"+inv, url.Values{"method": {"bkash"}}); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "/checkout/") {
		t.Fatalf("pay: %d %s", p.status, p.header.Get("Location"))
	}
	p = payer.post("/pay/"+inv+"/cancel", nil)
	if want := "https://shop.example/cancel?invoice_id=" + inv; p.status != http.StatusSeeOther || p.header.Get("Location") != want {
		t.Fatalf("cancel: %d %q, want %s", p.status, p.header.Get("Location"), want)
	}
	if v := compatVerify(t, srv, key, inv); v["status"] != engine.CompatError {
		t.Errorf("a cancelled invoice: %v", v)
	}

	// The payer comes back and pays with another method.
	p = payer.post("/pay/"+inv, url.Values{"method": {"nagad"}})
	checkout := p.header.Get("Location")
	token := checkout[strings.LastIndex(checkout, "/")+1:]
	if r := srv.SandboxPay(org, `{"channel":"nagad","transaction_id":"UPCOMPAT1","payer_phone":"01712345678","amount":"1250.50","status":"completed"}`); r.Status != http.StatusCreated {
		t.Fatalf("sandbox pay: %d %s", r.Status, r.Body)
	}
	if _, err := srv.Engine.SubmitCheckoutPayment(ctx, token, "UPCOMPAT1"); err != nil {
		t.Fatal(err)
	}
	srv.Work()
	p = payer.get("/pay/" + inv)
	if want := "https://shop.example/ok?order=42&invoice_id=" + inv; p.status != http.StatusSeeOther || p.header.Get("Location") != want {
		t.Fatalf("the paid invoice's page: %d %q, want %s", p.status, p.header.Get("Location"), want)
	}
	v := compatVerify(t, srv, key, inv)
	want := map[string]any{"full_name": "Rahim", "email": "r@example.com", "amount": "1250.50", "fee": "18.76", "charged_amount": "1250.50",
		"invoice_id": inv, "metadata": map[string]any{"order_id": 42}, "payment_method": "nagad", "sender_number": "",
		"transaction_id": "UPCOMPAT1", "status": engine.CompatCompleted}
	for k, w := range want {
		if mustJSON(t, v[k]) != mustJSON(t, w) {
			t.Errorf("verify %s = %v, want %v", k, v[k], w)
		}
	}
	if d, _ := v["date"].(string); len(d) != len("2006-01-02 15:04:05") {
		t.Errorf("verify date = %q", d)
	}
	// An ordinary deposit: listed by the organization's own API.
	res := srv.Do(org, paydtest.Request{Method: http.MethodGet, Path: "/api/v1/deposits?status=succeeded", APIKey: org.APIKey})
	if !strings.Contains(string(res.Body), `"provider_transaction_id":"UPCOMPAT1"`) && !strings.Contains(string(res.Body), "1250.50") {
		t.Errorf("the invoice's deposit is not listed: %s", res.Body)
	}
	if _, err := srv.Engine.CancelCompatInvoice(ctx, inv); engine.ErrorCode(err) != engine.CodeDepositTerminal {
		t.Errorf("cancelling a paid invoice: %v, want deposit_terminal", err)
	}
}

// TestCompatInvoiceReturnPOST: a paid invoice of return_type POST shows a
// form (no script) that posts invoice_id to redirect_url, which the
// page's policy lets it reach.
func TestCompatInvoiceReturnPOST(t *testing.T) {
	ctx := context.Background()
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	key, _ := srv.Engine.EnableCompat(ctx, org.ID)
	inv := compatCheckout(t, srv, key, `{"amount":500,"redirect_url":"https://shop.example/ok","return_type":"POST"}`)
	payer := newBrowser(t, srv)
	payer.get("/pay/" + inv)
	checkout := payer.post("/pay/"+inv, url.Values{"method": {"bkash"}}).header.Get("Location")
	srv.SandboxPay(org, `{"channel":"bkash","transaction_id":"UPCOMPAT2","payer_phone":"01712345678","amount":"500.00","status":"completed"}`)
	if _, err := srv.Engine.SubmitCheckoutPayment(ctx, checkout[strings.LastIndex(checkout, "/")+1:], "UPCOMPAT2"); err != nil {
		t.Fatal(err)
	}
	srv.Work()
	p := payer.get("/pay/" + inv)
	if p.status != http.StatusOK || !strings.Contains(p.body, `action="https://shop.example/ok"`) || !strings.Contains(p.body, `value="`+inv+`"`) {
		t.Fatalf("the paid page: %d %s", p.status, p.body)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' https://shop.example;") {
		t.Errorf("policy %q does not let the form reach the shop", csp)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCompatKeyConsole: only an owner issues or revokes the
// UddoktaPay-compatible key; the key is shown once, then only its end.
func TestCompatKeyConsole(t *testing.T) {
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	operator(t, srv, "owner@example.com", engine.RoleOwner, org.ID, false)
	operator(t, srv, "op@example.com", engine.RoleOperator, org.ID, false)
	op := newBrowser(t, srv)
	op.login("op@example.com", "")
	if p := op.get("/console/keys"); strings.Contains(p.body, `id="compat-enable"`) {
		t.Error("an operator is offered the compat key")
	}
	if p := op.post("/console/compat/enable", nil); p.status != http.StatusForbidden {
		t.Errorf("an operator enabling the compat key: %d, want 403", p.status)
	}
	owner := newBrowser(t, srv)
	owner.login("owner@example.com", "")
	p := owner.post("/console/compat/enable", nil)
	i := strings.Index(p.body, "payd_up_")
	if p.status != http.StatusOK || i < 0 {
		t.Fatalf("enable: %d", p.status)
	}
	key := p.body[i : i+len("payd_up_")+43]
	if res := srv.SendHeaders(http.MethodPost, "/api/verify-payment", `{"invoice_id":"x"}`, http.Header{"Rt-Uddoktapay-Api-Key": {key}}); res.Status != http.StatusNotFound {
		t.Fatalf("the console's key on verify-payment: %d %s (want 404 for an unknown invoice)", res.Status, res.Body)
	}
	if p := owner.get("/console/keys"); strings.Contains(p.body, key) || !strings.Contains(p.body, key[len(key)-4:]) {
		t.Error("the key is shown again, or its end is not")
	}
	if p := op.post("/console/compat/disable", nil); p.status != http.StatusForbidden {
		t.Errorf("an operator revoking the compat key: %d, want 403", p.status)
	}
	owner.get("/console/keys")
	if p := owner.post("/console/compat/disable", nil); p.status != http.StatusSeeOther && p.status != http.StatusOK {
		t.Fatalf("disable: %d", p.status)
	}
	if res := srv.SendHeaders(http.MethodPost, "/api/verify-payment", `{"invoice_id":"x"}`, http.Header{"Rt-Uddoktapay-Api-Key": {key}}); res.Status != http.StatusUnauthorized {
		t.Errorf("a revoked key: %d", res.Status)
	}
}
