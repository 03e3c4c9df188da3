package main

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport"
)

func TestRateLimits(t *testing.T) {
	h := newHarness(t)
	h.cfg.rateLimits = transport.RateLimits{
		Default:  transport.Rate{PerSecond: 0.1, Burst: 3},
		Verify:   transport.Rate{PerSecond: 0.1, Burst: 1},
		Withdraw: transport.Rate{PerSecond: 0.1, Burst: 1},
	}
	var err error
	if h.app, err = newApp(h.cfg); err != nil {
		t.Fatal(err)
	}
	org := h.newOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	other := h.newOrg(engine.OrganizationSettings{})
	get := func(o *testOrg) *response {
		return h.do(o, request{method: http.MethodGet, path: "/api/v1/balance", apiKey: o.apiKey})
	}
	for i := range 3 {
		if res := get(org); res.status != 200 {
			t.Fatalf("request %d of the burst: %d", i, res.status)
		}
	}
	limited := get(org)
	if limited.status != 429 || limited.errorCode() != "rate_limited" {
		t.Fatalf("past the burst: %d %s", limited.status, limited.body)
	}
	if res := get(other); res.status != 200 {
		t.Fatalf("another key was limited: %d", res.status)
	}
	// Withdrawals have a tighter bucket of their own.
	h.fund(org, "1000")
	first := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", `"rl1"`})})
	second := h.do(org, request{path: "/api/v1/withdraws", apiKey: org.apiKey, body: withdrawal(kv{"merchant_id", `"rl2"`})})
	if first.status != 201 || second.status != 429 {
		t.Fatalf("withdrawals: %d then %d", first.status, second.status)
	}
}

// The Retry-After header is checked on a raw response.
func TestRateLimitRetryAfter(t *testing.T) {
	h := newHarness(t)
	h.cfg.rateLimits = transport.RateLimits{Default: transport.Rate{PerSecond: 0.5, Burst: 1}}
	var err error
	if h.app, err = newApp(h.cfg); err != nil {
		t.Fatal(err)
	}
	org := h.newOrg(engine.OrganizationSettings{})
	req := func() *http.Response {
		r, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/api/v1/balance", nil)
		r.Header.Set("Authorization", "Bearer "+org.apiKey)
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
