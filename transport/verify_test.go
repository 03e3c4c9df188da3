package transport_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

func TestVerifyOverHTTP(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")

	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"v1"`}, kv{"metadata", `{"order":7}`}))
	id := str(dep.JSON, "id")
	endpoint := str(dep.JSON, "next_action", "verification", "endpoint")
	if endpoint != "/api/v1/deposits/"+id+"/verify" {
		t.Fatalf("endpoint %q", endpoint)
	}
	pay := h.SandboxPay(org, `{"channel":"bkash","transaction_id":"8n7a6d5ee7m","payer_phone":"+8801712345678","recipient_phone":"01811111111","amount":"500","status":"completed","type":"cash_out"}`)
	if pay.Status != 201 || str(pay.JSON, "transaction_id") != "8N7A6D5EE7M" || str(pay.JSON, "amount") != "500.00" {
		t.Fatalf("sandbox payment: %d %s", pay.Status, pay.Body)
	}

	// Rules of verify, over HTTP.
	redirectDep := h.CreateH2H(org, h2h(kv{"merchant_id", `"v-redirect"`}, kv{"payment_method", `"bkash"`}))
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
		{"redirect action", org, str(redirectDep.JSON, "id"), `{"provider_transaction_id":"ABC"}`, false, 409, "redirect_action", ""},
	}
	for _, tt := range rules {
		t.Run(tt.name, func(t *testing.T) {
			res := h.Do(tt.org, request{Path: "/api/v1/deposits/" + tt.id + "/verify", APIKey: tt.org.APIKey, Sign: !tt.unsigned, Body: tt.body})
			if res.Status != tt.wantStatus || res.ErrorCode() != tt.wantCode || !strings.HasPrefix(res.ErrorMessage(), tt.wantPrefix) {
				t.Fatalf("got %d %s", res.Status, res.Body)
			}
		})
	}

	queued := h.Verify(org, id, `{"provider_transaction_id":"  8n7a6d5ee7m "}`)
	if queued.Status != 202 {
		t.Fatalf("verify: %d %s", queued.Status, queued.Body)
	}
	assertKeys(t, queued.Body, "deposit_id", "attempt_id", "provider_transaction_id", "status", "attempts_used", "attempts_remaining")
	assertJSONField(t, queued.Body, "provider_transaction_id", `"8N7A6D5EE7M"`)
	assertJSONField(t, queued.Body, "status", `"processing"`)
	assertJSONField(t, queued.Body, "attempts_used", `1`)
	assertJSONField(t, queued.Body, "attempts_remaining", `2`)
	if !strings.HasPrefix(str(queued.JSON, "attempt_id"), "att_") {
		t.Fatalf("attempt_id %s", queued.Body)
	}
	processing := h.GetDeposit(org, id, true)
	assertJSONField(t, processing.Body, "status", `"processing"`)
	assertJSONField(t, processing.Body, "verification", `{"state":"processing","attempts_used":1,"attempts_remaining":2,"failure_code":null}`)
	if repeat := h.Verify(org, id, `{"provider_transaction_id":"8N7A6D5EE7M"}`); repeat.Status != 202 || str(repeat.JSON, "attempt_id") != str(queued.JSON, "attempt_id") {
		t.Fatalf("repeat while queued: %d %s", repeat.Status, repeat.Body)
	}
	if busy := h.Verify(org, id, `{"provider_transaction_id":"OTHER1"}`); busy.Status != 409 || busy.ErrorCode() != "attempt_in_progress" {
		t.Fatalf("second ID while queued: %d %s", busy.Status, busy.Body)
	}

	h.Work()
	done := h.GetDeposit(org, id, true)
	assertJSONField(t, done.Body, "status", `"succeeded"`)
	assertJSONField(t, done.Body, "next_action", `null`)
	assertJSONField(t, done.Body, "provider_transaction_id", `"8N7A6D5EE7M"`)
	assertJSONField(t, done.Body, "verification", `{"state":"succeeded","attempts_used":1,"attempts_remaining":0,"failure_code":null}`)
	assertJSONField(t, done.Body, "metadata", `{"order":7}`)

	resolved := h.Verify(org, id, `{"provider_transaction_id":"8n7a6d5ee7m"}`)
	if resolved.Status != 200 {
		t.Fatalf("repeat after success: %d %s", resolved.Status, resolved.Body)
	}
	assertKeys(t, resolved.Body, "deposit_id", "attempt_id", "provider_transaction_id", "status", "attempt_status", "deposit_status", "failure_code")
	assertJSONField(t, resolved.Body, "status", `"resolved"`)
	assertJSONField(t, resolved.Body, "attempt_status", `"succeeded"`)
	assertJSONField(t, resolved.Body, "deposit_status", `"succeeded"`)
	if res := h.Verify(org, id, `{"provider_transaction_id":"OTHER2"}`); res.Status != 409 || res.ErrorCode() != "deposit_terminal" {
		t.Fatalf("new ID after success: %d %s", res.Status, res.Body)
	}
	// The ID now belongs to that deposit, in every organization.
	h.AddWallet(other, "bkash", "cash_out", "01811111111", "Agent")
	otherDep := h.CreateH2H(other, h2h(kv{"merchant_id", `"v2"`}))
	if res := h.Verify(other, str(otherDep.JSON, "id"), `{"provider_transaction_id":"8N7A6D5EE7M"}`); res.Status != 409 || res.ErrorCode() != "transaction_id_used" {
		t.Fatalf("ID reused by another organization: %d %s", res.Status, res.Body)
	}
}

func TestVerifyFailuresOverHTTP(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	h.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"f1"`}))
	id := str(dep.JSON, "id")
	h.SandboxPay(org, `{"channel":"bkash","transaction_id":"UNDER1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"499.99","status":"completed"}`)
	h.Verify(org, id, `{"provider_transaction_id":"UNDER1"}`)
	h.Work()
	got := h.GetDeposit(org, id, true)
	assertJSONField(t, got.Body, "status", `"pending"`)
	assertJSONField(t, got.Body, "verification", `{"state":"awaiting_reference","attempts_used":1,"attempts_remaining":2,"failure_code":"amount_mismatch"}`)
	if str(got.JSON, "next_action", "type") != "display_instructions" {
		t.Fatalf("next_action gone after a failed attempt: %s", got.Body)
	}
	resolved := h.Verify(org, id, `{"provider_transaction_id":"under1"}`)
	assertJSONField(t, resolved.Body, "attempt_status", `"failed"`)
	assertJSONField(t, resolved.Body, "deposit_status", `"pending"`)
	assertJSONField(t, resolved.Body, "failure_code", `"amount_mismatch"`)

	// A provider outage delays the attempt; it resolves once the provider is back.
	outage := h.Do(org, request{Path: "/api/sandbox/outage", APIKey: org.APIKey, Body: `{"enabled":true}`})
	if outage.Status != 200 {
		t.Fatalf("outage: %d %s", outage.Status, outage.Body)
	}
	h.SandboxPay(org, `{"channel":"bkash","transaction_id":"GOOD1","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed"}`)
	h.Verify(org, id, `{"provider_transaction_id":"GOOD1"}`)
	h.Work()
	assertJSONField(t, h.GetDeposit(org, id, true).Body, "status", `"processing"`)
	h.Do(org, request{Path: "/api/sandbox/outage", APIKey: org.APIKey, Body: `{"enabled":false}`})
	h.Clock.Add(5 * time.Second)
	h.Work()
	assertJSONField(t, h.GetDeposit(org, id, true).Body, "status", `"succeeded"`)

	// The sandbox's own input is checked like any other.
	for _, body := range []string{
		`{"channel":"paypal","transaction_id":"X1X","payer_phone":"01712345678","amount":"1","status":"completed"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"123","amount":"1","status":"completed"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"01712345678","amount":"1.001","status":"completed"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"01712345678","amount":"1","status":"done"}`,
		`{"channel":"bkash","transaction_id":"X1X","payer_phone":"01712345678","amount":"1","status":"completed","completed_at":"yesterday"}`,
	} {
		if res := h.SandboxPay(org, body); res.Status != 400 || res.ErrorCode() != "invalid_request" {
			t.Errorf("sandbox payment %s: %d %s", body, res.Status, res.Body)
		}
	}
	if res := h.SandboxPay(org, `{"channel":"bkash","transaction_id":"GOOD1","payer_phone":"01712345678","amount":"1","status":"completed"}`); res.Status != 409 {
		t.Errorf("duplicate sandbox payment: %d %s", res.Status, res.Body)
	}
	if res := h.Do(org, request{Path: "/api/sandbox/payments", Body: `{}`}); res.Status != 401 {
		t.Errorf("sandbox payment without a key: %d", res.Status)
	}
}

