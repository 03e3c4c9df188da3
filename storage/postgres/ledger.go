package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/payd-engine/payd/engine"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/storage/internal/pagequery"
	"github.com/payd-engine/payd/storage/internal/schema"
)

// The ledger. Entry amounts are BIGINT poisha, as in SQLite: Postgres sums
// BIGINT into NUMERIC, exactly and without overflow.

const journalColumns = schema.JournalColumns

// CreateJournal inserts the journal, then in one statement all its
// entries (in order, from arrays) and the journal's totals added to the
// account_balances rows, in account order: a balance row is locked from
// then until the transaction ends, by one journal at a time. An entry
// amount with more than two decimal places is an error: the store does not
// round money. A balance past BIGINT fails the statement, never wraps.
// The same statement writes the journal's balance transactions with the
// balances the upsert returns: the values right after this journal, since
// the rows stay locked by it.
func (t *tx) CreateJournal(ctx context.Context, j *engine.Journal) error {
	positions := make([]int64, len(j.Entries))
	accounts := make([]string, len(j.Entries))
	minor := make([]int64, len(j.Entries))
	for i, e := range j.Entries {
		m, err := schema.MinorUnits(e.Amount)
		if err != nil {
			return fmt.Errorf("postgres: journal %s entry %d (%s): %w", j.ID, i, e.Account, err)
		}
		positions[i], accounts[i], minor[i] = int64(i), e.Account, m
	}
	totals := j.Totals()
	totalAccounts := make([]string, len(totals))
	totalMinor := make([]int64, len(totals))
	movementIDs := make([]string, len(totals))
	for i, e := range totals {
		movementIDs[i] = engine.BalanceTransactionID(j.ID, e.Account)
		m, err := schema.MinorUnits(e.Amount)
		if err != nil {
			return fmt.Errorf("postgres: journal %s total of %s: %w", j.ID, e.Account, err)
		}
		totalAccounts[i], totalMinor[i] = e.Account, m
	}
	err := t.insert(ctx, "journal "+j.ID, `INSERT INTO journals (`+journalColumns+`) VALUES (`+params(7)+`)`,
		j.ID, j.OrganizationID, j.Kind, j.Reference, j.Memo, j.Actor, j.CreatedAt)
	if err != nil || len(j.Entries) == 0 {
		return err
	}
	// The entries' insert runs even though nothing reads its CTE. WITH
	// ORDINALITY keeps the rows (and so the row locks) in account order.
	return t.execChecked(ctx, rowCount{}, `WITH entries AS (
			INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
			SELECT $1, e.position, $2, e.account, e.amount_minor
			FROM unnest($3::bigint[], $4::text[], $5::bigint[]) AS e (position, account, amount_minor)
		), balances AS (
			INSERT INTO account_balances (organization_id, account, balance_minor)
			SELECT $2, b.account, b.amount_minor
			FROM unnest($6::text[], $7::bigint[]) WITH ORDINALITY AS b (account, amount_minor, n)
			ORDER BY b.n
			ON CONFLICT (organization_id, account)
				DO UPDATE SET balance_minor = account_balances.balance_minor + EXCLUDED.balance_minor
			RETURNING account, balance_minor
		)
		INSERT INTO balance_transactions (`+pagequery.BalanceTransactionColumns+`)
		SELECT t.id, $2, b.account, $1, $9, $10, t.amount_minor, b.balance_minor, $11
		FROM balances b JOIN unnest($6::text[], $7::bigint[], $8::text[]) AS t (account, amount_minor, id)
			ON t.account = b.account
		WHERE b.account = ANY ($12::text[])`,
		j.ID, j.OrganizationID, positions, accounts, minor, totalAccounts, totalMinor,
		movementIDs, j.Kind, j.Reference, j.CreatedAt, engine.BalanceAccounts)
}

var _ engine.JournalsCreator = (*tx)(nil)

