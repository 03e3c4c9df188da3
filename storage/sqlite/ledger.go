package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/storage/internal/pagequery"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// The ledger. Entry amounts are INTEGER poisha, so SQL sums them exactly.

const journalColumns = schema.JournalColumns

// CreateJournal inserts the journal, its entries in order, and adds the
// journal's totals to the account_balances rows, in account order. An
// entry amount with more than two decimal places is an error: the store
// does not round money. A balance past int64 poisha fails the statement
// (STRICT refuses the REAL that SQLite's overflowing + makes), never wraps.
func (t *tx) CreateJournal(ctx context.Context, j *engine.Journal) error {
	entryArgs := make([]any, 0, 5*len(j.Entries))
	for i, e := range j.Entries {
		m, err := schema.MinorUnits(e.Amount)
		if err != nil {
			return fmt.Errorf("sqlite: journal %s entry %d (%s): %w", j.ID, i, e.Account, err)
		}
		entryArgs = append(entryArgs, j.ID, i, j.OrganizationID, e.Account, m)
	}
	totals := j.Totals()
	balanceArgs := make([]any, 0, 3*len(totals))
	for _, e := range totals {
		m, err := schema.MinorUnits(e.Amount)
		if err != nil {
			return fmt.Errorf("sqlite: journal %s total of %s: %w", j.ID, e.Account, err)
		}
		balanceArgs = append(balanceArgs, j.OrganizationID, e.Account, m)
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO journals (`+journalColumns+`) VALUES (`+placeholders(7)+`)`,
		j.ID, j.OrganizationID, j.Kind, j.Reference, j.Memo, j.Actor, micros(j.CreatedAt))
	if err != nil {
		return interpretError(err)
	}
	if len(j.Entries) == 0 {
		return nil
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
		VALUES `+rows(len(j.Entries), 5), entryArgs...)
	if err != nil {
		return interpretError(err)
	}
	rs, err := t.tx.QueryContext(ctx, `INSERT INTO account_balances (organization_id, account, balance_minor)
		VALUES `+rows(len(totals), 3)+`
		ON CONFLICT (organization_id, account) DO UPDATE SET balance_minor = balance_minor + excluded.balance_minor
		RETURNING account, balance_minor`,
		balanceArgs...)
	if err != nil {
		return interpretError(err)
	}
	after := map[string]int64{}
	for rs.Next() {
		var account string
		var balance int64
		if err := rs.Scan(&account, &balance); err != nil {
			rs.Close()
			return interpretError(err)
		}
		after[account] = balance
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return interpretError(err)
	}
	return t.insertBalanceTransactions(ctx, j, totals, after)
}

// insertBalanceTransactions writes the journal's movements on the balance
// accounts, each with the balance the upsert returned: the balance right
// after this journal, since the write transaction is exclusive.
func (t *tx) insertBalanceTransactions(ctx context.Context, j *engine.Journal, totals []engine.Entry, after map[string]int64) error {
	var args []any
	n := 0
	for _, e := range totals {
		if !engine.IsBalanceAccount(e.Account) {
			continue
		}
		m, _ := schema.MinorUnits(e.Amount) // checked above
		args = append(args, engine.BalanceTransactionID(j.ID, e.Account), j.OrganizationID, e.Account, j.ID,
			j.Kind, j.Reference, m, after[e.Account], micros(j.CreatedAt))
		n++
	}
	if n == 0 {
		return nil
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO balance_transactions (`+pagequery.BalanceTransactionColumns+`)
		VALUES `+rows(n, 9), args...)
	return interpretError(err)
}

var _ engine.JournalsCreator = (*tx)(nil)

// journalsPerStatement bounds the rows of CreateJournals' statements, far
// below SQLite's limit of bound parameters (32,766).
const journalsPerStatement = 256

// CreateJournals writes the journals in four statements per
// journalsPerStatement: their rows, their entries, the balance rows (each
// (organization, account) added its sum once, in that order), and their
// balance transactions, whose balances after follow from what the balance
// rows' upsert returns.
func (t *tx) CreateJournals(ctx context.Context, js []*engine.Journal) error {
	for len(js) > journalsPerStatement {
		if err := t.CreateJournals(ctx, js[:journalsPerStatement]); err != nil {
			return err
		}
		js = js[journalsPerStatement:]
	}
	if len(js) == 0 {
		return nil
	}
	journalArgs := make([]any, 0, 7*len(js))
	var entryArgs []any
	for _, j := range js {
		journalArgs = append(journalArgs, j.ID, j.OrganizationID, j.Kind, j.Reference, j.Memo, j.Actor, micros(j.CreatedAt))
		for i, e := range j.Entries {
			m, err := schema.MinorUnits(e.Amount)
			if err != nil {
				return fmt.Errorf("sqlite: journal %s entry %d (%s): %w", j.ID, i, e.Account, err)
			}
			entryArgs = append(entryArgs, j.ID, i, j.OrganizationID, e.Account, m)
		}
	}
	totals, err := schema.JournalTotals(js)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO journals (`+journalColumns+`) VALUES `+rows(len(js), 7), journalArgs...)
	if err != nil {
		return interpretError(err)
	}
	if len(entryArgs) == 0 {
		return nil
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
		VALUES `+rows(len(entryArgs)/5, 5), entryArgs...)
	if err != nil {
		return interpretError(err)
	}
	balanceArgs := make([]any, 0, 3*len(totals))
	for _, b := range totals {
		balanceArgs = append(balanceArgs, b.OrganizationID, b.Account, b.Minor)
	}
	rs, err := t.tx.QueryContext(ctx, `INSERT INTO account_balances (organization_id, account, balance_minor)
		VALUES `+rows(len(totals), 3)+`
		ON CONFLICT (organization_id, account) DO UPDATE SET balance_minor = balance_minor + excluded.balance_minor
		RETURNING organization_id, account, balance_minor`,
		balanceArgs...)
	if err != nil {
		return interpretError(err)
	}
	after := map[schema.AccountTotal]int64{}
	for rs.Next() {
		var k schema.AccountTotal
		var balance int64
		if err := rs.Scan(&k.OrganizationID, &k.Account, &balance); err != nil {
			rs.Close()
			return interpretError(err)
		}
		after[k] = balance
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return interpretError(err)
	}
	movements, err := schema.BalanceMovements(js, after)
	if err != nil || len(movements) == 0 {
		return err
	}
	args := make([]any, 0, 9*len(movements))
	for _, m := range movements {
		args = append(args, m.ID, m.OrganizationID, m.Account, m.JournalID, m.Kind, m.Reference, m.Minor, m.AfterMinor, micros(m.CreatedAt))
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO balance_transactions (`+pagequery.BalanceTransactionColumns+`)
		VALUES `+rows(len(movements), 9), args...)
	return interpretError(err)
}

