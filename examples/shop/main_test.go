package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/transport/client"
	"github.com/payd-engine/payd/transport/webhook"
)

// shopUnderTest is the shop behind its own test server.
type shopUnderTest struct {
	*shop
	srv *httptest.Server
}

func startShop(t *testing.T, payd *client.Client, webhookSecret string) *shopUnderTest {
	t.Helper()
	var s *shop
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.Handler().ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	s = newShop(payd, webhookSecret, srv.URL, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &shopUnderTest{s, srv}
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (s *shopUnderTest) post(t *testing.T, path string, form url.Values) (int, string, string) {
	t.Helper()
	res, err := noRedirects.PostForm(s.srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

func (s *shopUnderTest) get(t *testing.T, path string) (int, string) {
	t.Helper()
	res, err := http.Get(s.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func field(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + id + `"[^>]*>([^<]*)<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no #%s on the page:\n%s", id, page)
	}
	return m[1]
}

// waitFulfilled waits for an order to ship and returns what proved it.
func (s *shopUnderTest) waitFulfilled(t *testing.T, id string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if o, _ := s.order(id); o.FulfilledBy != "" {
			return o.FulfilledBy
		}
		if time.Now().After(deadline) {
			t.Fatalf("order %s never shipped", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestShop runs the shop against an in-process payd: an order paid by
// transaction ID ships on the verified deposit.succeeded webhook; another
// ships on the succeeded status the shop reads; refusals are shown in the
// payer's words; and nothing ships on a forged webhook or on the payer's
// word.
func TestShop(t *testing.T) {
	payd := paydtest.MustRunMain(t) // payd in-process, as payd serve runs it; webhooks may reach the shop on loopback
	ctx := context.Background()
	creds, err := payd.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: new("Tea Shop"), H2HEnabled: new(true)})
	if err != nil {
		t.Fatal(err)
	}
	orgID := creds.Organization.ID
	if _, err := payd.Engine.AddWallet(ctx, engine.AddWalletParams{
		OrganizationID: orgID, Channel: "bkash", Operation: "cash_out", Phone: "01711000001", Name: "Agent Rahim", QRPayload: "QR-1",
	}); err != nil {
		t.Fatal(err)
	}
	api := client.New(payd.URL+"/api", creds.APIKey.APIKey, creds.APIKey.SigningSecret)
	payer := func(txID, amount string) {
		t.Helper()
		if err := api.SandboxPayment(ctx, client.SandboxPaymentRequest{
			Channel: "bkash", TransactionID: txID, PayerPhone: "01712345678", RecipientPhone: "01711000001",
			Amount: amount, Status: "completed", Type: "cash_out",
		}); err != nil {
			t.Fatal(err)
		}
	}

	// A shop with a webhook endpoint registered in payd.
	hooked := startShop(t, api, "")
	_, secret, err := payd.Engine.AddWebhookEndpoint(ctx, orgID, hooked.srv.URL+"/webhooks/payd")
	if err != nil {
		t.Fatal(err)
	}
	hooked.webhookSecret = secret

	t.Run("instructions, then the webhook ships the order", func(t *testing.T) {
		code, loc, body := hooked.post(t, "/orders", url.Values{"phone": {"+8801712345678"}, "method": {"bkash_agent"}})
		if code != http.StatusSeeOther {
			t.Fatalf("order: %d %s", code, body)
		}
		id := strings.TrimPrefix(loc, "/orders/")
		_, page := hooked.get(t, loc)
		if field(t, page, "recipient") != "01711000001" || field(t, page, "amount") != "750.50 BDT" ||
			field(t, page, "operation") != "cash_out" || field(t, page, "qr") != "QR-1" {
			t.Fatalf("instructions:\n%s", page)
		}
		// The payer's word is not proof: a return to the order page
		// claiming success ships nothing.
		hooked.get(t, loc+"?status=succeeded")
		if o, _ := hooked.order(id); o.FulfilledBy != "" {
			t.Fatal("shipped on the payer's word")
		}
		payer("8N7A6D5EE7M", "750.50")
		if code, _, body := hooked.post(t, loc+"/transaction", url.Values{"transaction_id": {"8n7a6d5ee7m"}}); code != http.StatusSeeOther {
			t.Fatalf("transaction: %d %s", code, body)
		}
		// Nobody looks at the order page: the webhook alone ships it.
		if by := hooked.waitFulfilled(t, id); by != "webhook" {
			t.Fatalf("shipped by %s", by)
		}
		_, page = hooked.get(t, loc)
		if field(t, page, "status") != "succeeded" || !strings.Contains(page, `id="fulfilled"`) {
			t.Fatalf("order page:\n%s", page)
		}
	})

	t.Run("refusals in the payer's words", func(t *testing.T) {
		_, loc, _ := hooked.post(t, "/orders", url.Values{"phone": {"01712345678"}})
		for _, c := range []struct{ txID, want string }{
			{"ab", "3 to 64 characters"},
			{"8N7A6D5EE7M", "already used for another payment"},
		} {
			code, _, page := hooked.post(t, loc+"/transaction", url.Values{"transaction_id": {c.txID}})
			if code != http.StatusConflict || !strings.Contains(field(t, page, "error"), c.want) {
				t.Fatalf("%s: %d\n%s", c.txID, code, page)
			}
		}
		code, _, body := hooked.post(t, "/orders", url.Values{"phone": {"01712345678"}, "method": {"nagad_agent"}})
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "not available") {
			t.Fatalf("no nagad wallet: %d %s", code, body)
		}
	})

	t.Run("a forged or unknown webhook ships nothing", func(t *testing.T) {
		_, loc, _ := hooked.post(t, "/orders", url.Values{"phone": {"01712345678"}})
		id := strings.TrimPrefix(loc, "/orders/")
		o, _ := hooked.order(id)
		body := `{"id":"evt_forged","type":"deposit.succeeded","timestamp":"2026-11-21T10:00:00Z","data":{"id":"` + o.DepositID + `","merchant_id":"` + id + `","status":"succeeded"}}`
		for _, key := range []string{webhook.NewSecret(), ""} {
			req := httptest.NewRequest(http.MethodPost, "/webhooks/payd", strings.NewReader(body))
			if key != "" {
				sig, _ := webhook.Sign(key, "evt_forged", time.Now().Unix(), []byte(body))
				req.Header.Set(webhook.HeaderID, "evt_forged")
				req.Header.Set(webhook.HeaderTimestamp, itoa(time.Now().Unix()))
				req.Header.Set(webhook.HeaderSignature, sig)
			}
			rec := httptest.NewRecorder()
			hooked.Handler().ServeHTTP(rec, req)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("forged webhook: %d", rec.Code)
			}
		}
		// Correctly signed, but about a deposit that is not this order's.
		other := `{"id":"evt_other","type":"deposit.succeeded","timestamp":"2026-11-21T10:00:00Z","data":{"id":"dep_other","merchant_id":"` + id + `","status":"succeeded"}}`
		req := httptest.NewRequest(http.MethodPost, "/webhooks/payd", strings.NewReader(other))
		sig, _ := webhook.Sign(hooked.webhookSecret, "evt_other", time.Now().Unix(), []byte(other))
		req.Header.Set(webhook.HeaderID, "evt_other")
		req.Header.Set(webhook.HeaderTimestamp, itoa(time.Now().Unix()))
		req.Header.Set(webhook.HeaderSignature, sig)
		rec := httptest.NewRecorder()
		hooked.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			t.Fatalf("signed webhook: %d", rec.Code)
		}
		if o, _ := hooked.order(id); o.FulfilledBy != "" {
			t.Fatal("shipped on an event of another deposit")
		}
	})

	t.Run("without webhooks, the status read ships the order", func(t *testing.T) {
		polling := startShop(t, api, "")
		_, loc, _ := polling.post(t, "/orders", url.Values{"phone": {"01712345678"}, "method": {"bkash_agent"}})
		id := strings.TrimPrefix(loc, "/orders/")
		payer("TXPOLL1", "750.50")
		if code, _, body := polling.post(t, loc+"/transaction", url.Values{"transaction_id": {"TXPOLL1"}}); code != http.StatusSeeOther {
			t.Fatalf("transaction: %d %s", code, body)
		}
		o, _ := polling.order(id)
		if _, err := api.WaitForDeposit(ctx, o.DepositID, client.WaitOptions{Interval: 100 * time.Millisecond, Timeout: 20 * time.Second}); err != nil && !errors.Is(err, client.ErrWaitTimeout) {
			t.Fatal(err)
		}
		if o, _ := polling.order(id); o.FulfilledBy != "" {
			t.Fatal("shipped before anyone read the status")
		}
		_, page := polling.get(t, loc)
		if !strings.Contains(page, `id="fulfilled"`) {
			t.Fatalf("order page:\n%s", page)
		}
		if o, _ := polling.order(id); o.FulfilledBy != "status" {
			t.Fatalf("shipped by %q", o.FulfilledBy)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