// CreateJournals writes the journals in two statements, neither of which
// it needs an answer from, so that in a Pipeline they go with the
// transaction's other writes in one round trip: their rows; then in one
// statement (from arrays) all their entries, the balance rows, each
// (organization, account) added its sum once, in that order, so that a
// batch locks each balance row once, in the order every transaction takes
// them, and their balance transactions, each balance after being the
// row's new value (RETURNING) less what the later journals of js add.
func (t *tx) CreateJournals(ctx context.Context, js []*engine.Journal) error {
	if len(js) == 0 {
		return nil
	}
	var ids, orgs, kinds, refs, memos, actors []string
	var created []time.Time
	var entryJournals, entryOrgs, entryAccounts []string
	var entryPositions, entryMinor []int64
	for _, j := range js {
		ids, orgs, kinds = append(ids, j.ID), append(orgs, j.OrganizationID), append(kinds, j.Kind)
		refs, memos, actors = append(refs, j.Reference), append(memos, j.Memo), append(actors, j.Actor)
		created = append(created, j.CreatedAt)
		for i, e := range j.Entries {
			m, err := schema.MinorUnits(e.Amount)
			if err != nil {
				return fmt.Errorf("postgres: journal %s entry %d (%s): %w", j.ID, i, e.Account, err)
			}
			entryJournals, entryOrgs, entryAccounts = append(entryJournals, j.ID), append(entryOrgs, j.OrganizationID), append(entryAccounts, e.Account)
			entryPositions, entryMinor = append(entryPositions, int64(i)), append(entryMinor, m)
		}
	}
	totals, err := schema.JournalTotals(js)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	// Each movement's balance after, relative to the row's final value:
	// the movements as if every row ended at zero.
	final := make(map[schema.AccountTotal]int64, len(totals))
	totalOrgs := make([]string, len(totals))
	totalAccounts := make([]string, len(totals))
	totalMinor := make([]int64, len(totals))
	for i, b := range totals {
		totalOrgs[i], totalAccounts[i], totalMinor[i] = b.OrganizationID, b.Account, b.Minor
		final[schema.AccountTotal{OrganizationID: b.OrganizationID, Account: b.Account}] = 0
	}
	movements, err := schema.BalanceMovements(js, final)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	var mIDs, mOrgs, mAccounts, mJournals, mKinds, mRefs []string
	var mMinor, mAfter []int64
	var mCreated []time.Time
	for _, m := range movements {
		mIDs, mOrgs, mAccounts = append(mIDs, m.ID), append(mOrgs, m.OrganizationID), append(mAccounts, m.Account)
		mJournals, mKinds, mRefs = append(mJournals, m.JournalID), append(mKinds, m.Kind), append(mRefs, m.Reference)
		mMinor, mAfter, mCreated = append(mMinor, m.Minor), append(mAfter, m.AfterMinor), append(mCreated, m.CreatedAt)
	}
	err = t.execChecked(ctx, rowCount{int64(len(js)), fmt.Errorf("%w: one of journals %s…", engine.ErrDuplicate, ids[0])}, `INSERT INTO journals (`+journalColumns+`)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
		ON CONFLICT DO NOTHING`,
		ids, orgs, kinds, refs, memos, actors, created)
	if err != nil || len(entryJournals) == 0 {
		return err
	}
	// The entries' insert runs even though nothing reads its CTE.
	return t.execChecked(ctx, rowCount{}, `WITH entries AS (
			INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[])
		), balances AS (
			INSERT INTO account_balances (organization_id, account, balance_minor)
			SELECT b.organization_id, b.account, b.amount_minor
			FROM unnest($6::text[], $7::text[], $8::bigint[]) WITH ORDINALITY AS b (organization_id, account, amount_minor, n)
			ORDER BY b.n
			ON CONFLICT (organization_id, account)
				DO UPDATE SET balance_minor = account_balances.balance_minor + EXCLUDED.balance_minor
			RETURNING organization_id, account, balance_minor
		)
		INSERT INTO balance_transactions (`+pagequery.BalanceTransactionColumns+`)
		SELECT m.id, m.organization_id, m.account, m.journal_id, m.kind, m.reference, m.amount_minor,
			b.balance_minor + m.after_minor, m.created_at
		FROM unnest($9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
			$15::bigint[], $16::bigint[], $17::timestamptz[])
			AS m (id, organization_id, account, journal_id, kind, reference, amount_minor, after_minor, created_at)
		JOIN balances b ON b.organization_id = m.organization_id AND b.account = m.account`,
		entryJournals, entryPositions, entryOrgs, entryAccounts, entryMinor, totalOrgs, totalAccounts, totalMinor,
		mIDs, mOrgs, mAccounts, mJournals, mKinds, mRefs, mMinor, mAfter, mCreated)
}

const (
	balancesQuery   = `SELECT account, balance_minor::numeric FROM account_balances WHERE organization_id = $1`
	sumEntriesQuery = `SELECT account, SUM(amount_minor) FROM ledger_entries WHERE organization_id = $1 GROUP BY account`
)

// AccountBalances reads the organization's balance rows: one per account,
// by primary key.
func (t *tx) AccountBalances(ctx context.Context, organizationID string) (map[string]decimal.Decimal, error) {
	return t.accountSums(ctx, balancesQuery, organizationID)
}

// SumEntries sums in SQL, over the covering ledger_entries_account index.
// Postgres sums BIGINT into NUMERIC, exactly and without overflow.
func (t *tx) SumEntries(ctx context.Context, organizationID string) (map[string]decimal.Decimal, error) {
	return t.accountSums(ctx, sumEntriesQuery, organizationID)
}

// accountSums runs a query of (account, NUMERIC poisha) rows.
func (t *tx) accountSums(ctx context.Context, query, organizationID string) (map[string]decimal.Decimal, error) {
	rows, err := t.tx.Query(ctx, query, organizationID)
	if err != nil {
		return nil, interpretError(err)
	}
	return scanAccountSums(rows)
}

// scanAccountSums reads (account, NUMERIC poisha) rows and closes them.
func scanAccountSums(rows pgx.Rows) (map[string]decimal.Decimal, error) {
	defer rows.Close()
	out := map[string]decimal.Decimal{}
	for rows.Next() {
		var account string
		var sum decimal.Decimal
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
			last.Entries = append(last.Entries, engine.Entry{Account: *account, Amount: schema.FromMinorUnits(*amount)})
		}
	}
	return out, interpretError(rows.Err())
}
