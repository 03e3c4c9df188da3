package bkash

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// Migrations is the bKash provider's migration line: its tables (accounts,
// checkout payments), one folder of numbered .sql files per dialect.
func Migrations() engine.MigrationLine {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the embedded folder exists
	}
	return engine.MigrationLine{Name: "bkash", Files: files}
}

// Account is an organization's connection: its sealed credentials and
// sealed shared token.
type Account struct {
	OrganizationID string
	Credentials    []byte
	Token          []byte
	// TokenFreshUntil is when the token must be renewed (zero: no token).
	TokenFreshUntil time.Time
	// LeaseUntil is the end of a renewal under way (zero: none).
	LeaseUntil  time.Time
	ConnectedAt time.Time
}

// Payment states.
const (
	StateCreated   = "created"
	StateExecuting = "executing"
	StateExecuted  = "executed"
	StateSubmitted = "submitted"
	StateCancelled = "cancelled"
	StateFailed    = "failed"
	StateClosed    = "closed"
)

// Payment is a checkout payment the provider created.
type Payment struct {
	PaymentID      string
	OrganizationID string
	DepositID      string
	CheckoutToken  string
	Amount         decimal.Decimal
	State          string
	TrxID          string
	PayerPhone     string
	CompletedAt    time.Time
	ExpiresAt      time.Time
	NextCheckAt    time.Time
	CreatedAt      time.Time
}

// SQLStore keeps the provider's tables on the engine's store, each call a
// transaction of its own. Statements use numbered parameters, which SQLite
// reads as Postgres does.
type SQLStore struct{ store engine.Store }

// NewSQLStore returns the provider's store on the engine's.
func NewSQLStore(s engine.Store) SQLStore { return SQLStore{s} }

func (s SQLStore) write(ctx context.Context, fn func(tx engine.SQLTx) error) error {
	return s.store.InTx(ctx, func(ctx context.Context, t engine.Tx) error {
		st, ok := t.(engine.SQLTx)
		if !ok {
			return fmt.Errorf("bkash: the store's Tx (%T) is not an engine.SQLTx", t)
		}
		return fn(st)
	})
}

func (s SQLStore) read(ctx context.Context, fn func(tx engine.SQLTx) error) error {
	run := s.store.ReadTx
	if r, ok := s.store.(engine.OneReader); ok {
		run = r.ReadOne
	}
	return run(ctx, func(ctx context.Context, t engine.Tx) error {
		st, ok := t.(engine.SQLTx)
		if !ok {
			return fmt.Errorf("bkash: the store's Tx (%T) is not an engine.SQLTx", t)
		}
		return fn(st)
	})
}

// PutAccount connects an organization, replacing its earlier connection
// and dropping that one's token.
func (s SQLStore) PutAccount(ctx context.Context, a *Account) error {
	return s.putAccount(ctx, a, nil)
}

// putAccount is PutAccount with audit, when not nil, appended in the same
// transaction.
func (s SQLStore) putAccount(ctx context.Context, a *Account, audit *engine.AuditEntry) error {
	return s.writeAudited(ctx, audit, func(tx engine.SQLTx) error {
		if _, err := tx.ExecSQL(ctx, `DELETE FROM bkash_accounts WHERE organization_id = $1`, a.OrganizationID); err != nil {
			return err
		}
		_, err := tx.ExecSQL(ctx, `INSERT INTO bkash_accounts (organization_id, credentials, token, token_fresh_until, lease_until, connected_at)
			VALUES ($1, $2, NULL, NULL, NULL, $3)`, a.OrganizationID, a.Credentials, a.ConnectedAt)
		return err
	})
}

// DeleteAccount disconnects an organization; false if it was not.
func (s SQLStore) DeleteAccount(ctx context.Context, orgID string) (bool, error) {
	return s.deleteAccount(ctx, orgID, nil)
}

// deleteAccount is DeleteAccount with audit, when not nil, appended in the
// same transaction if there was a connection.
func (s SQLStore) deleteAccount(ctx context.Context, orgID string, audit *engine.AuditEntry) (bool, error) {
	var n int64
	err := s.store.InTx(ctx, func(ctx context.Context, t engine.Tx) error {
		tx, ok := t.(engine.SQLTx)
		if !ok {
			return fmt.Errorf("bkash: the store's Tx (%T) is not an engine.SQLTx", t)
		}
		var err error
		if n, err = tx.ExecSQL(ctx, `DELETE FROM bkash_accounts WHERE organization_id = $1`, orgID); err != nil || n == 0 || audit == nil {
			return err
		}
		return t.AppendAudit(ctx, audit)
	})
	return n > 0, err
}

