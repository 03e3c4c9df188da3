package payd_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport/signing"
)

// BenchmarkSignedGetDeposit is the whole handler of a signed H2H GET
// (middleware, key, signature, the store's read, the view and its JSON),
// in process, without the network: issue 18's signed GET, whose allocs/op
// do not depend on what else the machine runs.
//
//	go test -run '^$' -bench SignedGetDeposit -benchmem .
func BenchmarkSignedGetDeposit(b *testing.B) {
	s := paydtest.MustOpen(b)
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	res := s.CreateH2H(org, h2hBody("bench"))
	if res.Status != http.StatusCreated {
		b.Fatalf("create: %d %s", res.Status, res.Body)
	}
	path := "/api/v1/deposits/" + paydtest.Str(res.JSON, "id")
	ts := signing.Timestamp(s.Now())
	sig := signing.Sign([]byte(org.Secret), ts, http.MethodGet, path, nil)
	// net/http's server gives every request a context that ends with its
	// connection; the store's read watches it (httptest's never ends).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+org.APIKey)
	req.Header.Set(signing.TimestampHeader, ts)
	req.Header.Set(signing.SignatureHeader, sig)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.App.Handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("get: %d %s", w.Code, w.Body)
		}
	}
}
