package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/consolesql"
)

// Console gives the console's rows (operators, sessions, payment links,
// the compatible checkout's keys, invoices and IPNs) to consolesql, whose
// SQL both stores share; the console's searches of deposits and
// withdrawals are built there too, and scanned here as this store scans
// its lists.
func (t *tx) Console() engine.ConsoleTx { return t.consoleRows() }

func (t *tx) consoleRows() consolesql.Rows { return consolesql.In(t, t.lockRow()) }

func (t *tx) CountDepositsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error) {
	return t.consoleRows().CountSince(ctx, "deposits", organizationID, since)
}

func (t *tx) CountWithdrawalsSince(ctx context.Context, organizationID string, since time.Time) (map[string]int, error) {
	return t.consoleRows().CountSince(ctx, "withdrawals", organizationID, since)
}

func (t *tx) SearchDeposits(ctx context.Context, p engine.SearchDepositsParams) ([]*engine.Deposit, error) {
	q, args := consolesql.SearchDeposits(t.Dialect(), qualifiedDepositColumns, p)
	if q == "" {
		return nil, nil
	}
	return queryList(ctx, t, scanDeposit, q, args...)
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
	q, args := consolesql.SearchWithdrawals(t.Dialect(), withdrawalColumns, p)
	if q == "" {
		return nil, nil
	}
	return queryList(ctx, t, scanWithdrawal, q, args...)
}
