package model

import (
	"context"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydmock"
)

// fakeProvider is a money network whose answers the test writes into plain
// maps, as the sandbox records payments a payer makes.
type fakeProvider struct {
	paydmock.Provider // its functions are the methods below
	mu                sync.Mutex
	// payments are found by transaction ID alone, so the test can make the
	// provider report a payment on another channel than the one asked.
	payments map[string]engine.ProviderTransaction
	// clock is the test's clock; until downUntil every lookup fails as an
	// outage does.
	clock     clock.Clock
	downUntil time.Time
	// live are the payouts of the current check, by idempotency key (the
	// withdrawal ID); a payout of an earlier check fails at once, so that
	// leftovers never need the workers' attention again.
	live map[string]bool
	// outcomes are the decided results of live payouts; undecided ones
	// stay pending.
	outcomes map[string]string
	// sent are the payouts the provider received, by idempotency key.
	sent map[string]bool
	// unavailable are the payout methods refused now.
	unavailable map[string]bool
	// refundsDown refuses refunds (CheckRefund).
	refundsDown bool
	// grace is its NotFoundGrace, fixed for the harness: zero for a
	// provider whose not found is final.
	grace time.Duration
}

func newFakeProvider(c clock.Clock, grace time.Duration) *fakeProvider {
	p := &fakeProvider{clock: c, grace: grace}
	p.StartCheckoutFunc = p.startCheckout
	p.LookupTransactionFunc = p.lookupTransaction
	p.CheckPayoutMethodFunc = p.checkPayoutMethod
	p.SendPayoutFunc = p.sendPayout
	p.GetPayoutFunc = p.getPayout
	p.NotFoundGraceFunc = p.notFoundGrace
	p.reset()
	return p
}

func (p *fakeProvider) notFoundGrace() time.Duration { return p.grace }

// reset forgets everything: a new check starts.
func (p *fakeProvider) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.payments = map[string]engine.ProviderTransaction{}
	p.downUntil = time.Time{}
	p.live = map[string]bool{}
	p.outcomes = map[string]string{}
	p.sent = map[string]bool{}
	p.unavailable = map[string]bool{}
	p.refundsDown = false
}

func (p *fakeProvider) startCheckout(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	return &engine.Checkout{URL: "https://pay.example/checkout/" + req.Token}, nil
}

func (p *fakeProvider) lookupTransaction(_ context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clock.Now().Before(p.downUntil) {
		return nil, engine.ErrProviderUnavailable
	}
	t, ok := p.payments[req.TransactionID]
	if !ok {
		return nil, engine.ErrTransactionNotFound
	}
	return &t, nil
}

func (p *fakeProvider) checkPayoutMethod(_ context.Context, method string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unavailable[method] {
		return engine.ErrMethodUnavailable
	}
	return nil
}

func (p *fakeProvider) sendPayout(_ context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent[req.IdempotencyKey] = true
	return p.payoutLocked(req.IdempotencyKey), nil
}

func (p *fakeProvider) getPayout(_ context.Context, key string) (*engine.Payout, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live[key] && !p.sent[key] {
		return nil, engine.ErrPayoutNotFound
	}
	return p.payoutLocked(key), nil
}

func (p *fakeProvider) payoutLocked(key string) *engine.Payout {
	po := &engine.Payout{IdempotencyKey: key, Reference: "ref-" + key, Status: engine.PayoutPending}
	switch {
	case !p.live[key]:
		po.Status, po.Reason = engine.PayoutFailed, "payout of an earlier check"
	case p.outcomes[key] != "":
		po.Status = p.outcomes[key]
		if po.Status == engine.PayoutFailed {
			po.Reason = "rejected"
		}
	}
	return po
}

func (p *fakeProvider) pay(t engine.ProviderTransaction) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.payments[t.TransactionID] = t
}

func (p *fakeProvider) setDownUntil(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.downUntil = t
}

func (p *fakeProvider) register(withdrawalID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live[withdrawalID] = true
}

func (p *fakeProvider) decide(withdrawalID, outcome string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outcomes[withdrawalID] = outcome
}

func (p *fakeProvider) setUnavailable(method string, unavailable bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unavailable[method] = unavailable
}

// Refunds: the fake is an engine.Refunder whose refunds settle as its
// payouts do (register, decide), keyed by the refund's ID; while
// refundsDown it refuses new ones.

var _ engine.Refunder = (*fakeProvider)(nil)

func (p *fakeProvider) setRefundsDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refundsDown = down
}

func (p *fakeProvider) CheckRefund(context.Context, engine.RefundRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refundsDown {
		return engine.ErrMethodUnavailable
	}
	return nil
}

func (p *fakeProvider) SendRefund(_ context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent[req.IdempotencyKey] = true
	return refundOf(p.payoutLocked(req.IdempotencyKey)), nil
}

func (p *fakeProvider) GetRefund(_ context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live[req.IdempotencyKey] && !p.sent[req.IdempotencyKey] {
		return nil, engine.ErrRefundNotFound
	}
	return refundOf(p.payoutLocked(req.IdempotencyKey)), nil
}

func refundOf(po *engine.Payout) *engine.ProviderRefund {
	return &engine.ProviderRefund{IdempotencyKey: po.IdempotencyKey, Reference: po.Reference, Status: po.Status, Reason: po.Reason}
}
