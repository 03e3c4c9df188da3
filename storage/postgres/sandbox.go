package postgres

import (
	"context"
	"fmt"

	"github.com/payd-engine/payd/engine"
)

// The sandbox provider's store of simulated wallet payments. These are
// methods of Store, not of Tx: the sandbox provider is not the engine and
// writes outside its transactions. Each is one statement, atomic on its
// own.

const sandboxPaymentColumns = `channel, transaction_id, type, status, amount, currency,
	payer_phone, recipient_phone, completed_at, time_precision_ns`

// RecordSandboxPayment stores an organization's simulated wallet payment.
// Returns engine.ErrDuplicate if that organization has one with the same
// (Channel, TransactionID).
func (s *Store) RecordSandboxPayment(ctx context.Context, organizationID string, p *engine.ProviderTransaction) error {
	return retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, `INSERT INTO sandbox_payments (organization_id, `+sandboxPaymentColumns+`)
			VALUES (`+params(11)+`) ON CONFLICT DO NOTHING`,
			organizationID, p.Channel, p.TransactionID, p.Type, p.Status, p.Amount, p.Currency,
			p.PayerPhone, p.RecipientPhone, zeroNull(p.CompletedAt), int64(p.TimePrecision))
		if err != nil {
			return interpretError(err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: sandbox payment %s %s", engine.ErrDuplicate, p.Channel, p.TransactionID)
		}
		return nil
	})
}

// GetSandboxPayment returns the organization's payment with that channel
// and transaction ID, or engine.ErrNotFound.
func (s *Store) GetSandboxPayment(ctx context.Context, organizationID, channel, transactionID string) (*engine.ProviderTransaction, error) {
	var p engine.ProviderTransaction
	err := retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT `+sandboxPaymentColumns+` FROM sandbox_payments
			WHERE organization_id = $1 AND channel = $2 AND transaction_id = $3`, organizationID, channel, transactionID).
			Scan(&p.Channel, &p.TransactionID, &p.Type, &p.Status, &p.Amount, &p.Currency,
				&p.PayerPhone, &p.RecipientPhone, timeCol{&p.CompletedAt}, durationCol{&p.TimePrecision})
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return &p, nil
}

// The sandbox provider's simulated payouts, by idempotency key.

const sandboxPayoutColumns = `idempotency_key, reference, method, account, amount, status, reason,
	created_at, completed_at`

// CreateSandboxPayout stores p for an organization. Returns
// engine.ErrDuplicate if a payout with p.IdempotencyKey exists.
func (s *Store) CreateSandboxPayout(ctx context.Context, organizationID string, p *engine.Payout) error {
	return retry(ctx, func() error {
		tag, err := s.pool.Exec(ctx, `INSERT INTO sandbox_payouts (organization_id, `+sandboxPayoutColumns+`)
			VALUES (`+params(10)+`) ON CONFLICT DO NOTHING`,
			organizationID, p.IdempotencyKey, p.Reference, p.Method, p.Account, p.Amount, p.Status, p.Reason,
			p.CreatedAt, zeroNull(p.CompletedAt))
		if err != nil {
			return interpretError(err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: sandbox payout %s", engine.ErrDuplicate, p.IdempotencyKey)
		}
		return nil
	})
}

// GetSandboxPayout returns the payout with that idempotency key and its
// organization, or engine.ErrNotFound.
func (s *Store) GetSandboxPayout(ctx context.Context, idempotencyKey string) (*engine.Payout, string, error) {
	var p engine.Payout
	var org string
	err := retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT organization_id, `+sandboxPayoutColumns+` FROM sandbox_payouts
			WHERE idempotency_key = $1`, idempotencyKey).
			Scan(&org, &p.IdempotencyKey, &p.Reference, &p.Method, &p.Account, &p.Amount, &p.Status, &p.Reason,
				timeCol{&p.CreatedAt}, timeCol{&p.CompletedAt})
	})
	if err != nil {
		return nil, "", interpretError(err)
	}
	return &p, org, nil
}

// UpdateSandboxPayout writes Status, Reason, Reference and CompletedAt.
// Returns engine.ErrNotFound if it does not exist.
func (s *Store) UpdateSandboxPayout(ctx context.Context, p *engine.Payout) error {
	return retry(ctx, func() error {
		return execOne(ctx, s.pool, `UPDATE sandbox_payouts SET status = $1, reason = $2, reference = $3,
			completed_at = $4
			WHERE idempotency_key = $5`,
			p.Status, p.Reason, p.Reference, zeroNull(p.CompletedAt), p.IdempotencyKey)
	})
}