// TestHostedCheckout drives the sandbox checkout page as a payer: pay,
// fail then pay, cancel, and let expire.
func TestHostedCheckout(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
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
		dep := h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"c1"`})})
		checkout := str(dep.JSON, "redirect_url")
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
		h.Work()
		if res := h.GetDeposit(org, str(dep.JSON, "id"), false); str(res.JSON, "status") != "pending" {
			t.Fatalf("after a failed payment: %s", res.Body)
		}
		post(checkout, "pay", url.Values{"payer_phone": {"01712345678"}, "outcome": {"completed"}})
		h.Work()
		res := h.GetDeposit(org, str(dep.JSON, "id"), false)
		assertJSONField(t, res.Body, "status", `"succeeded"`)
		assertJSONField(t, res.Body, "redirect_url", `null`)
		if tx := str(res.JSON, "bank_transaction_id"); !strings.HasPrefix(tx, "SBX") {
			t.Fatalf("bank_transaction_id %q", tx)
		}
		if !strings.Contains(page(checkout), "Return to the merchant") {
			t.Fatal("the finished page does not lead back to the merchant")
		}
	})
	t.Run("h2h redirect action paid", func(t *testing.T) {
		dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"c2"`}, kv{"payment_method", `"nagad"`}))
		checkout := str(dep.JSON, "next_action", "url")
		post(checkout, "pay", url.Values{"payer_phone": {"01712345678"}})
		h.Work()
		res := h.GetDeposit(org, str(dep.JSON, "id"), true)
		assertJSONField(t, res.Body, "status", `"succeeded"`)
		assertJSONField(t, res.Body, "next_action", `null`)
	})
	t.Run("h2h redirect action paid from another phone", func(t *testing.T) {
		dep := h.CreateH2H(org, h2h(kv{"merchant_id", `"c3"`}, kv{"payment_method", `"bkash"`}))
		post(str(dep.JSON, "next_action", "url"), "pay", url.Values{"payer_phone": {"01999999999"}})
		h.Work()
		res := h.GetDeposit(org, str(dep.JSON, "id"), true)
		assertJSONField(t, res.Body, "verification.failure_code", `"payer_mismatch"`)
	})
	t.Run("cancelled", func(t *testing.T) {
		dep := h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"c4"`})})
		checkout := str(dep.JSON, "redirect_url")
		if res := post(checkout, "cancel", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("cancel: %d", res.StatusCode)
		}
		assertJSONField(t, h.GetDeposit(org, str(dep.JSON, "id"), false).Body, "status", `"cancelled"`)
		post(checkout, "pay", url.Values{"payer_phone": {"01712345678"}})
		h.Work()
		assertJSONField(t, h.GetDeposit(org, str(dep.JSON, "id"), false).Body, "status", `"cancelled"`)
	})
	t.Run("expired", func(t *testing.T) {
		dep := h.Do(org, request{APIKey: org.APIKey, Body: redirect(kv{"merchant_id", `"c5"`})})
		h.Clock.Add(30 * time.Minute)
		h.Work()
		assertJSONField(t, h.GetDeposit(org, str(dep.JSON, "id"), false).Body, "status", `"expired"`)
		if !strings.Contains(page(str(dep.JSON, "redirect_url")), "Return to the merchant") {
			t.Fatal("the expired page does not lead back")
		}
	})
}