// writeAudited is write with audit, when not nil, appended after fn.
func (s SQLStore) writeAudited(ctx context.Context, audit *engine.AuditEntry, fn func(tx engine.SQLTx) error) error {
	return s.store.InTx(ctx, func(ctx context.Context, t engine.Tx) error {
		tx, ok := t.(engine.SQLTx)
		if !ok {
			return fmt.Errorf("bkash: the store's Tx (%T) is not an engine.SQLTx", t)
		}
		if err := fn(tx); err != nil || audit == nil {
			return err
		}
		return t.AppendAudit(ctx, audit)
	})
}

// GetAccount returns an organization's connection or engine.ErrNotFound.
func (s SQLStore) GetAccount(ctx context.Context, orgID string) (*Account, error) {
	var a *Account
	err := s.read(ctx, func(tx engine.SQLTx) error {
		return tx.QuerySQL(ctx, `SELECT organization_id, credentials, token, token_fresh_until, lease_until, connected_at
			FROM bkash_accounts WHERE organization_id = $1`, []any{orgID}, func(scan func(...any) error) error {
			a = &Account{}
			return scan(&a.OrganizationID, &a.Credentials, &a.Token, &a.TokenFreshUntil, &a.LeaseUntil, &a.ConnectedAt)
		})
	})
	if err == nil && a == nil {
		err = engine.ErrNotFound
	}
	return a, err
}

// TakeRenewal leases the renewal of the connection's token until leaseUntil
// when, at now, its token is due and no other renewal's lease runs: one
// caller, of every payd instance on the database, wins. connectedAt names
// the connection, so a renewal never outlives a reconnect.
func (s SQLStore) TakeRenewal(ctx context.Context, orgID string, connectedAt, now, leaseUntil time.Time) (bool, error) {
	var n int64
	err := s.write(ctx, func(tx engine.SQLTx) error {
		var err error
		n, err = tx.ExecSQL(ctx, `UPDATE bkash_accounts SET lease_until = $4
			WHERE organization_id = $1 AND connected_at = $2
			AND (token_fresh_until IS NULL OR token_fresh_until <= $3)
			AND (lease_until IS NULL OR lease_until <= $3)`, orgID, connectedAt, now, leaseUntil)
		return err
	})
	return n == 1, err
}

// HoldRenewal sets the end of the renewal lease (a failed renewal's
// backoff).
func (s SQLStore) HoldRenewal(ctx context.Context, orgID string, connectedAt, until time.Time) error {
	return s.write(ctx, func(tx engine.SQLTx) error {
		_, err := tx.ExecSQL(ctx, `UPDATE bkash_accounts SET lease_until = $3
			WHERE organization_id = $1 AND connected_at = $2`, orgID, connectedAt, until)
		return err
	})
}

// SaveToken stores a renewed token (sealed) and ends the renewal's lease.
func (s SQLStore) SaveToken(ctx context.Context, orgID string, connectedAt time.Time, sealed []byte, freshUntil time.Time) error {
	return s.write(ctx, func(tx engine.SQLTx) error {
		_, err := tx.ExecSQL(ctx, `UPDATE bkash_accounts SET token = $3, token_fresh_until = $4, lease_until = NULL
			WHERE organization_id = $1 AND connected_at = $2`, orgID, connectedAt, sealed, freshUntil)
		return err
	})
}

const paymentColumns = `payment_id, organization_id, deposit_id, checkout_token, amount, state, trx_id,
	payer_phone, completed_at, expires_at, next_check_at, created_at`

func scanPayment(scan func(...any) error) (*Payment, error) {
	p := &Payment{}
	err := scan(&p.PaymentID, &p.OrganizationID, &p.DepositID, &p.CheckoutToken, &p.Amount, &p.State, &p.TrxID,
		&p.PayerPhone, &p.CompletedAt, &p.ExpiresAt, &p.NextCheckAt, &p.CreatedAt)
	return p, err
}

// InsertPayment records a created payment. engine.ErrDuplicate for a
// payment or deposit already recorded.
func (s SQLStore) InsertPayment(ctx context.Context, p *Payment) error {
	return s.write(ctx, func(tx engine.SQLTx) error {
		_, err := tx.ExecSQL(ctx, `INSERT INTO bkash_payments (`+paymentColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			p.PaymentID, p.OrganizationID, p.DepositID, p.CheckoutToken, p.Amount, p.State, p.TrxID,
			p.PayerPhone, p.CompletedAt, p.ExpiresAt, p.NextCheckAt, p.CreatedAt)
		return err
	})
}

