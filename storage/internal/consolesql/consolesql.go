// Package consolesql is the SQL of engine.ConsoleTx (migrations 0016, 0021
// and 0023): operators and their sessions, payment links, and the
// compatible checkout's keys, invoices and IPNs, written once for both
// stores over engine.SQLTx. Each store's Tx.Console returns its Rows; the
// console's searches of deposits and withdrawals stay with each store,
// whose row scanning and join order differ.
package consolesql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// Rows runs the console's statements in one transaction of a store: it
// is the stores' engine.ConsoleTx.
type Rows struct {
	tx engine.SQLTx
	// lockRow ends a SELECT whose row the transaction then updates: a row
	// lock on Postgres, nothing on SQLite, whose writer is alone.
	lockRow string
}

// In returns the console's rows of tx; lockRow is the adapter's row-lock
// clause ("" when a write transaction is already alone).
func In(tx engine.SQLTx, lockRow string) Rows { return Rows{tx: tx, lockRow: lockRow} }

// sql writes query's "?" placeholders as the store's dialect wants them.
func (r Rows) sql(query string) string { return placeholders(r.tx.Dialect(), query) }

// placeholders numbers query's "?" placeholders as Postgres's $1, $2, ...
func placeholders(dialect, query string) string {
	if dialect != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// insert runs an INSERT … ON CONFLICT DO NOTHING: no row is a duplicate.
func (r Rows) insert(ctx context.Context, what, query string, args ...any) error {
	n, err := r.tx.ExecSQL(ctx, r.sql(query+` ON CONFLICT DO NOTHING`), args...)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: %s", engine.ErrDuplicate, what)
	}
	return err
}

// execOne runs a statement that must change one row.
func (r Rows) execOne(ctx context.Context, query string, args ...any) error {
	n, err := r.tx.ExecSQL(ctx, r.sql(query), args...)
	if err == nil && n == 0 {
		err = engine.ErrNotFound
	}
	return err
}

// nullBytes stores a nil or empty slice as NULL.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

const operatorColumns = `id, email, role, organization_id, password_hash, totp_secret, last_totp_step,
	setup_token_hash, setup_expires_at, failed_logins, locked_until, disabled_at, created_at, updated_at`

func (r Rows) operators(ctx context.Context, where string, args ...any) ([]*engine.Operator, error) {
	var out []*engine.Operator
	err := r.tx.QuerySQL(ctx, r.sql(`SELECT `+operatorColumns+` FROM operators `+where), args, func(scan func(dest ...any) error) error {
		var o engine.Operator
		if err := scan(&o.ID, &o.Email, &o.Role, &o.OrganizationID, &o.PasswordHash, &o.TOTPSecret, &o.LastTOTPStep,
			&o.SetupTokenHash, &o.SetupExpiresAt, &o.FailedLogins, &o.LockedUntil, &o.DisabledAt, &o.CreatedAt, &o.UpdatedAt); err != nil {
			return err
		}
		out = append(out, &o)
		return nil
	})
	return out, err
}

func (r Rows) operator(ctx context.Context, where string, args ...any) (*engine.Operator, error) {
	ops, err := r.operators(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, engine.ErrNotFound
	}
	return ops[0], nil
}

func (r Rows) CreateOperator(ctx context.Context, o *engine.Operator) error {
	return r.insert(ctx, "operator "+o.Email, `INSERT INTO operators (`+operatorColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Email, o.Role, o.OrganizationID, o.PasswordHash, nullBytes(o.TOTPSecret), o.LastTOTPStep,
		nullBytes(o.SetupTokenHash), o.SetupExpiresAt, o.FailedLogins, o.LockedUntil, o.DisabledAt, o.CreatedAt, o.UpdatedAt)
}

func (r Rows) GetOperator(ctx context.Context, id string) (*engine.Operator, error) {
	return r.operator(ctx, `WHERE id = ?`, id)
}

func (r Rows) LockOperator(ctx context.Context, id string) (*engine.Operator, error) {
	return r.operator(ctx, `WHERE id = ?`+r.lockRow, id)
}

func (r Rows) GetOperatorByEmail(ctx context.Context, email string) (*engine.Operator, error) {
	return r.operator(ctx, `WHERE email = ?`, email)
}

func (r Rows) GetOperatorBySetupTokenHash(ctx context.Context, hash []byte) (*engine.Operator, error) {
	return r.operator(ctx, `WHERE setup_token_hash = ?`, hash)
}

func (r Rows) ListOperators(ctx context.Context, organizationID string) ([]*engine.Operator, error) {
	if organizationID == "" {
		return r.operators(ctx, `ORDER BY created_at, id`)
	}
	return r.operators(ctx, `WHERE organization_id = ? ORDER BY created_at, id`, organizationID)
}

func (r Rows) UpdateOperator(ctx context.Context, o *engine.Operator) error {
	return r.execOne(ctx, `UPDATE operators SET password_hash = ?, totp_secret = ?, last_totp_step = ?, setup_token_hash = ?,
		setup_expires_at = ?, failed_logins = ?, locked_until = ?, disabled_at = ?, updated_at = ? WHERE id = ?`,
		o.PasswordHash, nullBytes(o.TOTPSecret), o.LastTOTPStep, nullBytes(o.SetupTokenHash), o.SetupExpiresAt,
		o.FailedLogins, o.LockedUntil, o.DisabledAt, o.UpdatedAt, o.ID)
}

