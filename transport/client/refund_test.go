package client_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/payd-engine/payd/transport/client"
)

// TestRefunds: a merchant refunds a paid H2H deposit with the client, in
// two parts, against a server as payd serve runs it; the refunds settle in
// the sandbox, WaitForRefund follows them, the refund events verify, and
// the deposit ends refunded.
func TestRefunds(t *testing.T) {
	e := newEnv(t, envOptions{PayoutMode: "manual"})
	ctx := ctxT(t)
	events := make(chan *client.Event, 20)
	var secret string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := client.VerifyWebhook(secret, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		events <- ev
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	_, secret, err := e.Engine.AddWebhookEndpoint(ctx, e.OrgID, recv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(e.Base, e.APIKey, e.Secret)
	d, _, err := c.CreateH2HDeposit(ctx, h2hRequest("order-refund"))
	if err != nil {
		t.Fatal(err)
	}
	na := d.NextAction
	if err := c.SandboxPayment(ctx, client.SandboxPaymentRequest{
		Channel: na.Channel, TransactionID: "RFCLIENT1", PayerPhone: "01712345678", RecipientPhone: na.Recipient.Value, Amount: na.Amount,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitTransactionID(ctx, d.ID, "RFCLIENT1"); err != nil {
		t.Fatal(err)
	}
	fast := client.WaitOptions{Interval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond, Timeout: 20 * time.Second}
	if d, err = c.WaitForDeposit(ctx, d.ID, fast); err != nil || !d.Succeeded() || d.RefundedAmount != "0.00" {
		t.Fatalf("deposit %+v, %v", d, err)
	}

	first, created, err := c.CreateRefund(ctx, d.ID, client.RefundRequest{Amount: "250.50", MerchantID: "rf-1", Reason: "one item back", Metadata: json.RawMessage(`{"line":2}`)})
	if err != nil || !created || first.Status != client.RefundProcessing || first.Amount != "250.50" || first.DepositID != d.ID ||
		first.Reason == nil || *first.Reason != "one item back" || first.FailureCode != nil || first.CreatedAt.IsZero() {
		t.Fatalf("first refund %+v, %v, %v", first, created, err)
	}
	if again, created, err := c.CreateRefund(ctx, d.ID, client.RefundRequest{Amount: "250.5", MerchantID: "rf-1"}); err != nil || created || again.ID != first.ID {
		t.Fatalf("replay %+v, %v, %v", again, created, err)
	}
	_, _, err = c.CreateRefund(ctx, d.ID, client.RefundRequest{Amount: "250", MerchantID: "rf-1"})
	apiError(t, err, http.StatusConflict, client.CodeMerchantIDConflict)
	_, _, err = c.CreateRefund(ctx, d.ID, client.RefundRequest{Amount: "600", MerchantID: "rf-2"})
	apiError(t, err, http.StatusConflict, client.CodeRefundExceedsDeposit)

	if err := c.SandboxSettleRefund(ctx, first.ID, "succeeded"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.WaitForRefund(ctx, first.ID, fast); err != nil || got.Status != client.RefundSucceeded || !got.IsTerminal() {
		t.Fatalf("first refund after settle %+v, %v", got, err)
	}
	rest, _, err := c.CreateRefund(ctx, d.ID, client.RefundRequest{MerchantID: "rf-3"})
	if err != nil || rest.Amount != "500.00" {
		t.Fatalf("the rest %+v, %v", rest, err)
	}
	if err := c.SandboxSettleRefund(ctx, rest.ID, "succeeded"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.WaitForRefund(ctx, rest.ID, fast); err != nil || got.Status != client.RefundSucceeded {
		t.Fatalf("the rest after settle %+v, %v", got, err)
	}
	if d, err = c.GetDeposit(ctx, d.ID); err != nil || d.Status != client.StatusRefunded || d.RefundedAmount != "750.50" || d.Verification.State != "refunded" {
		t.Fatalf("deposit after refunds %+v, %v", d, err)
	}
	_, _, err = c.CreateRefund(ctx, d.ID, client.RefundRequest{Amount: "1", MerchantID: "rf-4"})
	apiError(t, err, http.StatusConflict, client.CodeDepositNotRefundable)
	_, err = c.GetRefund(ctx, "rf_missing")
	apiError(t, err, http.StatusNotFound, client.CodeNotFound)

	var ids []string
	for r, err := range c.Refunds(ctx, client.ListParams{DepositID: d.ID, Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if len(ids) != 2 || ids[0] != rest.ID || ids[1] != first.ID {
		t.Fatalf("Refunds = %v, want %s, %s", ids, rest.ID, first.ID)
	}

	seen := map[string]int{}
	deadline := time.After(20 * time.Second)
	for seen[client.EventRefundCreated] < 2 || seen[client.EventRefundSucceeded] < 2 || seen[client.EventDepositRefunded] < 1 {
		select {
		case ev := <-events:
			seen[ev.Type]++
			if ev.Type == client.EventRefundSucceeded {
				if r, err := ev.Refund(); err != nil || r.Status != client.RefundSucceeded {
					t.Fatalf("refund.succeeded data %+v, %v", r, err)
				}
			}
			if ev.Type == client.EventDepositRefunded {
				if dep, err := ev.Deposit(); err != nil || dep.Status != client.StatusRefunded {
					t.Fatalf("deposit.refunded data %+v, %v", dep, err)
				}
			}
		case <-deadline:
			t.Fatalf("events seen %v", seen)
		}
	}
}
