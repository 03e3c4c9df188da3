package transport_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport/signing"
)

// TestRules checks, through HTTP over a real SQLite file, one row per
// validation, authentication and routing rule of the interface and the
// contract: the status, error.code and the field (or reason) the message
// names.
func TestRules(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	noH2H := h.NewOrg(engine.OrganizationSettings{})
	noDeposits := h.NewOrg(engine.OrganizationSettings{DepositsEnabled: ptr(false), H2HEnabled: ptr(true)})
	for _, o := range []*testOrg{org, other, noH2H, noDeposits} {
		h.AddWallet(o, "bkash", "cash_out", "01811111111", "Agent One")
		h.AddWallet(o, "bkash", "make_payment", "01822222222", "Merchant One")
	}
	revoked := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	if _, err := h.Engine.RevokeAPIKey(t.Context(), revoked.KeyID); err != nil {
		t.Fatal(err)
	}
	otherDeposit := h.Do(other, request{APIKey: other.APIKey, Body: redirect(kv{"merchant_id", `"other-1"`})})
	if otherDeposit.Status != 200 {
		t.Fatalf("setup: %d %s", otherDeposit.Status, otherDeposit.Body)
	}
	now := h.Clock.Now()
	ts := signing.Timestamp(now)
	validSig := func(b string) string {
		return signing.Sign([]byte(org.Secret), ts, "POST", "/api/v1/deposits", []byte(b))
	}

	tests := []struct {
		name string
		org  *testOrg // default org
		req  request  // apiKey defaults to the org's; "-" sends none
		// wantStatus, wantCode and wantMessage: the message must start
		// with wantMessage (a "<field>:" prefix or a 401 reason).
		wantStatus  int
		wantCode    string
		wantMessage string
	}{
		// Authentication.
		{"no api key", nil, request{APIKey: "-", Body: redirect()}, 401, "unauthorized", "missing_api_key"},
		{"basic auth instead of bearer", nil, request{APIKey: "-", Header: map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, Body: redirect()}, 401, "unauthorized", "missing_api_key"},
		{"unknown api key", nil, request{APIKey: "payd_sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Body: redirect()}, 401, "unauthorized", "invalid_api_key"},
		{"malformed api key", nil, request{APIKey: "sk_live_x", Body: redirect()}, 401, "unauthorized", "invalid_api_key"},
		{"revoked api key", revoked, request{Body: redirect()}, 401, "unauthorized", "invalid_api_key"},
		{"h2h without signature", nil, request{Body: h2h()}, 401, "unauthorized", "missing_signature"},
		{"h2h without timestamp", nil, request{Body: h2h(), Signature: validSig(h2h())}, 401, "unauthorized", "missing_signature"},
		{"h2h signature without v1=", nil, request{Body: h2h(), Timestamp: ts, Signature: strings.TrimPrefix(validSig(h2h()), "v1=")}, 401, "unauthorized", "malformed_signature"},
		{"h2h signature in std base64", nil, request{Body: h2h(), Timestamp: ts, Signature: "v1=ab+/cd=="}, 401, "unauthorized", "malformed_signature"},
		{"h2h timestamp not digits", nil, request{Body: h2h(), Timestamp: "1.5e9", Signature: validSig(h2h())}, 401, "unauthorized", "malformed_signature"},
		{"h2h timestamp 301 s old", nil, request{Body: h2h(), Timestamp: signing.Timestamp(now.Add(-301 * time.Second)), Signature: validSig(h2h())}, 401, "unauthorized", "stale_signature"},
		{"h2h timestamp 301 s ahead", nil, request{Body: h2h(), Timestamp: signing.Timestamp(now.Add(301 * time.Second)), Signature: validSig(h2h())}, 401, "unauthorized", "stale_signature"},
		{"h2h signed with another secret", nil, request{Body: h2h(), Sign: true, Secret: other.Secret}, 401, "unauthorized", "invalid_signature"},
		{"h2h signature over another body", nil, request{Body: h2h(), Timestamp: ts, Signature: validSig(h2h(kv{"amount", `"501"`}))}, 401, "unauthorized", "invalid_signature"},
		{"h2h signature over another timestamp", nil, request{Body: h2h(), Timestamp: signing.Timestamp(now.Add(time.Second)), Signature: validSig(h2h())}, 401, "unauthorized", "invalid_signature"},
		{"h2h signature over another target", nil, request{Body: h2h(), Timestamp: ts, Signature: signing.Sign([]byte(org.Secret), ts, "POST", "/v1/deposits", []byte(h2h()))}, 401, "unauthorized", "invalid_signature"},

		// Body strictness.
		{"body is not json", nil, request{Body: `{"amount":`}, 400, "invalid_request", "body:"},
		{"body is an array", nil, request{Body: `[` + redirect() + `]`}, 400, "invalid_request", "body:"},
		{"body has two objects", nil, request{Body: redirect() + redirect()}, 400, "invalid_request", "body:"},
		{"body is empty", nil, request{Body: ""}, 400, "invalid_request", "body:"},
		{"body is invalid utf-8", nil, request{Body: redirect(kv{"merchant_id", "\"a\xffb\""})}, 400, "invalid_request", "body:"},
		{"body over 64 KiB", nil, request{Body: redirect(kv{"metadata", `{"pad":"` + strings.Repeat("x", 64<<10) + `"}`})}, 413, "request_too_large", "body:"},
		{"unknown field", nil, request{Body: redirect(kv{"status", `"succeeded"`})}, 400, "invalid_request", "status: unknown field"},
		{"payer on a redirect deposit", nil, request{Body: redirect(kv{"payer", `{"phone":"01712345678"}`})}, 400, "invalid_request", "payer: unknown field"},
		{"duplicate key", nil, request{Body: `{"amount":"500","amount":"600","payment_method":"bkash","redirect_url":"https://shop.example/r","merchant_id":"d"}`}, 400, "invalid_request", "amount: duplicate key"},
		{"duplicate key in metadata", nil, request{Body: redirect(kv{"metadata", `{"a":1,"a":2}`})}, 400, "invalid_request", "metadata.a: duplicate key"},
		{"amount as a json number", nil, request{Body: redirect(kv{"amount", `500`})}, 400, "invalid_request", "amount:"},
		{"merchant_id as a number", nil, request{Body: redirect(kv{"merchant_id", `42`})}, 400, "invalid_request", "merchant_id:"},
		{"payment_method null", nil, request{Body: redirect(kv{"payment_method", `null`})}, 400, "invalid_request", "payment_method:"},
		{"checkout_mode not a string", nil, request{Body: redirect(kv{"checkout_mode", `true`})}, 400, "invalid_request", "checkout_mode:"},
		{"metadata is an array", nil, request{Body: redirect(kv{"metadata", `[1,2]`})}, 400, "invalid_request", "metadata:"},
		{"metadata is a string", nil, request{Body: redirect(kv{"metadata", `"x"`})}, 400, "invalid_request", "metadata:"},
		{"metadata nested too deeply", nil, request{Body: redirect(kv{"metadata", strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)})}, 400, "invalid_request", "metadata"},
		{"payer is a string", nil, request{Sign: true, Body: h2h(kv{"payer", `"01712345678"`})}, 400, "invalid_request", "payer:"},
		{"payer.phone is a number", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":1712345678}`})}, 400, "invalid_request", "payer.phone:"},
		{"payer has an unknown field", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"01712345678","name":"x"}`})}, 400, "invalid_request", "payer.name: unknown field"},

		// Checkout mode.
		{"checkout_mode unknown", nil, request{Body: redirect(kv{"checkout_mode", `"H2H"`})}, 400, "invalid_request", "checkout_mode:"},
		{"checkout_mode redirect explicit", nil, request{Body: redirect(kv{"checkout_mode", `"redirect"`})}, 200, "", ""},
		// The wrong field is named, not its consequence (payer unknown to a
		// redirect body): the mode is checked before the fields it allows.
		{"checkout_mode H2H on a signed h2h body", nil, request{Sign: true, Body: h2h(kv{"checkout_mode", `"H2H"`})}, 400, "invalid_request", "checkout_mode: must be redirect or h2h"},
		{"checkout_mode popup on a signed h2h body", nil, request{Sign: true, Body: h2h(kv{"checkout_mode", `"popup"`})}, 400, "invalid_request", "checkout_mode: must be redirect or h2h"},

		// Amount syntax (both modes).
		{"amount missing", nil, request{Body: redirect(kv{"amount", drop})}, 400, "invalid_request", "amount: is required"},
		{"amount three decimals", nil, request{Body: redirect(kv{"amount", `"500.001"`})}, 400, "invalid_request", "amount:"},
		{"amount negative", nil, request{Body: redirect(kv{"amount", `"-500"`})}, 400, "invalid_request", "amount:"},
		{"amount with plus sign", nil, request{Body: redirect(kv{"amount", `"+500"`})}, 400, "invalid_request", "amount:"},
		{"amount with exponent", nil, request{Body: redirect(kv{"amount", `"5e2"`})}, 400, "invalid_request", "amount:"},
		{"amount with spaces", nil, request{Body: redirect(kv{"amount", `" 500"`})}, 400, "invalid_request", "amount:"},
		{"amount with leading zero", nil, request{Body: redirect(kv{"amount", `"0500"`})}, 400, "invalid_request", "amount:"},
		{"amount with trailing dot", nil, request{Body: redirect(kv{"amount", `"500."`})}, 400, "invalid_request", "amount:"},
		{"amount with comma", nil, request{Body: redirect(kv{"amount", `"1,000"`})}, 400, "invalid_request", "amount:"},
		{"amount empty", nil, request{Body: redirect(kv{"amount", `""`})}, 400, "invalid_request", "amount:"},
		{"h2h amount three decimals", nil, request{Sign: true, Body: h2h(kv{"amount", `"500.001"`})}, 400, "invalid_request", "amount:"},

		// Amount ranges, inclusive.
		{"h2h amount 100 is the minimum", nil, request{Sign: true, Body: h2h(kv{"amount", `"100"`})}, 201, "", ""},
		{"h2h amount 99.99 is below", nil, request{Sign: true, Body: h2h(kv{"amount", `"99.99"`})}, 400, "invalid_request", "amount:"},
		{"h2h amount 25000 is the maximum", nil, request{Sign: true, Body: h2h(kv{"amount", `"25000.00"`})}, 201, "", ""},
		{"h2h amount 25000.01 is above", nil, request{Sign: true, Body: h2h(kv{"amount", `"25000.01"`})}, 400, "invalid_request", "amount:"},
		{"h2h amount zero", nil, request{Sign: true, Body: h2h(kv{"amount", `"0"`})}, 400, "invalid_request", "amount:"},
		{"redirect bkash 100", nil, request{Body: redirect(kv{"amount", `"100"`})}, 200, "", ""},
		{"redirect bkash 99.99", nil, request{Body: redirect(kv{"amount", `"99.99"`})}, 400, "invalid_request", "amount:"},
		{"redirect bkash 25000", nil, request{Body: redirect(kv{"amount", `"25000"`})}, 200, "", ""},
		{"redirect bkash 25000.01", nil, request{Body: redirect(kv{"amount", `"25000.01"`})}, 400, "invalid_request", "amount:"},
		{"redirect bank 25000", nil, request{Body: redirect(kv{"payment_method", `"bank"`}, kv{"amount", `"25000"`})}, 200, "", ""},
		{"redirect bank 24999.99", nil, request{Body: redirect(kv{"payment_method", `"bank"`}, kv{"amount", `"24999.99"`})}, 400, "invalid_request", "amount:"},
		{"redirect bank 300000", nil, request{Body: redirect(kv{"payment_method", `"bank"`}, kv{"amount", `"300000"`})}, 200, "", ""},
		{"redirect bank 300000.01", nil, request{Body: redirect(kv{"payment_method", `"bank"`}, kv{"amount", `"300000.01"`})}, 400, "invalid_request", "amount:"},

		// Enums.
		{"redirect payment_method unknown", nil, request{Body: redirect(kv{"payment_method", `"paypal"`})}, 400, "invalid_request", "payment_method:"},
		{"redirect payment_method in upper case", nil, request{Body: redirect(kv{"payment_method", `"BKASH"`})}, 400, "invalid_request", "payment_method:"},
		{"redirect payment_method bangla_qr_merchant", nil, request{Body: redirect(kv{"payment_method", `"bangla_qr_merchant"`})}, 200, "", ""},
		{"redirect payment_method upi", nil, request{Body: redirect(kv{"payment_method", `"upi"`})}, 200, "", ""},
		{"h2h payment_method upay is redirect-only", nil, request{Sign: true, Body: h2h(kv{"payment_method", `"upay"`})}, 400, "invalid_request", "payment_method:"},
		{"h2h payment_method bank is redirect-only", nil, request{Sign: true, Body: h2h(kv{"payment_method", `"bank"`})}, 400, "invalid_request", "payment_method:"},
		{"payment_method missing", nil, request{Body: redirect(kv{"payment_method", drop})}, 400, "invalid_request", "payment_method: is required"},

		// redirect_url.
		{"redirect_url missing", nil, request{Body: redirect(kv{"redirect_url", drop})}, 400, "invalid_request", "redirect_url: is required"},
		{"redirect_url relative", nil, request{Body: redirect(kv{"redirect_url", `"/return"`})}, 400, "invalid_request", "redirect_url:"},
		{"redirect_url without host", nil, request{Body: redirect(kv{"redirect_url", `"https://"`})}, 400, "invalid_request", "redirect_url:"},
		{"redirect_url ftp", nil, request{Body: redirect(kv{"redirect_url", `"ftp://shop.example/r"`})}, 400, "invalid_request", "redirect_url:"},
		{"redirect_url javascript", nil, request{Body: redirect(kv{"redirect_url", `"javascript:alert(1)"`})}, 400, "invalid_request", "redirect_url:"},
		{"redirect_url with spaces", nil, request{Body: redirect(kv{"redirect_url", `"https://shop.example/a b"`})}, 400, "invalid_request", "redirect_url:"},
		{"h2h redirect_url relative", nil, request{Sign: true, Body: h2h(kv{"redirect_url", `"return"`})}, 400, "invalid_request", "redirect_url:"},

		// merchant_id.
		{"merchant_id missing", nil, request{Body: redirect(kv{"merchant_id", drop})}, 400, "invalid_request", "merchant_id: is required"},
		{"merchant_id empty", nil, request{Body: redirect(kv{"merchant_id", `""`})}, 400, "invalid_request", "merchant_id:"},
		{"merchant_id too long", nil, request{Body: redirect(kv{"merchant_id", `"` + strings.Repeat("m", 256) + `"`})}, 400, "invalid_request", "merchant_id:"},
		{"merchant_id with a NUL", nil, request{Body: redirect(kv{"merchant_id", `"a\u0000b"`})}, 400, "invalid_request", "merchant_id:"},
		{"merchant_id of one character", nil, request{Body: redirect(kv{"merchant_id", `"x"`})}, 200, "", ""},

		// payer.phone (H2H).
		{"h2h payer missing", nil, request{Sign: true, Body: h2h(kv{"payer", drop})}, 400, "invalid_request", "payer: is required"},
		{"h2h payer.phone missing", nil, request{Sign: true, Body: h2h(kv{"payer", `{}`})}, 400, "invalid_request", "payer.phone: is required"},
		{"phone with 012 prefix", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"01212345678"}`})}, 400, "invalid_request", "payer.phone:"},
		{"phone too short", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"0171234567"}`})}, 400, "invalid_request", "payer.phone:"},
		{"phone with spaces", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"017 1234 5678"}`})}, 400, "invalid_request", "payer.phone:"},
		{"phone 00880 form", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"008801712345678"}`})}, 400, "invalid_request", "payer.phone:"},
		{"phone +880 form", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"+8801712345678"}`})}, 201, "", ""},
		{"phone 880 form", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"8801912345678"}`})}, 201, "", ""},
		{"phone local 013 form", nil, request{Sign: true, Body: h2h(kv{"payer", `{"phone":"01312345678"}`})}, 201, "", ""},

		// metadata limits.
		{"metadata with 50 keys", nil, request{Body: redirect(kv{"metadata", metadataKeys(50)})}, 200, "", ""},
		{"metadata with 51 keys", nil, request{Body: redirect(kv{"metadata", metadataKeys(51)})}, 400, "invalid_request", "metadata:"},
		{"metadata of 8192 bytes", nil, request{Body: redirect(kv{"metadata", metadataOfSize(8192)})}, 200, "", ""},
		{"metadata of 8193 bytes", nil, request{Body: redirect(kv{"metadata", metadataOfSize(8193)})}, 400, "invalid_request", "metadata:"},
		{"metadata null is none", nil, request{Body: redirect(kv{"metadata", `null`})}, 200, "", ""},

		// Organization switches.
		{"deposits disabled", noDeposits, request{Body: redirect()}, 403, "forbidden", ""},
		{"h2h disabled", noH2H, request{Sign: true, Body: h2h()}, 403, "forbidden", ""},
		{"redirect allowed when h2h disabled", noH2H, request{Body: redirect()}, 200, "", ""},

		// Receiving wallets.
		{"no eligible wallet", nil, request{Sign: true, Body: h2h(kv{"payment_method", `"nagad_agent"`})}, 503, "method_unavailable", "payment_method:"},

		// Reads, isolation and routing.
		{"get another organization's deposit", nil, request{Method: "GET", Path: "/api/v1/deposits/" + str(otherDeposit.JSON, "id")}, 404, "not_found", ""},
		{"get an unknown deposit", nil, request{Method: "GET", Path: "/api/v1/deposits/dep_unknown"}, 404, "not_found", ""},
		{"get an overlong id", nil, request{Method: "GET", Path: "/api/v1/deposits/" + strings.Repeat("a", 200)}, 404, "not_found", ""},
		{"get without api key", nil, request{APIKey: "-", Method: "GET", Path: "/api/v1/deposits/dep_unknown"}, 401, "unauthorized", "missing_api_key"},
		{"unknown endpoint", nil, request{Method: "GET", Path: "/api/v1/nothing"}, 404, "not_found", ""},
		{"wrong method", nil, request{Method: "DELETE", Path: "/api/v1/deposits"}, 405, "method_not_allowed", ""}, // with Allow: POST
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.org
			if o == nil {
				o = org
			}
			req := tt.req
			switch req.APIKey {
			case "":
				req.APIKey = o.APIKey
			case "-":
				req.APIKey = ""
			}
			req.Body = strings.ReplaceAll(req.Body, `"MID"`, fmt.Sprintf(`"rule-%d"`, i))
			res := h.Do(o, req)
			if res.Status != tt.wantStatus {
				t.Fatalf("status %d, want %d; body %s", res.Status, tt.wantStatus, res.Body)
			}
			if tt.wantCode == "" {
				if res.Status >= 300 {
					t.Fatalf("unexpected error body %s", res.Body)
				}
				return
			}
			if got := res.ErrorCode(); got != tt.wantCode {
				t.Errorf("error.code %q, want %q (%s)", got, tt.wantCode, res.Body)
			}
			if msg := res.ErrorMessage(); msg == "" || !strings.HasPrefix(msg, tt.wantMessage) {
				t.Errorf("error.message %q, want prefix %q", msg, tt.wantMessage)
			}
			if ct := res.Status; ct >= 400 && !strings.Contains(string(res.Body), `"error":{"code":`) {
				t.Errorf("not the error envelope: %s", res.Body)
			}
		})
	}
}

func metadataKeys(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// metadataOfSize is a compact metadata object of exactly n bytes.
func metadataOfSize(n int) string {
	const frame = len(`{"pad":""}`)
	return `{"pad":"` + strings.Repeat("x", n-frame) + `"}`
}
