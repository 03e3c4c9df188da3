// Command webhook-receiver is a merchant's endpoint for payd's events: it
// verifies each delivery's Standard Webhooks signature before reading the
// body, handles each webhook-id once, and fulfils an order only on a
// verified deposit.succeeded.
//
//	PAYD_WEBHOOK_SECRET=whsec_... go run ./examples/webhook-receiver -addr 127.0.0.1:9090
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/payd-engine/payd/transport/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "address to listen on")
	flag.Parse()
	secret := os.Getenv("PAYD_WEBHOOK_SECRET")
	if secret == "" {
		slog.Error("set PAYD_WEBHOOK_SECRET to the endpoint's secret (payd admin webhook add prints it)")
		os.Exit(2)
	}
	r := newReceiver(secret, time.Now, func(e event) {
		slog.Info("event", "id", e.ID, "type", e.Type, "resource", e.Data.ID, "status", e.Data.Status, "merchant_id", e.Data.MerchantID)
		if e.Type == "deposit.succeeded" {
			slog.Info("fulfil order", "merchant_id", e.Data.MerchantID, "amount", e.Data.Amount)
		}
	})
	slog.Info("listening", "addr", *addr)
	srv := &http.Server{Addr: *addr, Handler: r, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("serve", "err", err)
		os.Exit(1)
	}
}

// event is the part of a payd event this shop reads.
type event struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		ID         string `json:"id"`
		Status     string `json:"status"`
		MerchantID string `json:"merchant_id"`
		Amount     string `json:"amount"`
	} `json:"data"`
}

// receiver verifies, deduplicates and hands events to handle.
type receiver struct {
	secret string
	now    func() time.Time
	handle func(event)
	mu     sync.Mutex
	seen   map[string]bool // a real shop keeps this in its database
}

func newReceiver(secret string, now func() time.Time, handle func(event)) *receiver {
	return &receiver{secret: secret, now: now, handle: handle, seen: map[string]bool{}}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	// Verify before parsing: an unsigned body is not payd's.
	if err := webhook.Verify(rc.secret, r.Header, body, rc.now()); err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var e event
	if err := json.Unmarshal(body, &e); err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	dup := rc.seen[e.ID]
	rc.seen[e.ID] = true
	rc.mu.Unlock()
	if !dup { // deliveries are at least once: the same id may come again
		rc.handle(e)
	}
	w.WriteHeader(http.StatusNoContent)
}
