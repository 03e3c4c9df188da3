package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// verify submits a transaction ID for a deposit, signed.
func (h *harness) verify(org *testOrg, id, body string) *response {
	h.t.Helper()
	return h.do(org, request{path: "/api/v1/deposits/" + id + "/verify", apiKey: org.apiKey, sign: true, body: body})
}

// sandboxPay records a simulated wallet payment.
func (h *harness) sandboxPay(org *testOrg, body string) *response {
	h.t.Helper()
	return h.do(org, request{path: "/api/sandbox/payments", apiKey: org.apiKey, body: body})
}

func (h *harness) work() {
	h.t.Helper()
	if _, err := h.app.engine.ProcessAttempts(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.app.engine.ProcessPayouts(context.Background()); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.app.engine.ExpireDeposits(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

func TestVerifyOverHTTP(t *testing.T) {
	h := newHarness(t)
	org := h.newOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := h.newOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.addWallet(org, "bkash", "cash_out", "01811111111", "Agent")

	dep := h.createH2H(org, h2h(kv{"merchant_id", `"v1"`}, kv{"metadata", `{"order":7}`}))
	id := str(dep.json, "id")
	endpoint := str(dep.json, "next_action", "verification", "endpoint")
	if endpoint != "/api/v1/deposits/"+id+"/verify" {
		t.Fatalf("endpoint %q", endpoint)
	}
	pay := h.sandboxPay(org, `{"channel":"bkash","transaction_id":"8n7a6d5ee7m","payer_phone":"+8801712345678","recipient_phone":"01811111111","amount":"500","status":"completed","type":"cash_out"}`)
	if pay.status != 201 || str(pay.json, "transaction_id") != "8N7A6D5EE7M" || str(pay.json, "amount") != "500.00" {
		t.Fatalf("sandbox payment: %d %s", pay.status, pay.body)
	}

	// Rules of verify, over HTTP.
	redirectDep := h.createH2H(org, h2h(kv{"merchant_id", `"v-redirect"`}, kv{"payment_method", `"bkash"`}))
	rules := []struct {
		name       string
		org        *testOrg
		id, body   string
		unsigned   bool
		wantStatus int
		wantCode   string
		wantPrefix string
	}{
		{"unsigned", org, id, `{"provider_transaction_id":"ABC"}`, true, 401, "unauthorized", "missing_signature"},
		{"another organization's deposit", other, id, `{"provider_transaction_id":"ABC"}`, false, 404, "not_found", ""},
		{"unknown deposit", org, "dep_nope", `{"provider_transaction_id":"ABC"}`, false, 404, "not_found", ""},
		{"missing transaction ID", org, id, `{}`, false, 400, "invalid_request", "provider_transaction_id: is required"},
		{"transaction ID of two characters", org, id, `{"provider_transaction_id":" ab "}`, false, 400, "invalid_request", "provider_transaction_id:"},
		{"transaction ID of 65 characters", org, id, `{"provider_transaction_id":"` + strings.Repeat("A", 65) + `"}`, false, 400, "invalid_request", "provider_transaction_id:"},
		{"transaction ID as a number", org, id, `{"provider_transaction_id":12345}`, false, 400, "invalid_request", "provider_transaction_id:"},
		{"unknown field", org, id, `{"provider_transaction_id":"ABC","amount":"1"}`, false, 400, "invalid_request", "amount: unknown field"},
		{"redirect action", org, str(redirectDep.json, "id"), `{"provider_transaction_id":"ABC"}`, false, 409, "redirect_action", ""},
	}
	for _, tt := range rules {
		t.Run(tt.name, func(t *testing.T) {
			res := h.do(tt.org, request{path: "/api/v1/deposits/" + tt.id + "/verify", apiKey: tt.org.apiKey, sign: !tt.unsigned, body: tt.body})
			if res.status != tt.wantStatus || res.errorCode() != tt.wantCode || !strings.HasPrefix(res.errorMessage(), tt.wantPrefix) {
				t.Fatalf("got %d %s", res.status, res.body)
			}
		})
	}

	queued := h.verify(org, id, `{"provider_transaction_id":"  8n7a6d5ee7m "}`)
	if queued.status != 202 {
		t.Fatalf("verify: %d %s", queued.status, queued.body)
	}
	assertKeys(t, queued.body, "deposit_id", "attempt_id", "provider_transaction_id", "status", "attempts_used", "attempts_remaining")
	assertJSONField(t, queued.body, "provider_transaction_id", `"8N7A6D5EE7M"`)
	assertJSONField(t, queued.body, "status", `"processing"`)
	assertJSONField(t, queued.body, "attempts_used", `1`)
	assertJSONField(t, queued.body, "attempts_remaining", `2`)
	if !strings.HasPrefix(str(queued.json, "attempt_id"), "att_") {
		t.Fatalf("attempt_id %s", queued.body)
	}
	processing := h.getDeposit(org, id, true)
	assertJSONField(t, processing.body, "status", `"processing"`)
	assertJSONField(t, processing.body, "verification", `{"state":"processing","attempts_used":1,"attempts_remaining":2,"failure_code":null}`)
	if repeat := h.verify(org, id, `{"provider_transaction_id":"8N7A6D5EE7M"}`); repeat.status != 202 || str(repeat.json, "attempt_id") != str(queued.json, "attempt_id") {
		t.Fatalf("repeat while queued: %d %s", repeat.status, repeat.body)
	}
	if busy := h.verify(org, id, `{"provider_transaction_id":"OTHER1"}`); busy.status != 409 || busy.errorCode() != "attempt_in_progress" {
		t.Fatalf("second ID while queued: %d %s", busy.status, busy.body)
	}

	h.work()
	done := h.getDeposit(org, id, true)
	assertJSONField(t, done.body, "status", `"succeeded"`)
	assertJSONField(t, done.body, "next_action", `null`)
	assertJSONField(t, done.body, "provider_transaction_id", `"8N7A6D5EE7M"`)
	assertJSONField(t, done.body, "verification", `{"state":"succeeded","attempts_used":1,"attempts_remaining":0,"failure_code":null}`)
	assertJSONField(t, done.body, "metadata", `{"order":7}`)

	resolved := h.verify(org, id, `{"provider_transaction_id":"8n7a6d5ee7m"}`)
	if resolved.status != 200 {
		t.Fatalf("repeat after success: %d %s", resolved.status, resolved.body)
	}
	assertKeys(t, resolved.body, "deposit_id", "attempt_id", "provider_transaction_id", "status", "attempt_status", "deposit_status", "failure_code")
	assertJSONField(t, resolved.body, "status", `"resolved"`)
	assertJSONField(t, resolved.body, "attempt_status", `"succeeded"`)
	assertJSONField(t, resolved.body, "deposit_status", `"succeeded"`)
	if res := h.verify(org, id, `{"provider_transaction_id":"OTHER2"}`); res.status != 409 || res.errorCode() != "deposit_terminal" {
		t.Fatalf("new ID after success: %d %s", res.status, res.body)
	}
	// The ID now belongs to that deposit, in every organization.
	h.addWallet(other, "bkash", "cash_out", "01811111111", "Agent")
	otherDep := h.createH2H(other, h2h(kv{"merchant_id", `"v2"`}))
	if res := h.verify(other, str(otherDep.json, "id"), `{"provider_transaction_id":"8N7A6D5EE7M"}`); res.status != 409 || res.errorCode() != "transaction_id_used" {
		t.Fatalf("ID reused by another organization: %d %s", res.status, res.body)
	}
}

func TestVerifyFailuresOverHTTP(t *testing.T) {
	h := newHarness(t)
	org := h.newOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.addWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dep := h.createH2H(org, h2h(kv{"merchant_id", `"f1"`}))
	id := str(dep.json, "id")
	h.sandboxPay(org, `{"channel":"bkash","transaction_id":"UNDER1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"499.99","status":"completed"}`)
	h.verify(org, id, `{"provider_transaction_id":"UNDER1"}`)
	h.work()
	got := h.getDeposit(org, id, true)
	assertJSONField(t, got.body, "status", `"pending"`)
	assertJSONField(t, got.body, "verification", `{"state":"awaiting_reference","attempts_used":1,"attempts_remaining":2,"failure_code":"amount_mismatch"}`)
	if str(got.json, "next_action", "type") != "display_instructions" {
		t.Fatalf("next_action gone after a failed attempt: %s", got.body)
	}
	resolved := h.verify(org, id, `{"provider_transaction_id":"under1"}`)
	assertJSONField(t, resolved.body, "attempt_status", `"failed"`)
	assertJSONField(t, resolved.body, "deposit_status", `"pending"`)
	assertJSONField(t, resolved.body, "failure_code", `"amount_mismatch"`)

	// A provider outage delays the attempt; it resolves once the provider is back.
	outage := h.do(org, request{path: "/api/sandbox/outage", apiKey: org.apiKey, body: `{"enabled":true}`})
	if outage.status != 200 {
		t.Fatalf("outage: %d %s", outage.status, outage.body)
	}
	h.sandboxPay(org, `{"channel":"bkash","transaction_id":"GOOD1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`)
	h.verify(org, id, `{"provider_transaction_id":"GOOD1"}`)
	h.work()
	assertJSONField(t, h.getDeposit(org, id, true).body, "status", `"processing"`)
	h.do(org, request{path: "/api/sandbox/outage", apiKey: org.apiKey, body: `{"enabled":false}`})
	h.clock.Add(5 * time.Second)
	h.work()
	assertJSONField(t, h.getDeposit(org, id, true).body, "status", `"succeeded"`)

	// The sandbox's own input is checked like any other.
	for _, body := range []string{
		`{"channel":"paypal","transaction_id":"X1X","payer_phone":"01712345678","amount":"1","status":"completed"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"123","amount":"1","status":"completed"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"01712345678","amount":"1.001","status":"completed"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"01712345678","amount":"1","status":"done"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"01712345678","amount":"1","status":"completed","completed_at":"yesterday"}`,
	} {
		if res := h.sandboxPay(org, body); res.status != 400 || res.errorCode() != "invalid_request" {
			t.Errorf("sandbox payment %s: %d %s", body, res.status, res.body)
		}
	}
	if res := h.sandboxPay(org, `{"channel":"bkash","transaction_id":"GOOD1","payer_phone":"01712345678","amount":"1","status":"completed"}`); res.status != 409 {
		t.Errorf("duplicate sandbox payment: %d %s", res.status, res.body)
	}
	if res := h.do(org, request{path: "/api/sandbox/payments", body: `{}`}); res.status != 401 {
		t.Errorf("sandbox payment without a key: %d", res.status)
	}
}

// TestHostedCheckout drives the sandbox checkout page as a payer: pay,
// fail then pay, cancel, and let expire.
func TestHostedCheckout(t *testing.T) {
	h := newHarness(t)
	org := h.newOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(checkoutURL, action string, form url.Values) *http.Response {
		t.Helper()
		res, err := noRedirects.PostForm(checkoutURL+"/"+action, form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	page := func(checkoutURL string) string {
		t.Helper()
		res, err := http.Get(checkoutURL)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return b.String()
	}

	t.Run("redirect deposit paid", func(t *testing.T) {
		dep := h.do(org, request{apiKey: org.apiKey, body: redirect(kv{"merchant_id", `"c1"`})})
		checkout := str(dep.json, "redirect_url")
		if !strings.Contains(page(checkout), `action="/checkout/`) {
			t.Fatal("the sandbox checkout offers no pay button")
		}
		// A failed payment first: the deposit stays payable.
		if res := post(checkout, "pay", url.Values{"payer_phone": {"01712345678"}, "outcome": {"failed"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("pay: %d", res.StatusCode)
		}
		if !strings.Contains(page(checkout), "verifying") {
			t.Fatal("the page does not say the payment is being verified")
		}
		h.work()
		if res := h.getDeposit(org, str(dep.json, "id"), false); str(res.json, "status") != "pending" {
			t.Fatalf("after a failed payment: %s", res.body)
		}
		post(checkout, "pay", url.Values{"payer_phone": {"01712345678"}, "outcome": {"completed"}})
		h.work()
		res := h.getDeposit(org, str(dep.json, "id"), false)
		assertJSONField(t, res.body, "status", `"succeeded"`)
		assertJSONField(t, res.body, "redirect_url", `null`)
		if tx := str(res.json, "bank_transaction_id"); !strings.HasPrefix(tx, "SBX") {
			t.Fatalf("bank_transaction_id %q", tx)
		}
		if !strings.Contains(page(checkout), "Return to the merchant") {
			t.Fatal("the finished page does not lead back to the merchant")
		}
	})
	t.Run("h2h redirect action paid", func(t *testing.T) {
		dep := h.createH2H(org, h2h(kv{"merchant_id", `"c2"`}, kv{"payment_method", `"nagad"`}))
		checkout := str(dep.json, "next_action", "url")
		post(checkout, "pay", url.Values{"payer_phone": {"01712345678"}})
		h.work()
		res := h.getDeposit(org, str(dep.json, "id"), true)
		assertJSONField(t, res.body, "status", `"succeeded"`)
		assertJSONField(t, res.body, "next_action", `null`)
	})
	t.Run("h2h redirect action paid from another phone", func(t *testing.T) {
		dep := h.createH2H(org, h2h(kv{"merchant_id", `"c3"`}, kv{"payment_method", `"bkash"`}))
		post(str(dep.json, "next_action", "url"), "pay", url.Values{"payer_phone": {"01999999999"}})
		h.work()
		res := h.getDeposit(org, str(dep.json, "id"), true)
		assertJSONField(t, res.body, "verification.failure_code", `"payer_mismatch"`)
	})
	t.Run("cancelled", func(t *testing.T) {
		dep := h.do(org, request{apiKey: org.apiKey, body: redirect(kv{"merchant_id", `"c4"`})})
		checkout := str(dep.json, "redirect_url")
		if res := post(checkout, "cancel", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("cancel: %d", res.StatusCode)
		}
		assertJSONField(t, h.getDeposit(org, str(dep.json, "id"), false).body, "status", `"cancelled"`)
		post(checkout, "pay", url.Values{"payer_phone": {"01712345678"}})
		h.work()
		assertJSONField(t, h.getDeposit(org, str(dep.json, "id"), false).body, "status", `"cancelled"`)
	})
	t.Run("expired", func(t *testing.T) {
		dep := h.do(org, request{apiKey: org.apiKey, body: redirect(kv{"merchant_id", `"c5"`})})
		h.clock.Add(30 * time.Minute)
		h.work()
		assertJSONField(t, h.getDeposit(org, str(dep.json, "id"), false).body, "status", `"expired"`)
		if !strings.Contains(page(str(dep.json, "redirect_url")), "Return to the merchant") {
			t.Fatal("the expired page does not lead back")
		}
	})
}