const sessionColumns = `id, token_hash, operator_id, created_at, last_seen_at, expires_at, revoked_at`

func (r Rows) CreateOperatorSession(ctx context.Context, s *engine.OperatorSession) error {
	return r.insert(ctx, "operator session "+s.ID, `INSERT INTO operator_sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.TokenHash, s.OperatorID, s.CreatedAt, s.LastSeenAt, s.ExpiresAt, s.RevokedAt)
}

func (r Rows) GetOperatorSessionByHash(ctx context.Context, hash []byte) (*engine.OperatorSession, error) {
	var out *engine.OperatorSession
	err := r.tx.QuerySQL(ctx, r.sql(`SELECT `+sessionColumns+` FROM operator_sessions WHERE token_hash = ?`), []any{hash}, func(scan func(dest ...any) error) error {
		var s engine.OperatorSession
		if err := scan(&s.ID, &s.TokenHash, &s.OperatorID, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt, &s.RevokedAt); err != nil {
			return err
		}
		out = &s
		return nil
	})
	if err == nil && out == nil {
		err = engine.ErrNotFound
	}
	return out, err
}

func (r Rows) UpdateOperatorSession(ctx context.Context, s *engine.OperatorSession) error {
	return r.execOne(ctx, `UPDATE operator_sessions SET last_seen_at = ?, revoked_at = ? WHERE id = ?`, s.LastSeenAt, s.RevokedAt, s.ID)
}

func (r Rows) RevokeOperatorSessions(ctx context.Context, operatorID string, now time.Time) error {
	_, err := r.tx.ExecSQL(ctx, r.sql(`UPDATE operator_sessions SET revoked_at = ? WHERE operator_id = ? AND revoked_at IS NULL`), now, operatorID)
	return err
}

const linkColumns = `id, organization_id, amount, note, token, deposit_id, deposits, paid_deposit_id, created_by, created_at, updated_at`

func (r Rows) links(ctx context.Context, where string, args ...any) ([]*engine.PaymentLink, error) {
	var out []*engine.PaymentLink
	err := r.tx.QuerySQL(ctx, r.sql(`SELECT `+linkColumns+` FROM payment_links `+where), args, func(scan func(dest ...any) error) error {
		var l engine.PaymentLink
		if err := scan(&l.ID, &l.OrganizationID, &l.Amount, &l.Note, &l.Token, &l.DepositID, &l.Deposits, &l.PaidDepositID, &l.CreatedBy, &l.CreatedAt, &l.UpdatedAt); err != nil {
			return err
		}
		out = append(out, &l)
		return nil
	})
	return out, err
}

func (r Rows) link(ctx context.Context, where string, args ...any) (*engine.PaymentLink, error) {
	ls, err := r.links(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, engine.ErrNotFound
	}
	return ls[0], nil
}

func (r Rows) CreatePaymentLink(ctx context.Context, l *engine.PaymentLink) error {
	return r.insert(ctx, "payment link "+l.ID, `INSERT INTO payment_links (`+linkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.OrganizationID, l.Amount, l.Note, l.Token, l.DepositID, l.Deposits, l.PaidDepositID, l.CreatedBy, l.CreatedAt, l.UpdatedAt)
}

func (r Rows) GetPaymentLink(ctx context.Context, organizationID, id string) (*engine.PaymentLink, error) {
	return r.link(ctx, `WHERE id = ? AND organization_id = ?`, id, organizationID)
}

func (r Rows) LockPaymentLink(ctx context.Context, organizationID, id string) (*engine.PaymentLink, error) {
	return r.link(ctx, `WHERE id = ? AND organization_id = ?`+r.lockRow, id, organizationID)
}

func (r Rows) GetPaymentLinkByToken(ctx context.Context, token string) (*engine.PaymentLink, error) {
	return r.link(ctx, `WHERE token = ?`, token)
}

func (r Rows) ListPaymentLinks(ctx context.Context, organizationID string, limit int) ([]*engine.PaymentLink, error) {
	if limit <= 0 {
		return nil, nil
	}
	return r.links(ctx, `WHERE organization_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, organizationID, limit)
}

func (r Rows) UpdatePaymentLink(ctx context.Context, l *engine.PaymentLink) error {
	return r.execOne(ctx, `UPDATE payment_links SET deposit_id = ?, deposits = ?, paid_deposit_id = ?, updated_at = ? WHERE id = ?`,
		l.DepositID, l.Deposits, l.PaidDepositID, l.UpdatedAt, l.ID)
}

// CountSince counts the rows of table ("deposits" or "withdrawals") of an
// organization (all if "") created at or after since, by status.
func (r Rows) CountSince(ctx context.Context, table, organizationID string, since time.Time) (map[string]int, error) {
	where, args := ` WHERE created_at >= ?`, []any{since}
	if organizationID != "" {
		where, args = ` WHERE organization_id = ? AND created_at >= ?`, []any{organizationID, since}
	}
	out := map[string]int{}
	err := r.tx.QuerySQL(ctx, r.sql(`SELECT status, COUNT(*) FROM `+table+where+` GROUP BY status`), args, func(scan func(dest ...any) error) error {
		var status string
		var n int
		if err := scan(&status, &n); err != nil {
			return err
		}
		out[status] = n
		return nil
	})
	return out, err
}

var _ engine.ConsoleTx = Rows{}
