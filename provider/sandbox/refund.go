package sandbox

import (
	"context"
	"errors"

	"github.com/payd-engine/payd/engine"
)

// The sandbox refunds as it pays out: a refund is a simulated payout to
// the deposit's payer, kept in the payouts' table under the refund's ID
// (its idempotency key, which no withdrawal's shares), so that it settles
// as payouts do: by itself after the delay in auto mode (a payer phone
// ending in FailingAccountSuffix fails), or by Settle (POST
// /api/sandbox/refunds/{id}/settle) in manual mode. The first settlement
// written wins, in this process or another (CompleteSandboxPayout writes
// only a pending one).

var _ engine.Refunder = (*Provider)(nil)

// CheckRefund refuses while the organization's outage is on: the create
// is answered 503 method_unavailable.
func (p *Provider) CheckRefund(_ context.Context, req engine.RefundRequest) error {
	if p.Outage(req.OrganizationID) {
		return engine.ErrMethodUnavailable
	}
	return nil
}

// SendRefund records the refund once per key: a repeat returns what the
// first made.
func (p *Provider) SendRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	po, err := p.SendPayout(ctx, engine.PayoutRequest{
		IdempotencyKey: req.IdempotencyKey, OrganizationID: req.OrganizationID,
		Method: req.PaymentMethod, Account: req.PayerPhone, Amount: req.Amount,
	})
	return providerRefund(po, err)
}

// GetRefund returns the refund sent with the key, settled first if its
// delay has passed in auto mode.
func (p *Provider) GetRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	return providerRefund(p.GetPayout(ctx, req.IdempotencyKey))
}

func providerRefund(po *engine.Payout, err error) (*engine.ProviderRefund, error) {
	if errors.Is(err, engine.ErrPayoutNotFound) {
		return nil, engine.ErrRefundNotFound
	}
	if err != nil {
		return nil, err
	}
	return &engine.ProviderRefund{IdempotencyKey: po.IdempotencyKey, Reference: po.Reference, Status: po.Status, Reason: po.Reason}, nil
}

// SettleRefund is transport.Sandbox's manual settlement of a refund: the
// payout the sandbox keeps under the refund's ID.
func (p *Provider) SettleRefund(ctx context.Context, organizationID, refundID, outcome string) error {
	_, err := p.Settle(ctx, organizationID, refundID, outcome)
	if errors.Is(err, ErrAlreadySettled) {
		return engine.Errorf(engine.CodeConflict, "outcome: the refund was already settled the other way")
	}
	return err
}
