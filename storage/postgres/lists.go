package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/pagequery"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// The lists: keyset pages over the indexes of migration 0012.
// The planner chooses the index from its statistics; each filter's index
// keeps (created_at, id) order after its equality columns.

var dialect = pagequery.Dialect{
	Param: func(n int) string { return "$" + strconv.Itoa(n) },
	Time:  func(t time.Time) any { return t },
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
	return scanBalanceTransaction(t.tx.QueryRow(ctx, getBalanceTransactionQuery, id, organizationID))
}

var getBalanceTransactionQuery = `SELECT ` + pagequery.BalanceTransactionColumns + `
	FROM balance_transactions WHERE id = $1 AND ` + sameOrganization + `$2`

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
