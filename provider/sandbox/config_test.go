package sandbox_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// TestBuiltBeforeItsStore: a sandbox built without a store or a public URL
// (payd.New gives it both) says what is missing instead of failing
// silently, and works once it is given them.
func TestBuiltBeforeItsStore(t *testing.T) {
	ctx := context.Background()
	p, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pay := sandbox.PaymentParams{OrganizationID: "org_1", Channel: "bkash", TransactionID: "ABC123XYZ", PayerPhone: "01712345678", Amount: "500", Status: "completed"}
	if _, err := p.RecordPayment(ctx, pay); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Errorf("a payment with no store: %v", err)
	}
	if _, err := p.StartCheckout(ctx, engine.CheckoutRequest{Token: "tok"}); err == nil || !strings.Contains(err.Error(), "no public URL") {
		t.Errorf("a checkout with no public URL: %v", err)
	}
	p.SetPublicURL("/payments") // a path alone is no place to send a payer
	if _, err := p.StartCheckout(ctx, engine.CheckoutRequest{Token: "tok"}); err == nil {
		t.Error("a checkout with a public URL of a path alone")
	}

	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "payd.db"), sandbox.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p.JoinStore(store)
	p.SetPublicURL("https://shop.example/payments/")
	if _, err := p.RecordPayment(ctx, pay); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LookupTransaction(ctx, engine.LookupRequest{OrganizationID: "org_1", Channel: "bkash", TransactionID: "ABC123XYZ"}); err != nil {
		t.Fatal(err)
	}
	c, err := p.StartCheckout(ctx, engine.CheckoutRequest{Token: "tok"})
	if err != nil || c.URL != "https://shop.example/payments/checkout/tok" {
		t.Fatalf("checkout %+v %v", c, err)
	}
}
