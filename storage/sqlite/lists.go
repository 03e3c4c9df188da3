package sqlite

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/pagequery"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// The lists: keyset pages over the indexes of migration 0012,
// each pinned by INDEXED BY, so that a page never falls back to a scan
// whatever the planner guesses without statistics.

var dialect = pagequery.Dialect{
	Param: func(int) string { return "?" },
	Time:  func(t time.Time) any { return micros(t) },
	Hint:  func(index string) string { return "INDEXED BY " + index },
}

func (t *tx) ListDepositsPage(ctx context.Context, p engine.PageParams) ([]*engine.Deposit, error) {
	q, args := pagequery.Deposits(dialect, p)
	return queryList(ctx, t, scanDeposit, q, args...)
}

func (t *tx) ListWithdrawalsPage(ctx context.Context, p engine.PageParams) ([]*engine.Withdrawal, error) {
	q, args := pagequery.Withdrawals(dialect, p)
	return queryList(ctx, t, scanWithdrawal, q, args...)
}

func (t *tx) ListEventsPage(ctx context.Context, p engine.PageParams) ([]*engine.Event, error) {
	q, args := pagequery.Events(dialect, p)
	return queryList(ctx, t, scanEvent, q, args...)
}

func (t *tx) ListBalanceTransactions(ctx context.Context, p engine.PageParams) ([]*engine.BalanceTransaction, error) {
	q, args := pagequery.BalanceTransactions(dialect, p)
	return queryList(ctx, t, scanBalanceTransaction, q, args...)
}

func (t *tx) GetBalanceTransaction(ctx context.Context, organizationID, id string) (*engine.BalanceTransaction, error) {
	return scanBalanceTransaction(t.tx.QueryRowContext(ctx, `SELECT `+pagequery.BalanceTransactionColumns+`
		FROM balance_transactions WHERE id = ? AND organization_id = ?`, id, organizationID))
}

func scanBalanceTransaction(row scanner) (*engine.BalanceTransaction, error) {
	var b engine.BalanceTransaction
	var amount, after int64
	err := row.Scan(&b.ID, &b.OrganizationID, &b.Account, &b.JournalID, &b.Kind, &b.Reference,
		&amount, &after, timeCol{&b.CreatedAt})
	if err != nil {
		return nil, interpretError(err)
	}
	b.Amount, b.BalanceAfter = schema.FromMinorUnits(amount), schema.FromMinorUnits(after)
	return &b, nil
}