func (s SQLStore) getPayment(ctx context.Context, where string, args ...any) (*Payment, error) {
	var p *Payment
	err := s.read(ctx, func(tx engine.SQLTx) error {
		return tx.QuerySQL(ctx, `SELECT `+paymentColumns+` FROM bkash_payments WHERE `+where, args,
			func(scan func(...any) error) error {
				var err error
				p, err = scanPayment(scan)
				return err
			})
	})
	if err == nil && p == nil {
		err = engine.ErrNotFound
	}
	return p, err
}

// GetPayment returns a payment by bKash's payment ID or engine.ErrNotFound.
func (s SQLStore) GetPayment(ctx context.Context, paymentID string) (*Payment, error) {
	return s.getPayment(ctx, `payment_id = $1`, paymentID)
}

// paymentByTrx names the partial index's own condition, so that every plan
// (a generic one too) can use it.
const paymentByTrx = `organization_id = $1 AND trx_id = $2 AND trx_id <> ''`

// duePayments repeats the partial index's condition for the same reason.
const duePayments = `SELECT ` + paymentColumns + ` FROM bkash_payments
	WHERE state IN ('created', 'executing', 'executed') AND next_check_at <= $1
	ORDER BY next_check_at LIMIT $2`

// GetPaymentByTrx returns an organization's payment executed as trxID or
// engine.ErrNotFound.
func (s SQLStore) GetPaymentByTrx(ctx context.Context, orgID, trxID string) (*Payment, error) {
	if trxID == "" {
		return nil, engine.ErrNotFound
	}
	return s.getPayment(ctx, paymentByTrx, orgID, trxID)
}

// MovePayment moves a payment from one of the states from to the state
// to, with what bKash reported (a trxID, its payer, when it completed: kept
// when empty), and when to look at it next; false if it was in none of
// them (another caller moved it first).
func (s SQLStore) MovePayment(ctx context.Context, paymentID string, from []string, to string, p Payment) (bool, error) {
	args := []any{paymentID, to, p.TrxID, p.PayerPhone, p.CompletedAt, p.NextCheckAt}
	marks := make([]string, len(from))
	for i, f := range from {
		args = append(args, f)
		marks[i] = fmt.Sprintf("$%d", len(args))
	}
	var n int64
	err := s.write(ctx, func(tx engine.SQLTx) error {
		var err error
		n, err = tx.ExecSQL(ctx, `UPDATE bkash_payments SET state = $2,
			trx_id = CASE WHEN $3 = '' THEN trx_id ELSE $3 END,
			payer_phone = CASE WHEN $4 = '' THEN payer_phone ELSE $4 END,
			completed_at = COALESCE($5, completed_at),
			next_check_at = $6
			WHERE payment_id = $1 AND state IN (`+strings.Join(marks, ", ")+`)`, args...)
		return err
	})
	return n == 1, err
}

// Recheck sets when a payment still open is looked at next.
func (s SQLStore) Recheck(ctx context.Context, paymentID string, at time.Time) error {
	return s.write(ctx, func(tx engine.SQLTx) error {
		_, err := tx.ExecSQL(ctx, `UPDATE bkash_payments SET next_check_at = $2 WHERE payment_id = $1`, paymentID, at)
		return err
	})
}

// DuePayments returns up to limit payments still open whose next look is
// due at now, from the index of open payments.
func (s SQLStore) DuePayments(ctx context.Context, now time.Time, limit int) ([]*Payment, error) {
	var ps []*Payment
	err := s.read(ctx, func(tx engine.SQLTx) error {
		return tx.QuerySQL(ctx, duePayments, []any{now, limit}, func(scan func(...any) error) error {
			p, err := scanPayment(scan)
			ps = append(ps, p)
			return err
		})
	})
	return ps, err
}

// ExpireToken makes the token sealed as sealed due at now, if the row
// still holds it (a token bKash refused before its time).
func (s SQLStore) ExpireToken(ctx context.Context, orgID string, sealed []byte, now time.Time) error {
	if sealed == nil {
		return nil
	}
	return s.write(ctx, func(tx engine.SQLTx) error {
		_, err := tx.ExecSQL(ctx, `UPDATE bkash_accounts SET token_fresh_until = $3
			WHERE organization_id = $1 AND token = $2 AND token_fresh_until > $3`, orgID, sealed, now)
		return err
	})
}

// Refund states.
const (
	RefundSending = "sending"
	RefundMade    = "made"
	RefundRefused = "refused"
)

// Refund is a refund sent (or being sent) through bKash's refund operation.
type Refund struct {
	RefundID       string
	OrganizationID string
	PaymentID      string
	Amount         decimal.Decimal
	State          string
	// RefundTrxID is bKash's ID of the refund, once known.
	RefundTrxID string
	// Reason is bKash's refusal.
	Reason string
	// SentAt is when it was last sent.
	SentAt time.Time
}

