package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/consolesql"
)

// The operator console's rows (migration 0016): operators, their sessions
// and payment links are consolesql's, shared by both stores; the console's
// searches of deposits and withdrawals are here.

// console is the console's rows of this transaction (no row lock: the writer is alone).
func (t *tx) console() consolesql.Rows { return consolesql.In(t, "") }

func (t *tx) CreateOperator(ctx context.Context, o *engine.Operator) error {
	return t.console().CreateOperator(ctx, o)
}

func (t *tx) GetOperator(ctx context.Context, id string) (*engine.Operator, error) {
	return t.console().GetOperator(ctx, id)
}

func (t *tx) LockOperator(ctx context.Context, id string) (*engine.Operator, error) {
	return t.console().LockOperator(ctx, id)
}

func (t *tx) GetOperatorByEmail(ctx context.Context, email string) (*engine.Operator, error) {
	return t.console().GetOperatorByEmail(ctx, email)
}

func (t *tx) GetOperatorBySetupTokenHash(ctx context.Context, hash []byte) (*engine.Operator, error) {
	return t.console().GetOperatorBySetupTokenHash(ctx, hash)
}

func (t *tx) ListOperators(ctx context.Context, organizationID string) ([]*engine.Operator, error) {
	return t.console().ListOperators(ctx, organizationID)
}

func (t *tx) UpdateOperator(ctx context.Context, o *engine.Operator) error {
	return t.console().UpdateOperator(ctx, o)
}

func (t *tx) CreateOperatorSession(ctx context.Context, s *engine.OperatorSession) error {
	return t.console().CreateOperatorSession(ctx, s)
}

func (t *tx) GetOperatorSessionByHash(ctx context.Context, hash []byte) (*engine.OperatorSession, error) {
	return t.console().GetOperatorSessionByHash(ctx, hash)
}

func (t *tx) UpdateOperatorSession(ctx context.Context, s *engine.OperatorSession) error {
	return t.console().UpdateOperatorSession(ctx, s)
}

func (t *tx) RevokeOperatorSessions(ctx context.Context, operatorID string, now time.Time) error {
	return t.console().RevokeOperatorSessions(ctx, operatorID, now)
}

func (t *tx) CreatePaymentLink(ctx context.Context, l *engine.PaymentLink) error {
	return t.console().CreatePaymentLink(ctx, l)
}

func (t *tx) GetPaymentLink(ctx context.Context, organizationID, id string) (*engine.PaymentLink, error) {
	return t.console().GetPaymentLink(ctx, organizationID, id)
}

func (t *tx) LockPaymentLink(ctx context.Context, organizationID, id string) (*engine.PaymentLink, error) {
	return t.console().LockPaymentLink(ctx, organizationID, id)
}

func (t *tx) GetPaymentLinkByToken(ctx context.Context, token string) (*engine.PaymentLink, error) {
	return t.console().GetPaymentLinkByToken(ctx, token)
}

func (t *tx) ListPaymentLinks(ctx context.Context, organizationID string, limit int) ([]*engine.PaymentLink, error) {
	return t.console().ListPaymentLinks(ctx, organizationID, limit)
}

func (t *tx) UpdatePaymentLink(ctx context.Context, l *engine.PaymentLink) error {
	return t.console().UpdatePaymentLink(ctx, l)
}

func (t *tx) CountDepositsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error) {
	return t.console().CountSince(ctx, "deposits", organizationID, since)
}

func (t *tx) CountWithdrawalsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error) {
	return t.console().CountSince(ctx, "withdrawals", organizationID, since)
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
		// Driven by attempts' unique (channel, transaction_id,
		// organization_id), whose IN list of channels finds the few
		// deposits the ID was submitted to, whatever the size of the
		// history (CROSS JOIN: SQLite keeps this order).
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
	if p.PayerPhone != "" {
		// deposits_organization_phone holds only deposits with a phone.
		w.add("deposits.payer_phone = ? AND deposits.payer_phone <> ''", p.PayerPhone)
	}
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
