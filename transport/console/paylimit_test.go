package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport/console"
)

// TestPayPagesRateLimited: one client address hammering a payment link's
// public page, GET or POST, is answered 429 with Retry-After in a page a
// payer can read, before any work; another address is served meanwhile,
// and the first again once the wait is over.
func TestPayPagesRateLimited(t *testing.T) {
	srv := paydtest.MustOpen(t)
	org := srv.NewOrg(engine.OrganizationSettings{})
	link, err := srv.Engine.CreatePaymentLink(context.Background(), org.ID, "800", "")
	if err != nil {
		t.Fatal(err)
	}
	pay := console.New(console.Config{Engine: srv.Engine, PublicURL: srv.URL}).Pay
	send := func(method, addr string) *httptest.ResponseRecorder {
		var body *strings.Reader
		if method == http.MethodPost {
			body = strings.NewReader(url.Values{"method": {"bkash"}}.Encode())
		} else {
			body = strings.NewReader("")
		}
		req := httptest.NewRequest(method, "/pay/"+link.Token, body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		pay.ServeHTTP(rec, req)
		return rec
	}
	const attacker, payer = "203.0.113.7:40000", "198.51.100.9:50000"
	var limited *httptest.ResponseRecorder
	for i := 0; i < 500 && limited == nil; i++ {
		method := http.MethodGet
		if i%2 == 1 {
			method = http.MethodPost // no CSRF token: refused, but it counts
		}
		if rec := send(method, attacker); rec.Code == http.StatusTooManyRequests {
			limited = rec
		}
	}
	if limited == nil {
		t.Fatal("500 requests from one address were all served")
	}
	wait, err := strconv.Atoi(limited.Header().Get("Retry-After"))
	if err != nil || wait < 1 {
		t.Fatalf("Retry-After %q", limited.Header().Get("Retry-After"))
	}
	if ct := limited.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") ||
		!strings.Contains(limited.Body.String(), `id="busy"`) || !strings.Contains(limited.Body.String(), "/pay/"+link.Token) {
		t.Errorf("the 429 page (%s): %s", ct, limited.Body.String())
	}
	if rec := send(http.MethodPost, attacker); rec.Code != http.StatusTooManyRequests {
		t.Errorf("a POST from the limited address: %d, want 429", rec.Code)
	}
	if rec := send(http.MethodGet, payer); rec.Code != http.StatusOK {
		t.Errorf("another address: %d, want 200", rec.Code)
	}
	srv.Clock.Add(time.Duration(wait) * time.Second)
	if rec := send(http.MethodGet, attacker); rec.Code != http.StatusOK {
		t.Errorf("after Retry-After: %d, want 200", rec.Code)
	}
}
