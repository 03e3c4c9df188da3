package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// GET /v1/withdraws?merchant_id=... finds a withdrawal by the merchant's
// own ID: what a client does after a retried create answered 409
// merchant_id_exists.
func TestFindWithdrawalByMerchantID(t *testing.T) {
	h := newHarness(t)
	org := h.newOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	other := h.newOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	h.fund(org, "10000")
	mid := "order 7/☕ '; --"
	created := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", mustJSON(t, mid)})})
	if created.status != 201 {
		t.Fatalf("create: %d %s", created.status, created.body)
	}
	retried := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", mustJSON(t, mid)})})
	if retried.status != 409 || retried.errorCode() != "merchant_id_exists" {
		t.Fatalf("retry: %d %s", retried.status, retried.body)
	}
	find := func(o *testOrg, query string) *response {
		return h.do(o, request{method: "GET", path: "/api/v1/withdraws" + query, apiKey: o.apiKey})
	}
	found := find(org, "?merchant_id="+url.QueryEscape(mid))
	if found.status != 200 || str(found.json, "id") != str(created.json, "id") || string(found.body) != string(created.body) {
		t.Fatalf("find: %d %s, want %s", found.status, found.body, created.body)
	}
	for _, c := range []struct {
		name   string
		org    *testOrg
		query  string
		status int
		code   string
	}{
		{"unknown merchant_id", org, "?merchant_id=order-8", 404, "not_found"},
		{"another organization's", other, "?merchant_id=" + url.QueryEscape(mid), 404, "not_found"},
		{"missing", org, "", 400, "invalid_request"},
		{"empty", org, "?merchant_id=", 400, "invalid_request"},
		{"twice", org, "?merchant_id=a&merchant_id=b", 400, "invalid_request"},
		{"unknown parameter", org, "?merchant_id=a&status=processing", 400, "invalid_request"},
		{"malformed query", org, "?merchant_id=%zz", 400, "invalid_request"},
		{"too long", org, "?merchant_id=" + strings.Repeat("x", 300), 404, "not_found"},
		{"NUL", org, "?merchant_id=a%00b", 404, "not_found"},
	} {
		res := find(c.org, c.query)
		if res.status != c.status || res.errorCode() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.status, res.body, c.status, c.code)
		}
	}
	if res := h.do(org, request{method: "GET", path: "/api/v1/withdraws?merchant_id=x"}); res.status != 401 {
		t.Errorf("without a key: %d %s", res.status, res.body)
	}
}
