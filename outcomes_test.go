package payd_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

func gaugeValue(t *testing.T, families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	m := series(families, name, labels)
	if m == nil {
		t.Fatalf("%s%v: no such series", name, labels)
	}
	return m.GetGauge().GetValue()
}

// TestMetricsCountOutcomesAndQueues drives real work through the engine on
// a mock clock and checks the queue gauges and outcome counters by value.
func TestMetricsCountOutcomesAndQueues(t *testing.T) {
	ctx := context.Background()
	s := paydtest.MustOpen(t)
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true)})
	s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	if _, _, err := s.Engine.AddWebhookEndpoint(ctx, org.ID, "https://127.0.0.1:1/hook"); err != nil {
		t.Fatal(err)
	}
	work := func() {
		t.Helper()
		if _, err := s.Engine.ProcessAttempts(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Engine.ProcessPayouts(ctx); err != nil {
			t.Fatal(err)
		}
	}

	paid := s.CreateH2H(org, h2hBody("paid"))
	unpaid := s.CreateH2H(org, h2hBody("unpaid"))
	if paid.Status != http.StatusCreated || unpaid.Status != http.StatusCreated {
		t.Fatalf("create: %d %s / %d %s", paid.Status, paid.Body, unpaid.Status, unpaid.Body)
	}
	pay := s.Do(org, paydtest.Request{Path: "/api/sandbox/payments", APIKey: org.APIKey,
		Body: `{"channel":"bkash","transaction_id":"8N7A6D5EE7M","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed","type":"cash_out"}`})
	if pay.Status != http.StatusCreated {
		t.Fatalf("sandbox payment: %d %s", pay.Status, pay.Body)
	}
	verify := func(dep *paydtest.Response, txID string) {
		t.Helper()
		res := s.Do(org, paydtest.Request{Path: "/api/v1/deposits/" + paydtest.Str(dep.JSON, "id") + "/verify", APIKey: org.APIKey, Sign: true,
			Body: `{"provider_transaction_id":"` + txID + `"}`})
		if res.Status >= 300 {
			t.Fatalf("verify %s: %d %s", txID, res.Status, res.Body)
		}
	}
	verify(paid, "8N7A6D5EE7M")
	s.Clock.Add(30 * time.Second)
	verify(unpaid, "9Z9Z9Z9Z9Z9")
	s.Clock.Add(10 * time.Second)

	families := scrape(t, s)
	q := map[string]string{"queue": "attempts_processing"}
	if got := gaugeValue(t, families, "payd_queue_items", q); got != 2 {
		t.Errorf("attempts processing: %v, want 2", got)
	}
	if got := gaugeValue(t, families, "payd_queue_oldest_age_seconds", q); got != 40 {
		t.Errorf("oldest attempt's age: %v s, want 40", got)
	}

	work()
	if _, err := s.Engine.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: org.ID, Amount: "10000", Reason: "funding", Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	wd := s.Do(org, paydtest.Request{Path: "/api/v1/withdraws", APIKey: org.APIKey,
		Body: `{"amount":"500","phone":"01712345678","payment_method":"bkash","merchant_id":"wd-1"}`})
	if wd.Status != http.StatusCreated {
		t.Fatalf("withdraw: %d %s", wd.Status, wd.Body)
	}
	families = scrape(t, s)
	if got := gaugeValue(t, families, "payd_queue_items", q); got != 0 {
		t.Errorf("attempts processing after the work: %v, want 0", got)
	}
	if got := gaugeValue(t, families, "payd_queue_oldest_age_seconds", q); got != 0 {
		t.Errorf("empty queue's age: %v, want 0", got)
	}
	if got := gaugeValue(t, families, "payd_queue_items", map[string]string{"queue": "payouts_processing"}); got != 1 {
		t.Errorf("payouts processing: %v, want 1", got)
	}
	if got := gaugeValue(t, families, "payd_queue_items", map[string]string{"queue": "webhook_deliveries_pending"}); got < 1 {
		t.Errorf("webhook deliveries pending: %v, want the deposit.succeeded event's", got)
	}
	for i := 0; i < 3; i++ {
		work()
		s.Clock.Add(10 * time.Second)
	}
	if _, err := s.Engine.DeliverWebhooks(ctx); err != nil {
		t.Fatal(err)
	}

	families = scrape(t, s)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"payd_verifications_total", map[string]string{"result": "succeeded", "failure_code": ""}, 1},
		{"payd_verifications_total", map[string]string{"result": "failed", "failure_code": engine.FailureTransactionNotFound}, 1},
		{"payd_deposits_finished_total", map[string]string{"status": engine.StatusSucceeded}, 1},
		{"payd_deposits_finished_total", map[string]string{"status": engine.StatusFailed}, 0},
		{"payd_withdrawals_finished_total", map[string]string{"status": engine.WithdrawalSucceeded}, 1},
		{"payd_webhook_posts_total", map[string]string{"result": "delivered"}, 0},
	} {
		if got := counterValue(families, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// The endpoint is loopback, which this payd's webhooks may not reach:
	// every post it made failed.
	if got := counterValue(families, "payd_webhook_posts_total", map[string]string{"result": "failed"}); got < 1 {
		t.Errorf("failed webhook posts: %v, want at least 1", got)
	}
	if got := gaugeValue(t, families, "payd_queue_items", map[string]string{"queue": "payouts_processing"}); got != 0 {
		t.Errorf("payouts processing after settling: %v, want 0", got)
	}
}
