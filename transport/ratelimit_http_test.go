package transport_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport"
)

func TestRateLimits(t *testing.T) {
	h := newHarness(t)
	h.Config.RateLimits = transport.RateLimits{
		Default:  transport.Rate{PerSecond: 0.1, Burst: 3},
		Verify:   transport.Rate{PerSecond: 0.1, Burst: 1},
		Withdraw: transport.Rate{PerSecond: 0.1, Burst: 1},
	}
	h.Rebuild()
	org := h.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	other := h.NewOrg(engine.OrganizationSettings{})
	get := func(o *testOrg) *response {
		return h.Do(o, request{Method: http.MethodGet, Path: "/api/v1/balance", APIKey: o.APIKey})
	}
	for i := range 3 {
		if res := get(org); res.Status != 200 {
			t.Fatalf("request %d of the burst: %d", i, res.Status)
		}
	}
	limited := get(org)
	if limited.Status != 429 || limited.ErrorCode() != "rate_limited" {
		t.Fatalf("past the burst: %d %s", limited.Status, limited.Body)
	}
	if res := get(other); res.Status != 200 {
		t.Fatalf("another key was limited: %d", res.Status)
	}
	// Withdrawals have a tighter bucket of their own.
	h.Fund(org, "1000")
	first := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"rl1"`})})
	second := h.Do(org, request{Path: "/api/v1/withdraws", APIKey: org.APIKey, Body: withdrawal(kv{"merchant_id", `"rl2"`})})
	if first.Status != 201 || second.Status != 429 {
		t.Fatalf("withdrawals: %d then %d", first.Status, second.Status)
	}
}

// The Retry-After header is checked on a raw response.
func TestRateLimitRetryAfter(t *testing.T) {
	h := newHarness(t)
	h.Config.RateLimits = transport.RateLimits{Default: transport.Rate{PerSecond: 0.5, Burst: 1}}
	h.Rebuild()
	org := h.NewOrg(engine.OrganizationSettings{})
	req := func() *http.Response {
		r, _ := http.NewRequest(http.MethodGet, h.URL+"/api/v1/balance", nil)
		r.Header.Set("Authorization", "Bearer "+org.APIKey)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	req()
	res := req()
	if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); res.StatusCode != 429 || err != nil || secs < 1 || secs > 2 {
		t.Fatalf("429 with Retry-After: %d %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
}
