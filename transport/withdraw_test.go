package transport_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
)

func TestWithdrawalsOverHTTP(t *testing.T) {
	h := newHarness(t, paydtest.WithSandbox(sandbox.Config{PayoutDelay: 2 * time.Second, UnavailablePayoutMethods: []string{"upay"}}))
	org := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true), WithdrawCommissionPercent: ptr(dec("1")), WithdrawCommissionFixed: ptr(dec("5"))})
	other := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	disabled := h.NewOrg(engine.OrganizationSettings{})
	h.Fund(org, "400000")
	if got := h.Balance(org); got != `{"currency":"BDT","available":"400000.00","held":"0.00"}`+"\n" {
		t.Fatalf("balance %s", got)
	}

	tests := []struct {
		name        string
		org         *testOrg
		body        string
		apiKey      string
		wantStatus  int
		wantCode    string
		wantMessage string
	}{
		{"no api key", org, withdrawal(), "-", 401, "unauthorized", "missing_api_key"},
		{"wallet below 100", org, withdrawal(kv{"amount", `"99.99"`}), "", 400, "invalid_request", "amount:"},
		{"wallet above 25000", org, withdrawal(kv{"amount", `"25000.01"`}), "", 400, "invalid_request", "amount:"},
		{"bank below 50000", org, withdrawal(kv{"payment_method", `"bank"`}, kv{"phone", `"1234567890"`}, kv{"amount", `"49999.99"`}), "", 400, "invalid_request", "amount:"},
		{"bank above 300000", org, withdrawal(kv{"payment_method", `"bank"`}, kv{"phone", `"1234567890"`}, kv{"amount", `"300000.01"`}), "", 400, "invalid_request", "amount:"},
		{"amount as a number", org, withdrawal(kv{"amount", `500`}), "", 400, "invalid_request", "amount:"},
		{"amount negative", org, withdrawal(kv{"amount", `"-500"`}), "", 400, "invalid_request", "amount:"},
		{"unknown method", org, withdrawal(kv{"payment_method", `"rocket"`}), "", 400, "invalid_request", "payment_method:"},
		{"wallet phone invalid", org, withdrawal(kv{"phone", `"1712345678"`}), "", 400, "invalid_request", "phone:"},
		{"bank account invalid", org, withdrawal(kv{"payment_method", `"bank"`}, kv{"phone", `"12-34-56-78"`}, kv{"amount", `"60000"`}), "", 400, "invalid_request", "phone:"},
		{"phone missing", org, withdrawal(kv{"phone", drop}), "", 400, "invalid_request", "phone: is required"},
		{"merchant_id empty", org, withdrawal(kv{"merchant_id", `""`}), "", 400, "invalid_request", "merchant_id:"},
		{"unknown field", org, withdrawal(kv{"status", `"succeeded"`}), "", 400, "invalid_request", "status: unknown field"},
		{"metadata not an object", org, withdrawal(kv{"metadata", `[]`}), "", 400, "invalid_request", "metadata:"},
		{"withdrawals disabled", disabled, withdrawal(), "", 403, "forbidden", ""},
		{"insufficient balance", other, withdrawal(), "", 403, "insufficient_balance", "amount:"},
		{"method unavailable", org, withdrawal(kv{"payment_method", `"upay"`}), "", 503, "method_unavailable", "payment_method:"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := tt.org.APIKey
			if tt.apiKey == "-" {
				key = ""
			}
			res := h.Do(tt.org, request{Path: "/api/v1/withdraws", APIKey: key, Body: strings.ReplaceAll(tt.body, `"MID"`, `"rule-`+string(rune('a'+i))+`"`)})
			if res.Status != tt.wantStatus || res.ErrorCode() != tt.wantCode || !strings.HasPrefix(res.ErrorMessage(), tt.wantMessage) {
				t.Fatalf("got %d %s", res.Status, res.Body)
			}
		})
	}
	if got := h.Balance(org); !strings.Contains(got, `"held":"0.00"`) {
		t.Fatalf("a refused withdrawal held money: %s", got)
	}

	created := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"payout-1"`}, kv{"phone", `"+8801712345678"`}, kv{"metadata", `{"batch":"b-1"}`})})
	if created.Status != 201 {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	assertKeys(t, created.Body, "id", "phone", "payment_method", "amount", "status", "metadata", "merchant_id")
	assertJSONField(t, created.Body, "phone", `"01712345678"`)
	assertJSONField(t, created.Body, "amount", `"500.00"`)
	assertJSONField(t, created.Body, "status", `"processing"`)
	assertJSONField(t, created.Body, "metadata", `{"batch":"b-1"}`)
	id := str(created.JSON, "id")
	if !strings.HasPrefix(id, "wd_") {
		t.Fatalf("id %s", id)
	}
	if got := h.Balance(org); got != `{"currency":"BDT","available":"399490.00","held":"510.00"}`+"\n" {
		t.Fatalf("balance after the hold: %s", got)
	}
	if res := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"payout-1"`})}); res.Status != 409 || res.ErrorCode() != "merchant_id_exists" {
		t.Fatalf("reused merchant_id: %d %s", res.Status, res.Body)
	}
	bank := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"payout-2"`}, kv{"payment_method", `"bank"`}, kv{"phone", `"00123456789012"`}, kv{"amount", `"50000"`})})
	if bank.Status != 201 || str(bank.JSON, "phone") != "00123456789012" {
		t.Fatalf("bank: %d %s", bank.Status, bank.Body)
	}

	get := func(o *testOrg, id string) *response {
		return h.Do(o, request{Method: "GET", Path: "/api/v1/withdraws/" + id, APIKey: o.APIKey})
	}
	if res := get(other, id); res.Status != 404 || res.ErrorCode() != "not_found" {
		t.Fatalf("another organization's withdrawal: %d %s", res.Status, res.Body)
	}
	if res := get(org, "wd_nope"); res.Status != 404 {
		t.Fatalf("unknown withdrawal: %d", res.Status)
	}

	// Auto mode: sent, pending for the delay, then succeeded.
	h.Work()
	assertJSONField(t, get(org, id).Body, "status", `"processing"`)
	h.Clock.Add(5 * time.Second)
	h.Work()
	done := get(org, id)
	assertJSONField(t, done.Body, "status", `"succeeded"`)
	// 400000 - (500 + 10) - (50000 + 505), nothing held any more.
	if got := h.Balance(org); got != `{"currency":"BDT","available":"348985.00","held":"0.00"}`+"\n" {
		t.Fatalf("balance after settling: %s", got)
	}

	// A sandbox test account ending in 000000 fails, and the hold returns.
	failing := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"payout-3"`}, kv{"phone", `"01711000000"`})})
	h.Work()
	h.Clock.Add(5 * time.Second)
	h.Work()
	assertJSONField(t, get(org, str(failing.JSON, "id")).Body, "status", `"failed"`)
	if got := h.Balance(org); got != `{"currency":"BDT","available":"348985.00","held":"0.00"}`+"\n" {
		t.Fatalf("balance after a failed payout: %s", got)
	}
}

