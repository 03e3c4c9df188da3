package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/payd-engine/payd/engine"
)

// The sandbox keeps its tables itself, as a plug-in must (ARCHITECTURE.md):
// its SQL lives here, not in storage/, and runs on the engine's store
// through engine.SQLTx, which storage/sqlite and storage/postgres give
// without learning the sandbox's types. Statements are written once with
// numbered parameters ($1), which SQLite reads as Postgres does; only an
// INSERT's conflict clause differs. The tables, sandbox_payments and
// sandbox_payouts, were created by storage's released migrations (0002, 0003,
// 0010), which every database has and which are never edited or moved.
//
// The sandbox is not the engine: each call is a transaction of its own,
// outside the engine's.

// SQLStore is the PaymentStore and PayoutStore on the engine's store. Its
// Tx must implement engine.SQLTx (those of storage/sqlite and
// storage/postgres do).
type SQLStore struct{ store engine.Store }

var (
	_ PaymentStore = SQLStore{}
	_ PayoutStore  = SQLStore{}
)

// NewSQLStore returns the sandbox's store on the engine's.
func NewSQLStore(s engine.Store) SQLStore { return SQLStore{s} }

// write runs fn in a read-write transaction; insertOrNothing ends an
// INSERT whose uniqueness violation must not raise (Postgres's aborts the
// transaction).
func (s SQLStore) write(ctx context.Context, fn func(tx engine.SQLTx, insertOrNothing string) error) error {
	return s.store.InTx(ctx, func(ctx context.Context, t engine.Tx) error {
		st, err := sqlTx(t)
		if err != nil {
			return err
		}
		var clause string
		if st.Dialect() == "postgres" {
			clause = ` ON CONFLICT DO NOTHING`
		}
		return fn(st, clause)
	})
}

// read runs fn, one SELECT, without a transaction where the store can.
func (s SQLStore) read(ctx context.Context, fn func(tx engine.SQLTx) error) error {
	run := s.store.ReadTx
	if r, ok := s.store.(engine.OneReader); ok {
		run = r.ReadOne
	}
	return run(ctx, func(ctx context.Context, t engine.Tx) error {
		st, err := sqlTx(t)
		if err != nil {
			return err
		}
		return fn(st)
	})
}

func sqlTx(t engine.Tx) (engine.SQLTx, error) {
	st, ok := t.(engine.SQLTx)
	if !ok {
		return nil, fmt.Errorf("sandbox: the store's Tx (%T) is not an engine.SQLTx", t)
	}
	return st, nil
}

const sandboxPaymentColumns = `channel, transaction_id, type, status, amount, currency,
	payer_phone, recipient_phone, completed_at, time_precision_ns`

// RecordSandboxPayment stores an organization's simulated wallet payment.
// Returns engine.ErrDuplicate if that organization has one with the same
// (Channel, TransactionID).
func (s SQLStore) RecordSandboxPayment(ctx context.Context, organizationID string, p *engine.ProviderTransaction) error {
	return s.write(ctx, func(tx engine.SQLTx, insertOrNothing string) error {
		n, err := tx.ExecSQL(ctx, `INSERT INTO sandbox_payments (organization_id, `+sandboxPaymentColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`+insertOrNothing,
			organizationID, p.Channel, p.TransactionID, p.Type, p.Status, p.Amount, p.Currency,
			p.PayerPhone, p.RecipientPhone, p.CompletedAt, int64(p.TimePrecision))
		if err == nil && n == 0 {
			err = fmt.Errorf("%w: sandbox payment %s %s", engine.ErrDuplicate, p.Channel, p.TransactionID)
		}
		return err
	})
}

// GetSandboxPayment returns the organization's payment with that channel
// and transaction ID, or engine.ErrNotFound.
func (s SQLStore) GetSandboxPayment(ctx context.Context, organizationID, channel, transactionID string) (*engine.ProviderTransaction, error) {
	var out *engine.ProviderTransaction
	err := s.read(ctx, func(tx engine.SQLTx) error {
		out = nil // a retried read starts again
		return tx.QuerySQL(ctx, `SELECT `+sandboxPaymentColumns+` FROM sandbox_payments
			WHERE organization_id = $1 AND channel = $2 AND transaction_id = $3`,
			[]any{organizationID, channel, transactionID}, func(scan func(...any) error) error {
				var p engine.ProviderTransaction
				var precision int64
				if err := scan(&p.Channel, &p.TransactionID, &p.Type, &p.Status, &p.Amount, &p.Currency,
					&p.PayerPhone, &p.RecipientPhone, &p.CompletedAt, &precision); err != nil {
					return err
				}
				p.TimePrecision = time.Duration(precision)
				out = &p
				return nil
			})
	})
	if err == nil && out == nil {
		err = engine.ErrNotFound
	}
	return out, err
}

const sandboxPayoutColumns = `idempotency_key, reference, method, account, amount, status, reason,
	created_at, completed_at`

// CreateSandboxPayout stores p for an organization. Returns
// engine.ErrDuplicate if a payout with p.IdempotencyKey exists.
func (s SQLStore) CreateSandboxPayout(ctx context.Context, organizationID string, p *engine.Payout) error {
	return s.write(ctx, func(tx engine.SQLTx, insertOrNothing string) error {
		n, err := tx.ExecSQL(ctx, `INSERT INTO sandbox_payouts (organization_id, `+sandboxPayoutColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`+insertOrNothing,
			organizationID, p.IdempotencyKey, p.Reference, p.Method, p.Account, p.Amount, p.Status, p.Reason,
			p.CreatedAt, p.CompletedAt)
		if err == nil && n == 0 {
			err = fmt.Errorf("%w: sandbox payout %s", engine.ErrDuplicate, p.IdempotencyKey)
		}
		return err
	})
}

// GetSandboxPayout returns the payout with that idempotency key and its
// organization, or engine.ErrNotFound.
func (s SQLStore) GetSandboxPayout(ctx context.Context, idempotencyKey string) (*engine.Payout, string, error) {
	var out *engine.Payout
	var org string
	err := s.read(ctx, func(tx engine.SQLTx) error {
		out = nil
		return tx.QuerySQL(ctx, `SELECT organization_id, `+sandboxPayoutColumns+` FROM sandbox_payouts
			WHERE idempotency_key = $1`, []any{idempotencyKey}, func(scan func(...any) error) error {
			var p engine.Payout
			if err := scan(&org, &p.IdempotencyKey, &p.Reference, &p.Method, &p.Account, &p.Amount, &p.Status,
				&p.Reason, &p.CreatedAt, &p.CompletedAt); err != nil {
				return err
			}
			out = &p
			return nil
		})
	})
	if err == nil && out == nil {
		err = engine.ErrNotFound
	}
	return out, org, err
}

// CompleteSandboxPayout writes the outcome of a pending payout: status,
// reason and completion. It writes nothing and returns engine.ErrNotFound
// unless a payout with that key is pending: the condition, checked by the
// UPDATE on the row as it finds it, is what lets one outcome win when two
// processes settle the same payout.
func (s SQLStore) CompleteSandboxPayout(ctx context.Context, p *engine.Payout) error {
	return s.write(ctx, func(tx engine.SQLTx, _ string) error {
		n, err := tx.ExecSQL(ctx, `UPDATE sandbox_payouts SET status = $1, reason = $2, completed_at = $3
			WHERE idempotency_key = $4 AND status = '`+engine.PayoutPending+`'`,
			p.Status, p.Reason, p.CompletedAt, p.IdempotencyKey)
		if err == nil && n == 0 {
			err = engine.ErrNotFound
		}
		return err
	})
}
