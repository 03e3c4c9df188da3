package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

var walletWithdrawal = []kv{
	{"amount", `"500"`}, {"phone", `"01712345678"`}, {"payment_method", `"bkash"`}, {"merchant_id", `"MID"`},
}

func withdrawal(over ...kv) string { return body(walletWithdrawal, over...) }

func (h *harness) fund(org *testOrg, amount string) {
	h.t.Helper()
	if _, err := h.app.engine.AdjustBalance(context.Background(), engine.AdjustParams{OrganizationID: org.id, Amount: amount, Reason: "funding", Actor: "test"}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) balance(org *testOrg) string {
	h.t.Helper()
	res := h.do(org, request{method: "GET", path: "/api/v1/balance", apiKey: org.apiKey})
	if res.status != 200 {
		h.t.Fatalf("balance: %d %s", res.status, res.body)
	}
	return string(res.body)
}

func TestWithdrawalsOverHTTP(t *testing.T) {
	h := newHarnessWith(t, sandboxSettings{payoutDelay: 2 * time.Second, unavailableMethods: []string{"upay"}})
	org := h.newOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true), WithdrawCommissionPercent: ptr(dec("1")), WithdrawCommissionFixed: ptr(dec("5"))})
	other := h.newOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	disabled := h.newOrg(engine.OrganizationSettings{})
	h.fund(org, "400000")
	if got := h.balance(org); got != `{"currency":"BDT","available":"400000.00","held":"0.00"}`+"\n" {
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
			key := tt.org.apiKey
			if tt.apiKey == "-" {
				key = ""
			}
			res := h.do(tt.org, request{path: "/api/v1/withdraws", apiKey: key, body: strings.ReplaceAll(tt.body, `"MID"`, `"rule-`+string(rune('a'+i))+`"`)})
			if res.status != tt.wantStatus || res.errorCode() != tt.wantCode || !strings.HasPrefix(res.errorMessage(), tt.wantMessage) {
				t.Fatalf("got %d %s", res.status, res.body)
			}
		})
	}
	if got := h.balance(org); !strings.Contains(got, `"held":"0.00"`) {
		t.Fatalf("a refused withdrawal held money: %s", got)
	}

	created := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", `"payout-1"`}, kv{"phone", `"+8801712345678"`}, kv{"metadata", `{"batch":"b-1"}`})})
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	assertKeys(t, created.body, "id", "phone", "payment_method", "amount", "status", "metadata", "merchant_id")
	assertJSONField(t, created.body, "phone", `"01712345678"`)
	assertJSONField(t, created.body, "amount", `"500.00"`)
	assertJSONField(t, created.body, "status", `"processing"`)
	assertJSONField(t, created.body, "metadata", `{"batch":"b-1"}`)
	id := str(created.json, "id")
	if !strings.HasPrefix(id, "wd_") {
		t.Fatalf("id %s", id)
	}
	if got := h.balance(org); got != `{"currency":"BDT","available":"399490.00","held":"510.00"}`+"\n" {
		t.Fatalf("balance after the hold: %s", got)
	}
	if res := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", `"payout-1"`})}); res.status != 409 || res.errorCode() != "merchant_id_exists" {
		t.Fatalf("reused merchant_id: %d %s", res.status, res.body)
	}
	bank := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", `"payout-2"`}, kv{"payment_method", `"bank"`}, kv{"phone", `"00123456789012"`}, kv{"amount", `"50000"`})})
	if bank.status != 201 || str(bank.json, "phone") != "00123456789012" {
		t.Fatalf("bank: %d %s", bank.status, bank.body)
	}

	get := func(o *testOrg, id string) *response {
		return h.do(o, request{method: "GET", path: "/api/v1/withdraws/" + id, apiKey: o.apiKey})
	}
	if res := get(other, id); res.status != 404 || res.errorCode() != "not_found" {
		t.Fatalf("another organization's withdrawal: %d %s", res.status, res.body)
	}
	if res := get(org, "wd_nope"); res.status != 404 {
		t.Fatalf("unknown withdrawal: %d", res.status)
	}

	// Auto mode: sent, pending for the delay, then succeeded.
	h.work()
	assertJSONField(t, get(org, id).body, "status", `"processing"`)
	h.clock.Add(5 * time.Second)
	h.work()
	done := get(org, id)
	assertJSONField(t, done.body, "status", `"succeeded"`)
	// 400000 - (500 + 10) - (50000 + 505), nothing held any more.
	if got := h.balance(org); got != `{"currency":"BDT","available":"348985.00","held":"0.00"}`+"\n" {
		t.Fatalf("balance after settling: %s", got)
	}

	// A sandbox test account ending in 000000 fails, and the hold returns.
	failing := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", `"payout-3"`}, kv{"phone", `"01711000000"`})})
	h.work()
	h.clock.Add(5 * time.Second)
	h.work()
	assertJSONField(t, get(org, str(failing.json, "id")).body, "status", `"failed"`)
	if got := h.balance(org); got != `{"currency":"BDT","available":"348985.00","held":"0.00"}`+"\n" {
		t.Fatalf("balance after a failed payout: %s", got)
	}
}

func TestManualSandboxSettlement(t *testing.T) {
	h := newHarnessWith(t, sandboxSettings{payoutMode: "manual"})
	org := h.newOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	other := h.newOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	h.fund(org, "1000")
	create := func(mid string) string {
		res := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", `"` + mid + `"`}, kv{"amount", `"300"`})})
		if res.status != 201 {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
		return str(res.json, "id")
	}
	settle := func(o *testOrg, id, outcome string) *response {
		return h.do(o, request{path: "/api/sandbox/withdraws/" + id + "/settle", apiKey: o.apiKey, body: `{"outcome":"` + outcome + `"}`})
	}
	status := func(id string) string {
		return str(h.do(org, request{method: "GET", path: "/api/v1/withdraws/" + id, apiKey: org.apiKey}).json, "status")
	}

	ok := create("m1")
	h.work()
	h.clock.Add(time.Hour)
	h.work()
	if s := status(ok); s != "processing" {
		t.Fatalf("manual payout settled by itself: %s", s)
	}
	if res := settle(other, ok, "succeeded"); res.status != 404 {
		t.Fatalf("settling another organization's withdrawal: %d %s", res.status, res.body)
	}
	if res := settle(org, ok, "maybe"); res.status != 400 || !strings.HasPrefix(res.errorMessage(), "outcome:") {
		t.Fatalf("bad outcome: %d %s", res.status, res.body)
	}
	if res := settle(org, ok, "succeeded"); res.status != 200 {
		t.Fatalf("settle: %d %s", res.status, res.body)
	}
	h.work()
	if s := status(ok); s != "succeeded" {
		t.Fatalf("after settling: %s", s)
	}
	if res := settle(org, ok, "failed"); res.status != 409 {
		t.Fatalf("settling the other way: %d %s", res.status, res.body)
	}

	// Settled before the worker ever sent it: the send finds the outcome.
	early := create("m2")
	if res := settle(org, early, "failed"); res.status != 200 {
		t.Fatalf("early settle: %d %s", res.status, res.body)
	}
	h.work()
	if s := status(early); s != "failed" {
		t.Fatalf("early settled payout: %s", s)
	}
	if got := h.balance(org); got != `{"currency":"BDT","available":"700.00","held":"0.00"}`+"\n" {
		t.Fatalf("balance %s", got)
	}
}

var dec = decimal.RequireFromString
