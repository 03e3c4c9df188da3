package engine

import (
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkValidateCreateDeposit is the validation of an H2H create.
func BenchmarkValidateCreateDeposit(b *testing.B) {
	p := CreateDepositParams{
		OrganizationID: "org_x", CheckoutMode: CheckoutH2H, Amount: "750.50", PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/return", MerchantID: "order-1002", PayerPhone: "+8801712345678",
		Metadata: []byte(`{"cart":"A-17","items":[1,2,3]}`),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDepositView is rendering and encoding an H2H deposit.
func BenchmarkDepositView(b *testing.B) {
	p := CreateDepositParams{CheckoutMode: CheckoutH2H, Amount: "750.50", PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/return", MerchantID: "order-1002", PayerPhone: "01712345678"}
	d, err := p.validate()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	d.ID, d.Status, d.Action, d.Channel, d.Operation = "dep_01m7zwmx57akfa85cw0h2p03xg", StatusPending, ActionDisplayInstructions, "bkash", "cash_out"
	d.RecipientPhone, d.RecipientName, d.VerificationState, d.ExpiresAt = "01711000001", "Agent", VerificationAwaitingReference, now.Add(15*time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(DepositView(d, now, "/api")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDepositEvent is the event a verdict writes of an H2H deposit:
// its view and the envelope, encoded.
func BenchmarkDepositEvent(b *testing.B) {
	p := CreateDepositParams{CheckoutMode: CheckoutH2H, Amount: "750.50", PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/return", MerchantID: "order-1002", PayerPhone: "01712345678"}
	d, err := p.validate()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	d.ID, d.Status, d.Action, d.Channel, d.Operation = "dep_01m7zwmx57akfa85cw0h2p03xg", StatusSucceeded, ActionDisplayInstructions, "bkash", "cash_out"
	d.RecipientPhone, d.RecipientName, d.VerificationState, d.ExpiresAt = "01711000001", "Agent", VerificationSucceeded, now.Add(15*time.Minute)
	d.ProviderTransactionID = "BKA0000001"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newEvent("org_x", "deposit.succeeded", d.ID, DepositView(d, now, "/api"), now); err != nil {
			b.Fatal(err)
		}
	}
}