func TestManualSandboxSettlement(t *testing.T) {
	h := newHarness(t, paydtest.WithSandbox(sandbox.Config{PayoutMode: "manual"}))
	org := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	h.Fund(org, "1000")
	create := func(mid string) string {
		res := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"` + mid + `"`}, kv{"amount", `"300"`})})
		if res.Status != 201 {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
		return str(res.JSON, "id")
	}
	settle := func(o *testOrg, id, outcome string) *response {
		return h.Do(o, request{Path: "/api/sandbox/withdraws/" + id + "/settle", APIKey: o.APIKey, Body: `{"outcome":"` + outcome + `"}`})
	}
	status := func(id string) string {
		return str(h.Do(org, request{Method: "GET", Path: "/api/v1/withdraws/" + id, APIKey: org.APIKey}).JSON, "status")
	}

	ok := create("m1")
	h.Work()
	h.Clock.Add(time.Hour)
	h.Work()
	if s := status(ok); s != "processing" {
		t.Fatalf("manual payout settled by itself: %s", s)
	}
	if res := settle(other, ok, "succeeded"); res.Status != 404 {
		t.Fatalf("settling another organization's withdrawal: %d %s", res.Status, res.Body)
	}
	if res := settle(org, ok, "maybe"); res.Status != 400 || !strings.HasPrefix(res.ErrorMessage(), "outcome:") {
		t.Fatalf("bad outcome: %d %s", res.Status, res.Body)
	}
	if res := settle(org, ok, "succeeded"); res.Status != 200 {
		t.Fatalf("settle: %d %s", res.Status, res.Body)
	}
	h.Work()
	if s := status(ok); s != "succeeded" {
		t.Fatalf("after settling: %s", s)
	}
	if res := settle(org, ok, "failed"); res.Status != 409 {
		t.Fatalf("settling the other way: %d %s", res.Status, res.Body)
	}

	// Settled before the worker ever sent it: the send finds the outcome.
	early := create("m2")
	if res := settle(org, early, "failed"); res.Status != 200 {
		t.Fatalf("early settle: %d %s", res.Status, res.Body)
	}
	h.Work()
	if s := status(early); s != "failed" {
		t.Fatalf("early settled payout: %s", s)
	}
	if got := h.Balance(org); got != `{"currency":"BDT","available":"700.00","held":"0.00"}`+"\n" {
		t.Fatalf("balance %s", got)
	}
}

var dec = decimal.RequireFromString
