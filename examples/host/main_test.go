package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHost is the host's whole story over one SQLite file: an order and
// its deposit commit together, a bad order leaves neither, and a payer
// pays on payd's hosted page under /payments/, proven by the host's own
// provider, while App.Run does the background work.
func TestHost(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	defer srv.Close()
	h, err := open(ctx, filepath.Join(t.TempDir(), "host.db"), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	handler = h.mux()
	go h.app.Run(ctx)

	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.PostForm(srv.URL+"/orders", url.Values{"amount": {"500"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	checkout := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(checkout, srv.URL+"/payments/checkout/") {
		t.Fatalf("order: %d to %q, want 303 to payd's page under /payments/", res.StatusCode, checkout)
	}
	var orderID string
	if err := h.db.QueryRow(`SELECT id FROM orders`).Scan(&orderID); err != nil {
		t.Fatal(err)
	}

	res, err = browser.PostForm(srv.URL+"/orders", url.Values{"amount": {"-1"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var orders, deposits int
	h.db.QueryRow(`SELECT count(*) FROM orders`).Scan(&orders)
	h.db.QueryRow(`SELECT count(*) FROM deposits`).Scan(&deposits)
	if res.StatusCode != http.StatusBadRequest || orders != 1 || deposits != 1 {
		t.Fatalf("bad order: %d, %d orders, %d deposits; want 400 and the first order alone", res.StatusCode, orders, deposits)
	}

	res, err = http.Get(checkout)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "01711000001") {
		t.Fatalf("checkout page: %d, shows the shop's wallet: %v", res.StatusCode, strings.Contains(string(page), "01711000001"))
	}
	// A transaction ID the shop's statement does not show pays nothing.
	verify := func(txID string) {
		t.Helper()
		res, err := browser.PostForm(checkout+"/verify", url.Values{"payer_phone": {"01712345678"}, "transaction_id": {txID}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("verify %s: %d, want 303 back to the page", txID, res.StatusCode)
		}
	}
	verify("9ZZ9ZZ9ZZ9")
	waitAttempts := func(failed int) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var n int
			h.db.QueryRow(`SELECT count(*) FROM attempts WHERE status = 'failed'`).Scan(&n)
			if n == failed {
				return
			}
		}
		t.Fatalf("want %d failed attempts", failed)
	}
	waitAttempts(1)
	var depositID string
	h.db.QueryRow(`SELECT deposit_id FROM orders`).Scan(&depositID)
	if d, err := h.app.Engine.GetDeposit(ctx, h.org, depositID); err != nil || d.Status != "pending" {
		t.Fatalf("after an unknown transaction ID: %v %v, want pending", d, err)
	}
	// The payer sends ৳500 to the wallet; the shop's statement shows it.
	if _, err := h.db.Exec(`INSERT INTO received VALUES ('8AB3CD5EFG', '500', '01712345678', '01711000001', ?)`,
		time.Now().UTC().Format(time.RFC3339)); err != nil {
		t.Fatal(err)
	}
	verify("8AB3CD5EFG")
	var status string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		res, err := http.Get(srv.URL + "/orders/" + orderID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if status = strings.TrimSpace(string(b)); strings.HasSuffix(status, ": succeeded") {
			break
		}
	}
	if !strings.HasSuffix(status, ": succeeded") {
		t.Fatalf("order after paying: %q, want succeeded", status)
	}
}
