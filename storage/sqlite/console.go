package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// The operator console's rows (migration 0016): operators, their sessions,
// payment links, and the console's searches of deposits and withdrawals.

const operatorColumns = `id, email, role, organization_id, password_hash, totp_secret, last_totp_step,
	setup_token_hash, setup_expires_at, failed_logins, locked_until, disabled_at, created_at, updated_at`

func (t *tx) queryOperators(ctx context.Context, where string, args ...any) ([]*engine.Operator, error) {
	var out []*engine.Operator
	err := t.QuerySQL(ctx, (`SELECT ` + operatorColumns + ` FROM operators ` + where), args, func(scan func(dest ...any) error) error {
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

func (t *tx) oneOperator(ctx context.Context, where string, args ...any) (*engine.Operator, error) {
	ops, err := t.queryOperators(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, engine.ErrNotFound
	}
	return ops[0], nil
}

func (t *tx) CreateOperator(ctx context.Context, o *engine.Operator) error {
	n, err := t.ExecSQL(ctx, (`INSERT INTO operators (` + operatorColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		o.ID, o.Email, o.Role, o.OrganizationID, o.PasswordHash, nullBytes(o.TOTPSecret), o.LastTOTPStep,
		nullBytes(o.SetupTokenHash), o.SetupExpiresAt, o.FailedLogins, o.LockedUntil, o.DisabledAt, o.CreatedAt, o.UpdatedAt)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: operator %s", engine.ErrDuplicate, o.Email)
	}
	return err
}

func (t *tx) GetOperator(ctx context.Context, id string) (*engine.Operator, error) {
	return t.oneOperator(ctx, `WHERE id = ?`, id)
}

func (t *tx) LockOperator(ctx context.Context, id string) (*engine.Operator, error) {
	return t.oneOperator(ctx, `WHERE id = ?`, id)
}

func (t *tx) GetOperatorByEmail(ctx context.Context, email string) (*engine.Operator, error) {
	return t.oneOperator(ctx, `WHERE email = ?`, email)
}

func (t *tx) GetOperatorBySetupTokenHash(ctx context.Context, hash []byte) (*engine.Operator, error) {
	return t.oneOperator(ctx, `WHERE setup_token_hash = ?`, hash)
}

func (t *tx) ListOperators(ctx context.Context, organizationID string) ([]*engine.Operator, error) {
	if organizationID == "" {
		return t.queryOperators(ctx, `ORDER BY created_at, id`)
	}
	return t.queryOperators(ctx, `WHERE organization_id = ? ORDER BY created_at, id`, organizationID)
}

func (t *tx) UpdateOperator(ctx context.Context, o *engine.Operator) error {
	return t.execOne(ctx, (`UPDATE operators SET password_hash = ?, totp_secret = ?, last_totp_step = ?, setup_token_hash = ?,
		setup_expires_at = ?, failed_logins = ?, locked_until = ?, disabled_at = ?, updated_at = ? WHERE id = ?`),
		o.PasswordHash, nullBytes(o.TOTPSecret), o.LastTOTPStep, nullBytes(o.SetupTokenHash), o.SetupExpiresAt,
		o.FailedLogins, o.LockedUntil, o.DisabledAt, o.UpdatedAt, o.ID)
}

// execOne runs a statement through ExecSQL that must change one row.
func (t *tx) execOne(ctx context.Context, query string, args ...any) error {
	n, err := t.ExecSQL(ctx, query, args...)
	if err == nil && n == 0 {
		err = engine.ErrNotFound
	}
	return err
}

const sessionColumns = `id, token_hash, operator_id, created_at, last_seen_at, expires_at, revoked_at`

func (t *tx) CreateOperatorSession(ctx context.Context, s *engine.OperatorSession) error {
	n, err := t.ExecSQL(ctx, (`INSERT INTO operator_sessions (` + sessionColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?)`),
		s.ID, s.TokenHash, s.OperatorID, s.CreatedAt, s.LastSeenAt, s.ExpiresAt, s.RevokedAt)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: operator session %s", engine.ErrDuplicate, s.ID)
	}
	return err
}

func (t *tx) GetOperatorSessionByHash(ctx context.Context, hash []byte) (*engine.OperatorSession, error) {
	var out *engine.OperatorSession
	err := t.QuerySQL(ctx, (`SELECT ` + sessionColumns + ` FROM operator_sessions WHERE token_hash = ?`), []any{hash}, func(scan func(dest ...any) error) error {
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

func (t *tx) UpdateOperatorSession(ctx context.Context, s *engine.OperatorSession) error {
	return t.execOne(ctx, (`UPDATE operator_sessions SET last_seen_at = ?, revoked_at = ? WHERE id = ?`), s.LastSeenAt, s.RevokedAt, s.ID)
}

func (t *tx) RevokeOperatorSessions(ctx context.Context, operatorID string, now time.Time) error {
	_, err := t.ExecSQL(ctx, (`UPDATE operator_sessions SET revoked_at = ? WHERE operator_id = ? AND revoked_at IS NULL`), now, operatorID)
	return err
}

const linkColumns = `id, organization_id, amount, note, token, deposit_id, deposits, created_by, created_at, updated_at`

func (t *tx) queryLinks(ctx context.Context, where string, args ...any) ([]*engine.PaymentLink, error) {
	var out []*engine.PaymentLink
	err := t.QuerySQL(ctx, (`SELECT ` + linkColumns + ` FROM payment_links ` + where), args, func(scan func(dest ...any) error) error {
		var l engine.PaymentLink
		if err := scan(&l.ID, &l.OrganizationID, &l.Amount, &l.Note, &l.Token, &l.DepositID, &l.Deposits, &l.CreatedBy, &l.CreatedAt, &l.UpdatedAt); err != nil {
			return err
		}
		out = append(out, &l)
		return nil
	})
	return out, err
}

func (t *tx) oneLink(ctx context.Context, where string, args ...any) (*engine.PaymentLink, error) {
	ls, err := t.queryLinks(ctx, where, args...)
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, engine.ErrNotFound
	}
	return ls[0], nil
}

func (t *tx) CreatePaymentLink(ctx context.Context, l *engine.PaymentLink) error {
	n, err := t.ExecSQL(ctx, (`INSERT INTO payment_links (` + linkColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		l.ID, l.OrganizationID, l.Amount, l.Note, l.Token, l.DepositID, l.Deposits, l.CreatedBy, l.CreatedAt, l.UpdatedAt)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: payment link %s", engine.ErrDuplicate, l.ID)
	}
	return err
}

func (t *tx) GetPaymentLink(ctx context.Context, organizationID, id string) (*engine.PaymentLink, error) {
	return t.oneLink(ctx, `WHERE id = ? AND organization_id = ?`, id, organizationID)
}

func (t *tx) GetPaymentLinkByToken(ctx context.Context, token string) (*engine.PaymentLink, error) {
	return t.oneLink(ctx, `WHERE token = ?`, token)
}

func (t *tx) ListPaymentLinks(ctx context.Context, organizationID string, limit int) ([]*engine.PaymentLink, error) {
	if limit <= 0 {
		return nil, nil
	}
	return t.queryLinks(ctx, `WHERE organization_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, organizationID, limit)
}

func (t *tx) UpdatePaymentLink(ctx context.Context, l *engine.PaymentLink) error {
	return t.execOne(ctx, (`UPDATE payment_links SET deposit_id = ?, deposits = ?, updated_at = ? WHERE id = ?`), l.DepositID, l.Deposits, l.UpdatedAt, l.ID)
}

// searchWhere builds the conditions of a console search, "?" placeholders.
type searchWhere struct {
	conds []string
	args  []any
}

func (w *searchWhere) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *searchWhere) eq(column, value string) {
	if value != "" {
		w.add(column+" = ?", value)
	}
}

func (w *searchWhere) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

func (t *tx) SearchDeposits(ctx context.Context, p engine.SearchDepositsParams) ([]*engine.Deposit, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	var w searchWhere
	from := `deposits`
	if p.TransactionID != "" {
		if len(p.Channels) == 0 {
			return nil, nil
		}
		// Driven by attempts' unique (channel, transaction_id), whose IN
		// list of channels finds the few deposits the ID was submitted
		// to, whatever the size of the history (CROSS JOIN: SQLite keeps this order).
		from = `attempts CROSS JOIN deposits ON deposits.id = attempts.deposit_id`
		in := strings.TrimSuffix(strings.Repeat("?, ", len(p.Channels)), ", ")
		args := make([]any, 0, len(p.Channels)+1)
		for _, c := range p.Channels {
			args = append(args, c)
		}
		w.add(`attempts.channel IN (`+in+`) AND attempts.transaction_id = ?`, append(args, p.TransactionID)...)
	}
	w.eq("deposits.organization_id", p.OrganizationID)
	w.eq("deposits.merchant_id", p.MerchantID)
	w.eq("deposits.payer_phone", p.PayerPhone)
	w.eq("deposits.status", p.Status)
	if !p.From.IsZero() {
		w.add("deposits.created_at >= ?", micros(p.From))
	}
	if !p.To.IsZero() {
		w.add("deposits.created_at < ?", micros(p.To))
	}
	q := `SELECT ` + qualifiedDepositColumns + ` FROM ` + from + w.String() + ` ORDER BY deposits.created_at DESC, deposits.id DESC LIMIT ?`
	return queryList(ctx, t, scanDeposit, (q), append(w.args, p.Limit)...)
}

// qualifiedDepositColumns are depositColumns named with their table, for
// the join with attempts.
var qualifiedDepositColumns = func() string {
	cols := strings.Split(depositColumns, ",")
	for i, c := range cols {
		cols[i] = "deposits." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

func (t *tx) SearchWithdrawals(ctx context.Context, p engine.SearchWithdrawalsParams) ([]*engine.Withdrawal, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	var w searchWhere
	w.eq("organization_id", p.OrganizationID)
	w.eq("merchant_id", p.MerchantID)
	w.eq("status", p.Status)
	q := `SELECT ` + withdrawalColumns + ` FROM withdrawals` + w.String() + ` ORDER BY created_at DESC, id DESC LIMIT ?`
	return queryList(ctx, t, scanWithdrawal, (q), append(w.args, p.Limit)...)
}

func (t *tx) countSince(ctx context.Context, table, organizationID string, since time.Time) (map[string]int, error) {
	var w searchWhere
	w.eq("organization_id", organizationID)
	w.add("created_at >= ?", since)
	out := map[string]int{}
	err := t.QuerySQL(ctx, (`SELECT status, COUNT(*) FROM ` + table + w.String() + ` GROUP BY status`), w.args, func(scan func(dest ...any) error) error {
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

func (t *tx) CountDepositsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error) {
	return t.countSince(ctx, "deposits", organizationID, since)
}

func (t *tx) CountWithdrawalsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error) {
	return t.countSince(ctx, "withdrawals", organizationID, since)
}
