package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/transport/client"
)

// TestEmbeddedShop runs the host application in-process over a SQLite file
// in a temp dir, with the engine's workers running: an order goes through
// payd's hosted page (mounted in the shop's mux) to a fulfilled order, and
// payd's API answers under the shop's prefix. Then the shop restarts over
// the same file and finds its organization and order again.
func TestEmbeddedShop(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "shop.db")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	defer srv.Close()
	ctx := context.Background()
	s, err := openShop(ctx, dbPath, srv.URL, logger)
	if err != nil {
		t.Fatal(err)
	}
	handler = s.Handler()
	workCtx, stopWork := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() { worked <- s.app.Run(workCtx) }()

	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	post := func(path string, form url.Values) *http.Response {
		t.Helper()
		res, err := noRedirects.PostForm(srv.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}

	if code, body := get("/"); code != 200 || !strings.Contains(body, "Buy with bKash") {
		t.Fatalf("home: %d %s", code, body)
	}
	res := post("/orders", url.Values{"phone": {"01712345678"}})
	checkout := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(checkout, mount+"/checkout/") {
		t.Fatalf("order: %d %q", res.StatusCode, checkout)
	}
	if code, body := get(checkout); code != 200 || !strings.Contains(body, "01711000001") || !strings.Contains(body, "<svg") {
		t.Fatalf("checkout page: %d %s", code, body)
	}
	// The customer pays in the sandbox and types the transaction ID.
	paid := post(checkout+"/pay", url.Values{"payer_phone": {"01712345678"}}).Header.Get("Location")
	txID := regexp.MustCompile(`txid=([A-Z0-9]+)`).FindStringSubmatch(paid)
	if txID == nil {
		t.Fatalf("sandbox pay: %q", paid)
	}
	if res := post(checkout+"/verify", url.Values{"transaction_id": {txID[1]}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("verify: %d", res.StatusCode)
	}
	var back string
	deadline := time.Now().Add(15 * time.Second)
	for back == "" {
		_, body := get(checkout)
		if m := regexp.MustCompile(`id="return" href="([^"]+)"`).FindStringSubmatch(body); m != nil {
			back = strings.ReplaceAll(m[1], "&amp;", "&")
		} else if time.Now().After(deadline) {
			t.Fatalf("the checkout never finished: %s", body)
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	u, err := url.Parse(back)
	if err != nil || u.Query().Get("status") != "succeeded" || !strings.HasPrefix(u.Path, "/orders/order-") {
		t.Fatalf("return URL %q", back)
	}
	if code, body := get(u.RequestURI()); code != 200 || !strings.Contains(body, `id="fulfilled"`) {
		t.Fatalf("order page: %d %s", code, body)
	}

	// payd's API under the shop's prefix, with a key the shop issued.
	key, err := s.engine.CreateAPIKey(ctx, s.orgID)
	if err != nil {
		t.Fatal(err)
	}
	api := client.New(srv.URL+mount+apiPrefix, key.APIKey, key.SigningSecret)
	dep, err := api.GetDeposit(ctx, u.Query().Get("deposit_id"))
	if err != nil {
		t.Fatal(err)
	}
	if !dep.Succeeded() || dep.NextAction != nil || *dep.ProviderTransactionID != txID[1] {
		t.Fatalf("deposit through the API: %+v", dep)
	}
	bal, err := api.Balance(ctx)
	if err != nil || bal.Available != "750.50" {
		t.Fatalf("balance %+v %v", bal, err)
	}
	dep2, _, err := api.CreateH2HDeposit(ctx, client.H2HDepositRequest{
		Amount: "200", PaymentMethod: "bkash_agent", MerchantID: "api-1", RedirectURL: srv.URL + "/", PayerPhone: "01712345678",
	})
	if err != nil {
		t.Fatal(err)
	}
	if ep := dep2.NextAction.Verification.Endpoint; ep != mount+apiPrefix+"/v1/deposits/"+dep2.ID+"/verify" {
		t.Fatalf("verification endpoint %q", ep)
	}

	// A restart over the same file: same organization, same order.
	stopWork()
	<-worked
	orgID := s.orgID
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = openShop(ctx, dbPath, srv.URL, logger); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	handler = s.Handler()
	if s.orgID != orgID {
		t.Fatalf("a second organization after a restart: %s, was %s", s.orgID, orgID)
	}
	if code, body := get(u.Path); code != 200 || !strings.Contains(body, "succeeded") {
		t.Fatalf("order page after a restart: %d %s", code, body)
	}
}
