package bkash_test

import (
	"context"
	"errors"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
)

// answering is a fallback that finds every transaction and refunds all.
type answering struct {
	engine.Refunder
	engine.Provider
	lookups int
}

func (a *answering) LookupTransaction(_ context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	a.lookups++
	return &engine.ProviderTransaction{Channel: req.Channel, TransactionID: req.TransactionID}, nil
}

func (a *answering) CheckRefund(context.Context, engine.RefundRequest) error { return nil }

// TestNotBkashsGoStraightToFallback: lookups of deposits bKash's API cannot
// prove (an agent's cash out, a personal wallet's send money: bKash shows a
// merchant only payments to it) and refunds of deposits not paid on its
// checkout never touch the provider's tables: a provider without a store
// serves them from its fallback. Those it can prove still need the store.
func TestNotBkashsGoStraightToFallback(t *testing.T) {
	kr, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	fb := &answering{}
	p, err := bkash.New(bkash.Config{Keyring: kr, Fallback: fb}) // no store: any read fails
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, op := range []string{engine.OperationCashOut, engine.OperationSendMoney} {
		if _, err := p.LookupTransaction(ctx, engine.LookupRequest{OrganizationID: "org_1", Channel: engine.ChannelBkash,
			Operation: op, TransactionID: "BKA0000001", RecipientPhone: "01811000000"}); err != nil {
			t.Errorf("%s lookup: %v", op, err)
		}
	}
	if fb.lookups != 2 {
		t.Errorf("fallback asked %d times, want 2", fb.lookups)
	}
	if err := p.CheckRefund(ctx, engine.RefundRequest{OrganizationID: "org_1", DepositID: "dep_1", PaymentMethod: "bkash_agent",
		Channel: engine.ChannelBkash, ProviderTransactionID: "BKA0000001"}); err != nil {
		t.Errorf("agent deposit's refund: %v", err)
	}
	// A merchant payment and a checkout payment are bKash's: they read.
	for _, op := range []string{engine.OperationMakePayment, ""} {
		_, err := p.LookupTransaction(ctx, engine.LookupRequest{OrganizationID: "org_1", Channel: engine.ChannelBkash,
			Operation: op, TransactionID: "BKA0000001"})
		if err == nil || errors.Is(err, engine.ErrTransactionNotFound) {
			t.Errorf("%q lookup without a store: %v, want the store's error", op, err)
		}
	}
}
