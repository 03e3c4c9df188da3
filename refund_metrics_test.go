package payd_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
)

// TestMetricsCountRefunds: a refund waits in refunds_processing until the
// provider settles it, then counts in payd_refunds_finished_total.
func TestMetricsCountRefunds(t *testing.T) {
	ctx := context.Background()
	s := paydtest.MustOpen(t)
	org := s.NewOrg(engine.OrganizationSettings{H2HEnabled: ptr(true)})
	s.AddWallet(org, "bkash", "cash_out", "01811111111", "Agent")
	dep := s.CreateH2H(org, h2hBody("refunded"))
	if dep.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", dep.Status, dep.Body)
	}
	if pay := s.SandboxPay(org, `{"channel":"bkash","transaction_id":"8N7A6D5EE7R","payer_phone":"01712345678","recipient_phone":"01811111111","amount":"500","status":"completed","type":"cash_out"}`); pay.Status != http.StatusCreated {
		t.Fatalf("sandbox payment: %d %s", pay.Status, pay.Body)
	}
	id := paydtest.Str(dep.JSON, "id")
	if r := s.Verify(org, id, `{"provider_transaction_id":"8N7A6D5EE7R"}`); r.Status >= 300 {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}
	s.Work()
	s.Clock.Add(10 * time.Second)
	if _, _, err := s.Engine.CreateRefund(ctx, engine.CreateRefundParams{OrganizationID: org.ID, DepositID: id,
		Amount: "200", AmountGiven: true, MerchantID: "rf-1"}); err != nil {
		t.Fatal(err)
	}
	s.Clock.Add(5 * time.Second)
	families := scrape(t, s)
	q := map[string]string{"queue": "refunds_processing"}
	if got := gaugeValue(t, families, "payd_queue_items", q); got != 1 {
		t.Errorf("refunds processing: %v, want 1", got)
	}
	if got := gaugeValue(t, families, "payd_queue_oldest_age_seconds", q); got != 5 {
		t.Errorf("oldest refund's age: %v s, want 5", got)
	}
	for range 3 {
		if _, err := s.Engine.ProcessRefunds(ctx); err != nil {
			t.Fatal(err)
		}
		s.Clock.Add(10 * time.Second)
	}
	families = scrape(t, s)
	if got := gaugeValue(t, families, "payd_queue_items", q); got != 0 {
		t.Errorf("refunds processing after settling: %v, want 0", got)
	}
	if got := counterValue(families, "payd_refunds_finished_total", map[string]string{"status": engine.RefundSucceeded}); got != 1 {
		t.Errorf("payd_refunds_finished_total{succeeded} = %v, want 1", got)
	}
}
