package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/transport/client"
	"github.com/payd-engine/payd/transport/webhook"
)

// The H2H flow against a sandbox server: create the deposit, show the
// instructions, play the payer, submit the transaction ID, wait for the
// outcome.
func Example() {
	srv, stop := exampleEnv() // an in-process payd sandbox server
	defer stop()
	ctx := context.Background()

	c := client.New(srv.Base, srv.APIKey, srv.Secret)
	dep, created, err := c.CreateH2HDeposit(ctx, client.H2HDepositRequest{
		Amount: "750.50", PaymentMethod: "bkash_agent", MerchantID: "order-1002",
		RedirectURL: "https://shop.example/return", PayerPhone: "+8801712345678",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created:", created, dep.Status)

	na := dep.NextAction
	if na == nil || na.Type != client.ActionDisplayInstructions {
		fmt.Println("nothing to display")
		return
	}
	fmt.Printf("pay %s %s by %s to %s (%s)\n", na.Amount, na.Currency, na.Operation, na.Recipient.Value, *na.Recipient.Name)

	// In the sandbox, we are the payer.
	if err := c.SandboxPayment(ctx, client.SandboxPaymentRequest{
		Channel: na.Channel, TransactionID: "8N7A6D5EE7M", PayerPhone: "01712345678",
		RecipientPhone: na.Recipient.Value, Amount: na.Amount, Type: "cash_out",
	}); err != nil {
		fmt.Println(err)
		return
	}

	v, err := c.SubmitTransactionID(ctx, dep.ID, "8n7a6d5ee7m")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("queued:", v.Queued, v.ProviderTransactionID)

	// Real code keeps the defaults (2-5 s); the example is in a hurry.
	dep, err = c.WaitForDeposit(ctx, dep.ID, client.WaitOptions{Interval: 20 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("succeeded:", dep.Succeeded(), *dep.ProviderTransactionID)
	// Output:
	// created: true pending
	// pay 750.50 BDT by cash_out to 01711000001 (Agent Rahim)
	// queued: true 8N7A6D5EE7M
	// succeeded: true 8N7A6D5EE7M
}

// Branch on the error code of an answer, never on its message.
func ExampleIsCode() {
	srv, stop := exampleEnv()
	defer stop()
	ctx := context.Background()
	c := client.New(srv.Base, srv.APIKey, srv.Secret)

	req := client.RedirectDepositRequest{
		Amount: "500", PaymentMethod: "nagad", RedirectURL: "https://shop.example/return", MerchantID: "order-7",
	}
	if _, err := c.CreateRedirectDeposit(ctx, req); err != nil {
		fmt.Println(err)
		return
	}
	req.Amount = "600" // the same merchant_id with another amount
	_, err := c.CreateRedirectDeposit(ctx, req)
	fmt.Println(client.IsCode(err, client.CodeMerchantIDConflict))

	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.StatusCode, e.Code)
	}
	// Output:
	// true
	// 409 merchant_id_conflict
}

// A webhook endpoint: verify before parsing, then act on the event.
func ExampleVerifyWebhook() {
	secret := webhook.NewSecret() // payd admin webhook add prints the real one

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := client.VerifyWebhook(secret, r)
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		// Deliveries are at least once: skip an ev.ID already handled.
		if ev.Type == client.EventDepositSucceeded {
			dep, err := ev.Deposit()
			if err != nil {
				http.Error(w, "bad event", http.StatusBadRequest)
				return
			}
			fmt.Println("fulfil", dep.MerchantID, dep.Amount)
		}
		w.WriteHeader(http.StatusNoContent)
	})

	// What payd would post.
	body := `{"id":"evt_1","type":"deposit.succeeded","timestamp":"2026-11-21T10:15:00Z",` +
		`"data":{"id":"dep_1","amount":"750.50","payment_method":"bkash_agent","status":"succeeded","metadata":{},"merchant_id":"order-1002"}}`
	now := time.Now().Unix()
	sig, _ := webhook.Sign(secret, "evt_1", now, []byte(body))
	for _, signature := range []string{sig, "v1,Zm9yZ2Vk"} {
		r := httptest.NewRequest(http.MethodPost, "/hooks/payd", strings.NewReader(body))
		r.Header.Set("webhook-id", "evt_1")
		r.Header.Set("webhook-timestamp", strconv.FormatInt(now, 10))
		r.Header.Set("webhook-signature", signature)
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		fmt.Println(w.Code)
	}
	// Output:
	// fulfil order-1002 750.50
	// 204
	// 401
}