// ErrRefundInFlight is InsertRefund's answer while another refund of the
// same payment is being sent.
var ErrRefundInFlight = errors.New("bkash: another refund of the payment is being sent")

// InsertRefund records a refund about to be sent (state sending):
// ErrRefundInFlight while another refund of its payment is sending,
// engine.ErrDuplicate for a refund ID already recorded.
func (s SQLStore) InsertRefund(ctx context.Context, r *Refund) error {
	err := s.write(ctx, func(tx engine.SQLTx) error {
		// The partial unique index decides between two instances; this read
		// tells its refusal from a duplicate ID.
		busy := false
		err := tx.QuerySQL(ctx, `SELECT refund_id FROM bkash_refunds WHERE payment_id = $1 AND state = 'sending'`,
			[]any{r.PaymentID}, func(scan func(...any) error) error {
				var id string
				busy = true
				return scan(&id)
			})
		if err != nil {
			return err
		}
		if busy {
			return ErrRefundInFlight
		}
		_, err = tx.ExecSQL(ctx, `INSERT INTO bkash_refunds (refund_id, organization_id, payment_id, amount, state,
			refund_trx_id, reason, sent_at) VALUES ($1, $2, $3, $4, $5, '', '', $6)`,
			r.RefundID, r.OrganizationID, r.PaymentID, r.Amount, RefundSending, r.SentAt)
		return err
	})
	if errors.Is(err, engine.ErrDuplicate) {
		// The sending index or the key: the key's row says which.
		if _, gerr := s.GetRefund(ctx, r.RefundID); errors.Is(gerr, engine.ErrNotFound) {
			return ErrRefundInFlight
		}
	}
	return err
}

// GetRefund returns a refund by its ID or engine.ErrNotFound.
func (s SQLStore) GetRefund(ctx context.Context, refundID string) (*Refund, error) {
	var r *Refund
	err := s.read(ctx, func(tx engine.SQLTx) error {
		return tx.QuerySQL(ctx, `SELECT refund_id, organization_id, payment_id, amount, state, refund_trx_id, reason, sent_at
			FROM bkash_refunds WHERE refund_id = $1`, []any{refundID}, func(scan func(...any) error) error {
			r = &Refund{}
			return scan(&r.RefundID, &r.OrganizationID, &r.PaymentID, &r.Amount, &r.State, &r.RefundTrxID, &r.Reason, &r.SentAt)
		})
	})
	if err == nil && r == nil {
		err = engine.ErrNotFound
	}
	return r, err
}

// KnownRefunds returns bKash's IDs of a payment's refunds recorded made
// (at most ten: bKash's limit), from its index.
func (s SQLStore) KnownRefunds(ctx context.Context, paymentID string) (map[string]bool, error) {
	known := map[string]bool{}
	err := s.read(ctx, func(tx engine.SQLTx) error {
		return tx.QuerySQL(ctx, `SELECT refund_trx_id FROM bkash_refunds WHERE payment_id = $1 AND refund_trx_id <> ''`,
			[]any{paymentID}, func(scan func(...any) error) error {
				var id string
				err := scan(&id)
				known[id] = true
				return err
			})
	})
	return known, err
}

// FinishRefund ends a sending refund: made with bKash's refund ID, or
// refused with bKash's reason; false if it was not sending (another
// caller ended it first). A refund ID already recorded for the payment is
// engine.ErrDuplicate.
func (s SQLStore) FinishRefund(ctx context.Context, refundID, state, refundTrxID, reason string) (bool, error) {
	var n int64
	err := s.write(ctx, func(tx engine.SQLTx) error {
		var err error
		n, err = tx.ExecSQL(ctx, `UPDATE bkash_refunds SET state = $2, refund_trx_id = $3, reason = $4
			WHERE refund_id = $1 AND state = 'sending'`, refundID, state, refundTrxID, reason)
		return err
	})
	return n == 1, err
}

// ResendRefund marks a sending refund sent again at at, if it was last sent
// at last: false when another caller did first.
func (s SQLStore) ResendRefund(ctx context.Context, refundID string, last, at time.Time) (bool, error) {
	var n int64
	err := s.write(ctx, func(tx engine.SQLTx) error {
		var err error
		n, err = tx.ExecSQL(ctx, `UPDATE bkash_refunds SET sent_at = $3
			WHERE refund_id = $1 AND state = 'sending' AND sent_at = $2`, refundID, last, at)
		return err
	})
	return n == 1, err
}
