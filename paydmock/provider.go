package paydmock

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Provider is an engine.Provider, and an engine.LateLearner, whose every
// method calls the function field of its name: a test sets the ones its
// engine will call, and a call to one left nil panics, naming it. A test
// that keeps a book of payments binds the fields to its own methods; one
// that needs another answer for a while copies the Provider and replaces
// a field.
type Provider struct {
	// StartCheckoutFunc answers StartCheckout: a redirect deposit's
	// checkout with the network.
	StartCheckoutFunc func(ctx context.Context, req engine.CheckoutRequest) (*engine.Checkout, error)
	// LookupTransactionFunc answers LookupTransaction: what the network
	// says of a transaction ID a payer submitted.
	LookupTransactionFunc func(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error)
	// CheckPayoutMethodFunc answers CheckPayoutMethod: whether a payout
	// method is available now (engine.ErrMethodUnavailable if not).
	CheckPayoutMethodFunc func(ctx context.Context, method string) error
	// SendPayoutFunc answers SendPayout: a withdrawal sent, under its
	// idempotency key.
	SendPayoutFunc func(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error)
	// GetPayoutFunc answers GetPayout: where a payout sent earlier stands.
	GetPayoutFunc func(ctx context.Context, idempotencyKey string) (*engine.Payout, error)
	// NotFoundGraceFunc, when nil, is a grace of zero: not found is final.
	NotFoundGraceFunc func() time.Duration
}

var (
	_ engine.Provider    = (*Provider)(nil)
	_ engine.LateLearner = (*Provider)(nil)
)

// StartCheckout calls StartCheckoutFunc.
func (p *Provider) StartCheckout(ctx context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	must(p.StartCheckoutFunc != nil, "Provider.StartCheckoutFunc")
	return p.StartCheckoutFunc(ctx, req)
}

// LookupTransaction calls LookupTransactionFunc.
func (p *Provider) LookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	must(p.LookupTransactionFunc != nil, "Provider.LookupTransactionFunc")
	return p.LookupTransactionFunc(ctx, req)
}

// CheckPayoutMethod calls CheckPayoutMethodFunc.
func (p *Provider) CheckPayoutMethod(ctx context.Context, method string) error {
	must(p.CheckPayoutMethodFunc != nil, "Provider.CheckPayoutMethodFunc")
	return p.CheckPayoutMethodFunc(ctx, method)
}

// SendPayout calls SendPayoutFunc.
func (p *Provider) SendPayout(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	must(p.SendPayoutFunc != nil, "Provider.SendPayoutFunc")
	return p.SendPayoutFunc(ctx, req)
}

// GetPayout calls GetPayoutFunc.
func (p *Provider) GetPayout(ctx context.Context, idempotencyKey string) (*engine.Payout, error) {
	must(p.GetPayoutFunc != nil, "Provider.GetPayoutFunc")
	return p.GetPayoutFunc(ctx, idempotencyKey)
}

// NotFoundGrace calls NotFoundGraceFunc, or is zero when it is nil.
func (p *Provider) NotFoundGrace() time.Duration {
	if p.NotFoundGraceFunc == nil {
		return 0
	}
	return p.NotFoundGraceFunc()
}

func must(set bool, field string) {
	if !set {
		panic("paydmock." + field + " is not set")
	}
}
