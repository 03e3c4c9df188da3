package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/transport/client"
	"github.com/payd-engine/payd/transport/webhook"
)

const eventBody = `{"id":"evt_1","type":"withdraw.succeeded","timestamp":"2026-11-21T10:15:00Z","data":{"id":"wd_1","phone":"01712345678","payment_method":"bkash","amount":"1000.00","status":"succeeded","metadata":{"k":1.50},"merchant_id":"payout-1"}}`

// signedRequest builds a delivery as payd posts it.
func signedRequest(t *testing.T, secret, id string, ts time.Time, body string) *http.Request {
	t.Helper()
	sig, err := webhook.Sign(secret, id, ts.Unix(), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/hooks/payd", strings.NewReader(body))
	r.Header.Set(webhook.HeaderID, id)
	r.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	r.Header.Set(webhook.HeaderSignature, sig)
	return r
}

func TestVerifyWebhook(t *testing.T) {
	secret := webhook.NewSecret()
	ev, err := client.VerifyWebhook(secret, signedRequest(t, secret, "evt_1", time.Now(), eventBody))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "evt_1" || ev.Type != client.EventWithdrawSucceeded || !ev.Timestamp.Equal(time.Date(2026, 11, 21, 10, 15, 0, 0, time.UTC)) {
		t.Fatalf("event = %+v", ev)
	}
	w, err := ev.Withdrawal()
	if err != nil {
		t.Fatal(err)
	}
	if w.ID != "wd_1" || w.Status != client.WithdrawalSucceeded || w.Amount != "1000.00" || string(w.Metadata) != `{"k":1.50}` {
		t.Fatalf("withdrawal = %+v", w)
	}
	if _, err := ev.Deposit(); err == nil {
		t.Fatal("Deposit() of a withdrawal event succeeded")
	}

	altered := signedRequest(t, secret, "evt_1", time.Now(), eventBody)
	altered.Body = io.NopCloser(strings.NewReader(strings.Replace(eventBody, "1000.00", "9000.00", 1)))
	for name, r := range map[string]*http.Request{
		"wrong secret":     signedRequest(t, webhook.NewSecret(), "evt_1", time.Now(), eventBody),
		"altered body":     altered,
		"stale":            signedRequest(t, secret, "evt_1", time.Now().Add(-10*time.Minute), eventBody),
		"id mismatch":      signedRequest(t, secret, "evt_2", time.Now(), eventBody),
		"no headers":       httptest.NewRequest(http.MethodPost, "/", strings.NewReader(eventBody)),
		"signed, not JSON": signedRequest(t, secret, "evt_1", time.Now(), "not json"),
		"too large":        signedRequest(t, secret, "evt_1", time.Now(), strings.Repeat(" ", client.MaxWebhookBytes+1)),
	} {
		if ev, err := client.VerifyWebhook(secret, r); err == nil {
			t.Errorf("%s: accepted %+v", name, ev)
		}
	}
}
