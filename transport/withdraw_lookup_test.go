package transport_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
)

// GET /v1/withdraws?merchant_id=... finds a withdrawal by the merchant's
// own ID (a list of at most one): what a client does after a retried
// create answered 409 merchant_id_exists.
func TestFindWithdrawalByMerchantID(t *testing.T) {
	h := newHarness(t)
	org := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{WithdrawalsEnabled: ptr(true)})
	h.Fund(org, "10000")
	mid := "order 7/☕ '; --"
	created := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", mustJSON(t, mid)})})
	if created.Status != 201 {
		t.Fatalf("create: %d %s", created.Status, created.Body)
	}
	retried := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", mustJSON(t, mid)})})
	if retried.Status != 409 || retried.ErrorCode() != "merchant_id_exists" {
		t.Fatalf("retry: %d %s", retried.Status, retried.Body)
	}
	find := func(o *testOrg, query string) *response {
		return h.Do(o, request{Method: "GET", Path: "/api/v1/withdraws" + query, APIKey: o.APIKey})
	}
	found := find(org, "?merchant_id="+url.QueryEscape(mid))
	want := `{"data":[` + strings.TrimSpace(string(created.Body)) + `],"has_more":false}`
	if found.Status != 200 || strings.TrimSpace(string(found.Body)) != want {
		t.Fatalf("find: %d %s, want %s", found.Status, found.Body, want)
	}
	for _, c := range []struct {
		name   string
		org    *testOrg
		query  string
		status int
		code   string
	}{
		{"unknown merchant_id", org, "?merchant_id=order-8", 200, ""},
		{"another organization's", other, "?merchant_id=" + url.QueryEscape(mid), 200, ""},
		{"empty", org, "?merchant_id=", 400, "invalid_request"},
		{"twice", org, "?merchant_id=a&merchant_id=b", 400, "invalid_request"},
		{"unknown parameter", org, "?merchant_id=a&colour=red", 400, "invalid_request"},
		{"malformed query", org, "?merchant_id=%zz", 400, "invalid_request"},
		{"too long", org, "?merchant_id=" + strings.Repeat("x", 300), 400, "invalid_request"},
		{"NUL", org, "?merchant_id=a%00b", 400, "invalid_request"},
	} {
		res := find(c.org, c.query)
		if res.Status != c.status || res.ErrorCode() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, res.Status, res.Body, c.status, c.code)
		}
		if c.status == 200 && strings.TrimSpace(string(res.Body)) != `{"data":[],"has_more":false}` {
			t.Errorf("%s: %s, want an empty list", c.name, res.Body)
		}
	}
	if res := h.Do(org, request{Method: "GET", Path: "/api/v1/withdraws?merchant_id=x"}); res.Status != 401 {
		t.Errorf("without a key: %d %s", res.Status, res.Body)
	}
}
