package consolesql

import (
	"strings"

	"github.com/payd-engine/payd/engine"
)

// The console's searches as SQL for both stores: each store runs the query
// and scans the rows as its own lists do. Placeholders are numbered for
// Postgres; time arguments are time.Time, which each store encodes as its
// schema does.

// SearchDeposits returns the query of p, selecting columns (qualified with
// "deposits."), or "" when nothing can match.
func SearchDeposits(dialect, columns string, p engine.SearchDepositsParams) (string, []any) {
	if p.Limit <= 0 {
		return "", nil
	}
	var w where
	from := `deposits`
	if p.TransactionID != "" {
		if len(p.Channels) == 0 {
			return "", nil
		}
		// Driven by attempts' unique (channel, transaction_id,
		// organization_id), whose IN list of channels finds the few
		// deposits the ID was submitted to, whatever the size of the
		// history. SQLite's CROSS JOIN keeps this order; Postgres's
		// planner finds it.
		join := ` JOIN `
		if dialect == "sqlite" {
			join = ` CROSS JOIN `
		}
		from = `attempts` + join + `deposits ON deposits.id = attempts.deposit_id`
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
		w.add("deposits.created_at >= ?", p.From)
	}
	if !p.To.IsZero() {
		w.add("deposits.created_at < ?", p.To)
	}
	q := `SELECT ` + columns + ` FROM ` + from + w.String() + ` ORDER BY deposits.created_at DESC, deposits.id DESC LIMIT ?`
	return placeholders(dialect, q), append(w.args, p.Limit)
}

// SearchWithdrawals returns the query of p, selecting columns, or "" when
// nothing can match.
func SearchWithdrawals(dialect, columns string, p engine.SearchWithdrawalsParams) (string, []any) {
	if p.Limit <= 0 {
		return "", nil
	}
	var w where
	w.eq("organization_id", p.OrganizationID)
	w.eq("merchant_id", p.MerchantID)
	w.eq("status", p.Status)
	q := `SELECT ` + columns + ` FROM withdrawals` + w.String() + ` ORDER BY created_at DESC, id DESC LIMIT ?`
	return placeholders(dialect, q), append(w.args, p.Limit)
}

// where builds the conditions of a search.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) eq(column, value string) {
	if value != "" {
		w.add(column+" = ?", value)
	}
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}
