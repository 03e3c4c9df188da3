package smsinbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/payd-engine/payd/engine"
)

// CheckPayoutMethod accepts every method: the operator sends by hand.
func (p *Provider) CheckPayoutMethod(context.Context, string) error { return nil }

// SendPayout queues the payout for the operator, once per key.
func (p *Provider) SendPayout(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	mp := &ManualPayout{OrganizationID: req.OrganizationID, Payout: engine.Payout{
		IdempotencyKey: req.IdempotencyKey, Method: req.Method, Account: req.Account, Amount: req.Amount,
		Status: PayoutQueued, CreatedAt: p.now(),
	}}
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		err := tx.CreateManualPayout(ctx, mp)
		if errors.Is(err, engine.ErrDuplicate) {
			mp, err = tx.GetManualPayout(ctx, req.IdempotencyKey)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return mp.enginePayout(), nil
}

// GetPayout reports a queued payout as pending until the operator records
// its outcome.
func (p *Provider) GetPayout(ctx context.Context, key string) (*engine.Payout, error) {
	var mp *ManualPayout
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		mp, err = tx.GetManualPayout(ctx, key)
		return err
	})
	if errors.Is(err, engine.ErrNotFound) || err == nil && mp.IsRefund() {
		return nil, engine.ErrPayoutNotFound
	}
	if err != nil {
		return nil, err
	}
	return mp.enginePayout(), nil
}

func (mp *ManualPayout) enginePayout() *engine.Payout {
	out := mp.Payout
	if out.Status == PayoutQueued || out.Status == PayoutMatched {
		// A match is the operator's to confirm: the engine sees nothing yet.
		out.Status, out.Reference = engine.PayoutPending, ""
	}
	return &out
}

// ListPayouts returns the manual payouts matching params, oldest first.
func (p *Provider) ListPayouts(ctx context.Context, params ListPayoutsParams) ([]*ManualPayout, error) {
	var out []*ManualPayout
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.ListManualPayouts(ctx, params)
		return err
	})
	return out, err
}

// CompletePayout records that the operator sent a queued payout (or
// refund), with the transaction ID of their send. Recording the same again
// changes nothing.
func (p *Provider) CompletePayout(ctx context.Context, withdrawalID, transactionID string) (*ManualPayout, error) {
	ref, err := engine.NormalizeTransactionID("provider_transaction_id", transactionID)
	if err != nil {
		return nil, err
	}
	return p.finishPayout(ctx, withdrawalID, PayoutSucceeded, ref, "")
}

// FailPayout records that a queued payout (or refund) could not be sent;
// the withdrawal (refund) fails and its hold is released.
func (p *Provider) FailPayout(ctx context.Context, withdrawalID, reason string) (*ManualPayout, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return nil, engine.Invalid("reason", "is required")
	}
	if err := checkLabel("reason", reason, 200); err != nil {
		return nil, err
	}
	return p.finishPayout(ctx, withdrawalID, PayoutFailed, "", reason)
}

func (p *Provider) finishPayout(ctx context.Context, key, status, ref, reason string) (*ManualPayout, error) {
	var mp *ManualPayout
	err := p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if mp, err = tx.LockManualPayout(ctx, key); err != nil {
			return notFound(err, "payout")
		}
		if mp.Status != PayoutQueued && mp.Status != PayoutMatched {
			if mp.Status == status && mp.Reference == ref && mp.Reason == reason {
				return nil // recorded already
			}
			return engine.Errorf(engine.CodeConflict, "payout %s is already %s", key, mp.Status)
		}
		// The operator's own record replaces an SMS's match.
		mp.Status, mp.Reference, mp.Reason, mp.SMSID = status, ref, reason, ""
		mp.Operator, mp.CompletedAt = engine.ActorFrom(ctx), p.now()
		if err := tx.UpdateManualPayout(ctx, mp); err != nil {
			return err
		}
		action, details := AuditPayoutComplete, map[string]string{"provider_transaction_id": ref}
		if status == PayoutFailed {
			action, details = AuditPayoutFail, map[string]string{"reason": reason}
		}
		details["amount"], details["method"] = engine.FormatAmount(mp.Amount), mp.Method
		if mp.IsRefund() {
			details["deposit_id"] = mp.DepositID
		}
		return p.audit(ctx, tx, mp.action(action), mp.OrganizationID, key, details)
	})
	if err != nil {
		return nil, err
	}
	// The worker would see it at its next poll; this is now.
	if err := p.pollNow(ctx, mp); err != nil {
		return mp, err
	}
	return mp, nil
}

func (p *Provider) audit(ctx context.Context, tx Tx, action, orgID, subject string, details map[string]string) error {
	now := p.now()
	return tx.AppendAudit(ctx, &engine.AuditEntry{
		ID: engine.NewID(engine.PrefixAudit, now), Actor: engine.ActorFrom(ctx), Action: action,
		OrganizationID: orgID, Subject: subject, Details: details, CreatedAt: now,
	})
}

func notFound(err error, what string) error {
	if errors.Is(err, engine.ErrNotFound) {
		return engine.Errorf(engine.CodeNotFound, "%s not found", what)
	}
	return err
}

// checkLabel checks a short printable text.
func checkLabel(field, s string, max int) error {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return engine.Invalid(field, "must be valid UTF-8 without control characters")
	}
	if utf8.RuneCountInString(s) > max {
		return engine.Invalid(field, fmt.Sprintf("must be at most %d characters", max))
	}
	return nil
}

// WaitingPayouts counts every organization's payouts waiting for an
// operator, by status (PayoutQueued, and PayoutMatched where an SMS matched
// one and the organization wants it confirmed), each with its oldest
// creation, for metrics. A status none waits in is absent.
func (p *Provider) WaitingPayouts(ctx context.Context) (map[string]engine.Queue, error) {
	var out map[string]engine.Queue
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.CountWaitingPayouts(ctx)
		return err
	})
	return out, err
}