// rows is n rows of cols placeholders each, for a multi-row VALUES.
func rows(n, cols int) string {
	row := "(" + placeholders(cols) + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

const (
	balancesQuery   = `SELECT account, balance_minor FROM account_balances WHERE organization_id = ?`
	sumEntriesQuery = `SELECT account, SUM(amount_minor) FROM ledger_entries WHERE organization_id = ? GROUP BY account`
)

// AccountBalances reads the organization's balance rows: one per account,
// by primary key.
func (t *tx) AccountBalances(ctx context.Context, organizationID string) (map[string]decimal.Decimal, error) {
	return t.accountSums(ctx, balancesQuery, organizationID)
}

// SumEntries sums in SQL, over the covering (organization_id, account,
// amount_minor) index. SQLite's SUM of integers is exact and fails rather
// than overflow.
func (t *tx) SumEntries(ctx context.Context, organizationID string) (map[string]decimal.Decimal, error) {
	return t.accountSums(ctx, sumEntriesQuery, organizationID)
}

// accountSums runs a query of (account, poisha) rows.
func (t *tx) accountSums(ctx context.Context, query, organizationID string) (map[string]decimal.Decimal, error) {
	rows, err := t.tx.QueryContext(ctx, query, organizationID)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	out := map[string]decimal.Decimal{}
	for rows.Next() {
		var account string
		var sum int64
		if err := rows.Scan(&account, &sum); err != nil {
			return nil, err
		}
		out[account] = schema.FromMinorUnits(sum)
	}
	return out, interpretError(rows.Err())
}

// ListJournals reads journals and entries in one ordered join, grouping the
// consecutive rows of each journal.
func (t *tx) ListJournals(ctx context.Context, organizationID string) ([]*engine.Journal, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT j.id, j.organization_id, j.kind, j.reference, j.memo, j.actor, j.created_at,
			e.account, e.amount_minor
		FROM journals j LEFT JOIN ledger_entries e ON e.journal_id = j.id
		WHERE j.organization_id = ?
		ORDER BY j.created_at, j.id, e.position`, organizationID)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []*engine.Journal
	for rows.Next() {
		var j engine.Journal
		var account sql.NullString
		var amount sql.NullInt64
		err := rows.Scan(&j.ID, &j.OrganizationID, &j.Kind, &j.Reference, &j.Memo, &j.Actor, timeCol{&j.CreatedAt},
			&account, &amount)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != j.ID {
			out = append(out, &j)
		}
		if account.Valid { // NULL: a journal without entries
			last := out[len(out)-1]
			last.Entries = append(last.Entries, engine.Entry{Account: account.String, Amount: schema.FromMinorUnits(amount.Int64)})
		}
	}
	return out, interpretError(rows.Err())
}
