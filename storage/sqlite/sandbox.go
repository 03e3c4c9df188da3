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

// RecordSandboxPayment stores a simulated wallet payment. Returns
// engine.ErrDuplicate if one with the same (Channel, TransactionID) exists.
func (s *Store) RecordSandboxPayment(ctx context.Context, p *engine.ProviderTransaction) error {
	return retry(ctx, func() error {
		return runTx(ctx, s.writer, nil, func(t *sql.Tx) error {
			_, err := t.ExecContext(ctx, `INSERT INTO sandbox_payments (`+sandboxPaymentColumns+`)
				VALUES (`+placeholders(10)+`)`,
				p.Channel, p.TransactionID, p.Type, p.Status, p.Amount.String(), p.Currency,
				p.PayerPhone, p.RecipientPhone, zeroMicros(p.CompletedAt), int64(p.TimePrecision))
			return interpretError(err)
		})
	})
}

// GetSandboxPayment returns the payment with that channel and transaction
// ID, or engine.ErrNotFound.
func (s *Store) GetSandboxPayment(ctx context.Context, channel, transactionID string) (*engine.ProviderTransaction, error) {
	var p engine.ProviderTransaction
	err := retry(ctx, func() error {
		var precision int64
		err := s.reader.QueryRowContext(ctx, `SELECT `+sandboxPaymentColumns+` FROM sandbox_payments
			WHERE channel = ? AND transaction_id = ?`, channel, transactionID).
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
