package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/payd-engine/payd/engine"
)

// The sandbox provider's store of simulated wallet payments. These are
// methods of Store, not of Tx: the sandbox provider is not the engine and
// writes outside its transactions.

const sandboxPaymentColumns = `channel, transaction_id, type, status, amount, currency,
	payer_phone, recipient_phone, completed_at, time_precision_ns`

// RecordSandboxPayment stores an organization's simulated wallet payment.
// Returns engine.ErrDuplicate if that organization has one with the same
// (Channel, TransactionID).
func (s *Store) RecordSandboxPayment(ctx context.Context, organizationID string, p *engine.ProviderTransaction) error {
	return retry(ctx, func() error {
		return runTx(ctx, s.writer, nil, func(t *sql.Tx) error {
			_, err := t.ExecContext(ctx, `INSERT INTO sandbox_payments (organization_id, `+sandboxPaymentColumns+`)
				VALUES (`+placeholders(11)+`)`,
				organizationID, p.Channel, p.TransactionID, p.Type, p.Status, p.Amount.String(), p.Currency,
				p.PayerPhone, p.RecipientPhone, zeroMicros(p.CompletedAt), int64(p.TimePrecision))
			return interpretError(err)
		})
	})
}

// GetSandboxPayment returns the organization's payment with that channel
// and transaction ID, or engine.ErrNotFound.
func (s *Store) GetSandboxPayment(ctx context.Context, organizationID, channel, transactionID string) (*engine.ProviderTransaction, error) {
	var p engine.ProviderTransaction
	err := retry(ctx, func() error {
		var precision int64
		err := s.reader.QueryRowContext(ctx, `SELECT `+sandboxPaymentColumns+` FROM sandbox_payments
			WHERE organization_id = ? AND channel = ? AND transaction_id = ?`, organizationID, channel, transactionID).
			Scan(&p.Channel, &p.TransactionID, &p.Type, &p.Status, decimalCol{&p.Amount}, &p.Currency,
				&p.PayerPhone, &p.RecipientPhone, timeCol{&p.CompletedAt}, &precision)
		p.TimePrecision = time.Duration(precision)
		return err
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
		return runTx(ctx, s.writer, nil, func(t *sql.Tx) error {
			_, err := t.ExecContext(ctx, `INSERT INTO sandbox_payouts (organization_id, `+sandboxPayoutColumns+`)
				VALUES (`+placeholders(10)+`)`,
				organizationID, p.IdempotencyKey, p.Reference, p.Method, p.Account, p.Amount.String(), p.Status, p.Reason,
				micros(p.CreatedAt), zeroMicros(p.CompletedAt))
			return interpretError(err)
		})
	})
}

// GetSandboxPayout returns the payout with that idempotency key and its
// organization, or engine.ErrNotFound.
func (s *Store) GetSandboxPayout(ctx context.Context, idempotencyKey string) (*engine.Payout, string, error) {
	var p engine.Payout
	var org string
	err := retry(ctx, func() error {
		return s.reader.QueryRowContext(ctx, `SELECT organization_id, `+sandboxPayoutColumns+` FROM sandbox_payouts
			WHERE idempotency_key = ?`, idempotencyKey).
			Scan(&org, &p.IdempotencyKey, &p.Reference, &p.Method, &p.Account, decimalCol{&p.Amount}, &p.Status, &p.Reason,
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
		return runTx(ctx, s.writer, nil, func(t *sql.Tx) error {
			return (&tx{t}).exec(ctx, `UPDATE sandbox_payouts SET status = ?, reason = ?, reference = ?, completed_at = ?
				WHERE idempotency_key = ?`,
				p.Status, p.Reason, p.Reference, zeroMicros(p.CompletedAt), p.IdempotencyKey)
		})
	})
}
