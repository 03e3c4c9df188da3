package postgres

import (
	"context"
	"fmt"

	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"
)

// The ledger. Entry amounts are BIGINT poisha, as in SQLite: Postgres sums
// BIGINT into NUMERIC, exactly and without overflow.

const journalColumns = `id, organization_id, kind, reference, memo, actor, created_at`

// CreateJournal inserts the journal, then all its entries in one statement
// (in order, from arrays). An entry amount with more than two decimal
// places is an error: the store does not round money.
func (t *tx) CreateJournal(ctx context.Context, j *engine.Journal) error {
	positions := make([]int64, len(j.Entries))
	accounts := make([]string, len(j.Entries))
	minor := make([]int64, len(j.Entries))
	for i, e := range j.Entries {
		m, err := minorUnits(e.Amount)
		if err != nil {
			return fmt.Errorf("postgres: journal %s entry %d (%s): %w", j.ID, i, e.Account, err)
		}
		positions[i], accounts[i], minor[i] = int64(i), e.Account, m
	}
	err := t.insert(ctx, "journal "+j.ID, `INSERT INTO journals (`+journalColumns+`) VALUES (`+params(7)+`)`,
		j.ID, j.OrganizationID, j.Kind, j.Reference, j.Memo, j.Actor, j.CreatedAt)
	if err != nil || len(j.Entries) == 0 {
		return err
	}
	_, err = t.tx.Exec(ctx, `INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
		SELECT $1, e.position, $2, e.account, e.amount_minor
		FROM unnest($3::bigint[], $4::text[], $5::bigint[]) AS e (position, account, amount_minor)`,
		j.ID, j.OrganizationID, positions, accounts, minor)
	return interpretError(err)
}

const balancesQuery = `SELECT account, SUM(amount_minor) FROM ledger_entries
	WHERE organization_id = $1 GROUP BY account`

// AccountBalances sums in SQL, over the covering ledger_entries_account
// index.
func (t *tx) AccountBalances(ctx context.Context, organizationID string) (map[string]decimal.Decimal, error) {
	rows, err := t.tx.Query(ctx, balancesQuery, organizationID)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	out := map[string]decimal.Decimal{}
	for rows.Next() {
		var account string
		var sum decimal.Decimal // SUM(bigint) is NUMERIC
		if err := rows.Scan(&account, &sum); err != nil {
			return nil, err
		}
		// As fromMinorUnits builds it: the poisha, exponent -2.
		out[account] = decimal.NewFromBigInt(sum.BigInt(), -2)
	}
	return out, interpretError(rows.Err())
}

// ListJournals reads journals and entries in one ordered join, grouping the
// consecutive rows of each journal.
func (t *tx) ListJournals(ctx context.Context, organizationID string) ([]*engine.Journal, error) {
	rows, err := t.tx.Query(ctx, `SELECT j.id, j.organization_id, j.kind, j.reference, j.memo, j.actor, j.created_at,
			e.account, e.amount_minor
		FROM journals j LEFT JOIN ledger_entries e ON e.journal_id = j.id
		WHERE j.organization_id = $1
		ORDER BY j.created_at, j.id, e.position`, organizationID)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []*engine.Journal
	for rows.Next() {
		var j engine.Journal
		var account *string
		var amount *int64
		err := rows.Scan(&j.ID, &j.OrganizationID, &j.Kind, &j.Reference, &j.Memo, &j.Actor, timeCol{&j.CreatedAt},
			&account, &amount)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != j.ID {
			out = append(out, &j)
		}
		if account != nil { // NULL: a journal without entries
			last := out[len(out)-1]
			last.Entries = append(last.Entries, engine.Entry{Account: *account, Amount: fromMinorUnits(*amount)})
		}
	}
	return out, interpretError(rows.Err())
}
