package sandbox

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// PayoutStore keeps simulated payouts durably, each with the organization
// it pays for. NewSQLStore implements it on the engine's store.
type PayoutStore interface {
	// CreateSandboxPayout stores p for an organization. Returns
	// engine.ErrDuplicate if a payout with p.IdempotencyKey exists.
	CreateSandboxPayout(ctx context.Context, organizationID string, p *engine.Payout) error
	// GetSandboxPayout returns a payout by key and its organization, or
	// engine.ErrNotFound.
	GetSandboxPayout(ctx context.Context, idempotencyKey string) (*engine.Payout, string, error)
	// CompleteSandboxPayout writes the outcome (status, reason,
	// completion) of a payout that is pending, and returns
	// engine.ErrNotFound, having written nothing, if none with
	// p.IdempotencyKey is.
	CompleteSandboxPayout(ctx context.Context, p *engine.Payout) error
}

// Payout modes: settle by themselves after a delay, or wait for Settle.
const (
	PayoutsAuto   = "auto"
	PayoutsManual = "manual"
)

// FailingAccountSuffix marks test recipients whose payouts fail in auto
// mode, as Stripe's test card numbers do: any account ending in it.
const FailingAccountSuffix = "000000"

// CheckPayoutMethod refuses the methods configured as unavailable.
func (p *Provider) CheckPayoutMethod(_ context.Context, method string) error {
	if p.unavailable[method] {
		return engine.ErrMethodUnavailable
	}
	return nil
}

// SendPayout records a payout once per idempotency key: a repeat returns
// the payout the first request made.
func (p *Provider) SendPayout(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	if p.Outage(req.OrganizationID) {
		return nil, engine.ErrProviderUnavailable
	}
	po := &engine.Payout{
		IdempotencyKey: req.IdempotencyKey, Reference: "sbxpo_" + engine.RandomToken(12),
		Method: req.Method, Account: req.Account, Amount: req.Amount,
		Status: engine.PayoutPending, CreatedAt: p.clock.Now().UTC().Truncate(time.Microsecond),
	}
	err := p.payouts.CreateSandboxPayout(ctx, req.OrganizationID, po)
	if errors.Is(err, engine.ErrDuplicate) {
		return p.GetPayout(ctx, req.IdempotencyKey)
	} else if err != nil {
		return nil, err
	}
	return p.settleIfDue(ctx, po)
}

// GetPayout returns a payout by key; in auto mode a pending payout whose
// delay has passed settles as it is read. The outage checked is that of
// the payout's organization, which the engine's call does not name.
func (p *Provider) GetPayout(ctx context.Context, key string) (*engine.Payout, error) {
	po, org, err := p.payouts.GetSandboxPayout(ctx, key)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, engine.ErrPayoutNotFound
	} else if err != nil {
		return nil, err
	}
	if p.Outage(org) {
		return nil, engine.ErrProviderUnavailable
	}
	return p.settleIfDue(ctx, po)
}

func (p *Provider) settleIfDue(ctx context.Context, po *engine.Payout) (*engine.Payout, error) {
	now := p.clock.Now().UTC()
	if p.payoutMode != PayoutsAuto || po.Status != engine.PayoutPending || now.Before(po.CreatedAt.Add(p.payoutDelay)) {
		return po, nil
	}
	outcome, reason := engine.PayoutSucceeded, ""
	if strings.HasSuffix(po.Account, FailingAccountSuffix) {
		outcome, reason = engine.PayoutFailed, "recipient rejected the payout (sandbox test account)"
	}
	return p.complete(ctx, po, outcome, reason)
}

// complete settles a pending payout with outcome, or returns the payout
// as another settlement left it: the first to write wins, in this process
// or another (CompleteSandboxPayout).
func (p *Provider) complete(ctx context.Context, po *engine.Payout, outcome, reason string) (*engine.Payout, error) {
	done := *po
	done.Status, done.Reason = outcome, reason
	done.CompletedAt = p.clock.Now().UTC().Truncate(time.Microsecond)
	err := p.payouts.CompleteSandboxPayout(ctx, &done)
	if errors.Is(err, engine.ErrNotFound) {
		cur, _, err := p.payouts.GetSandboxPayout(ctx, po.IdempotencyKey)
		return cur, err // settled meanwhile
	}
	if err != nil {
		return nil, err
	}
	return &done, nil
}

// ErrAlreadySettled is returned by Settle for a payout already settled the
// other way.
var ErrAlreadySettled = errors.New("payout already settled")

// SettlePayout is Settle as the HTTP layer asks it (transport.Sandbox): a
// payout already settled the other way is the contract's conflict.
func (p *Provider) SettlePayout(ctx context.Context, organizationID, withdrawalID, outcome string) error {
	_, err := p.Settle(ctx, organizationID, withdrawalID, outcome)
	if errors.Is(err, ErrAlreadySettled) {
		return engine.Errorf(engine.CodeConflict, "outcome: the payout was already settled the other way")
	}
	return err
}

// Settle decides the outcome of a payout by hand (manual mode, or to force
// one in auto mode): outcome is engine.PayoutSucceeded or PayoutFailed. A
// payout not sent yet is recorded with its outcome, which the send then
// finds. Settling again the same way is a no-op. organizationID owns the
// withdrawal whose payout key is settled; the caller has checked that.
func (p *Provider) Settle(ctx context.Context, organizationID, key, outcome string) (*engine.Payout, error) {
	if outcome != engine.PayoutSucceeded && outcome != engine.PayoutFailed {
		return nil, engine.Invalid("outcome", "must be succeeded or failed")
	}
	reason := ""
	if outcome == engine.PayoutFailed {
		reason = "failed by sandbox settlement"
	}
	po, _, err := p.payouts.GetSandboxPayout(ctx, key)
	if errors.Is(err, engine.ErrNotFound) {
		now := p.clock.Now().UTC().Truncate(time.Microsecond)
		po = &engine.Payout{IdempotencyKey: key, Reference: "sbxpo_" + engine.RandomToken(12), Status: engine.PayoutPending, CreatedAt: now}
		if err := p.payouts.CreateSandboxPayout(ctx, organizationID, po); err != nil && !errors.Is(err, engine.ErrDuplicate) {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	settled, err := p.complete(ctx, po, outcome, reason)
	if err != nil {
		return nil, err
	}
	if settled.Status != outcome {
		return nil, ErrAlreadySettled
	}
	return settled, nil
}
