package main

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/transport/webhook"
)

func post(t *testing.T, h http.Handler, secret, id string, ts time.Time, body string) int {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	sig, err := webhook.Sign(secret, id, ts.Unix(), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(webhook.HeaderID, id)
	req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(webhook.HeaderSignature, sig)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

func TestReceiver(t *testing.T) {
	secret := webhook.NewSecret()
	now := time.Unix(1763720100, 0)
	var fulfilled []string
	r := newReceiver(secret, func() time.Time { return now }, func(e event) {
		if e.Type == "deposit.succeeded" {
			fulfilled = append(fulfilled, e.Data.MerchantID)
		}
	})
	body := `{"id":"evt_1","type":"deposit.succeeded","timestamp":"2025-11-21T10:15:00Z","data":{"id":"dep_1","status":"succeeded","merchant_id":"order-7","amount":"500.00"}}`
	if code := post(t, r, secret, "evt_1", now, body); code != 204 {
		t.Fatalf("signed event: %d", code)
	}
	if code := post(t, r, secret, "evt_1", now, body); code != 204 || len(fulfilled) != 1 {
		t.Fatalf("a redelivery was handled again: %d %v", code, fulfilled)
	}
	if code := post(t, r, webhook.NewSecret(), "evt_2", now, body); code != 401 {
		t.Fatalf("forged event: %d", code)
	}
	if code := post(t, r, secret, "evt_3", now.Add(-10*time.Minute), body); code != 401 {
		t.Fatalf("replayed old event: %d", code)
	}
	if len(fulfilled) != 1 || fulfilled[0] != "order-7" {
		t.Fatalf("fulfilled %v", fulfilled)
	}
}
