package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/opcost"
	"github.com/payd-engine/payd/storage/internal/pagequery"
)

// TestDepositCreateIndexes lists exactly the indexes of deposits and
// which of them a signed H2H create writes (BENCHMARKS.md: index entries
// per create). A partial index is written when the created row meets its
// predicate, which Postgres evaluates on the row. An update that changes
// an indexed column (status, at every step of a deposit) is not HOT and
// writes every index whose predicate the new row meets again.
func TestDepositCreateIndexes(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	id := opcost.CreateDeposit(t, s)
	rows, err := s.pool.Query(ctx, `SELECT c.relname, coalesce(pg_get_expr(i.indpred, i.indrelid), '')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE i.indrelid = 'deposits'::regclass`)
	if err != nil {
		t.Fatal(err)
	}
	type def struct{ name, pred string }
	defs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (def, error) {
		var d def
		return d, r.Scan(&d.name, &d.pred)
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []opcost.Index
	for _, d := range defs {
		written := true
		if d.pred != "" {
			if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM deposits WHERE id = $1 AND (`+d.pred+`))`, id).Scan(&written); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, opcost.Index{Name: d.name, Written: written})
	}
	opcost.CheckIndexes(t, "deposits", got, map[string]bool{
		"deposits_pkey":                            true,
		"deposits_checkout_token_key":              true,
		"deposits_merchant_id_organization_id_key": true,
		"deposits_wallet_created":                  true,
		"deposits_expirable":                       true,
		"deposits_organization_created":            true,
		"deposits_organization_status":             true,
		"deposits_organization_method":             true,
		"deposits_organization_provider_tx":        false,
		"deposits_organization_phone":              true,
	})
}

// TestBalanceTransactionPagesUseIndex: every page of balance movements is
// read from balance_transactions_organization_account, all of them as one
// page of each account merged, never a scan of the history, whatever
// plan Postgres picks without statistics.
func TestBalanceTransactionPagesUseIndex(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	cursor := &engine.PageCursor{ID: "txn_1_available", CreatedAt: base}
	for name, p := range map[string]engine.PageParams{
		"all":         {OrganizationID: "org_1", Limit: 10},
		"all, after":  {OrganizationID: "org_1", Limit: 10, After: cursor},
		"all, before": {OrganizationID: "org_1", Limit: 10, Before: cursor},
		"one account": {OrganizationID: "org_1", Limit: 10, Account: engine.AccountHeld},
	} {
		q, args := pagequery.BalanceTransactions(dialect, p)
		err := s.runTx(ctx, readWrite, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `EXPLAIN `+q, args...)
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan := strings.Join(lines, "\n")
			if strings.Count(plan, "balance_transactions_organization_account") != strings.Count(plan, "on balance_transactions") ||
				strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "Bitmap") {
				t.Errorf("%s plan:\n%s", name, plan)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestWithdrawalCreateIndexes counts what a withdrawal create writes to
// each table it inserts into: its rows (heap tuples) and the entries of
// each index, read from pg_index and each partial index's predicate
// evaluated on the rows (BENCHMARKS.md: index entries per withdrawal
// create).
func TestWithdrawalCreateIndexes(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	withdrawal, journal := opcost.CreateWithdrawal(t, s)
	count := func(table, column, key, pred string) int {
		t.Helper()
		q := `SELECT count(*) FROM ` + table + ` WHERE ` + column + ` = $1`
		if pred != "" {
			q += ` AND (` + pred + `)`
		}
		var n int
		if err := s.pool.QueryRow(ctx, q, key).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	got := map[string]opcost.TableEntries{}
	for _, tb := range opcost.WithdrawalTables {
		key := withdrawal
		if tb.ByJournal {
			key = journal
		}
		rows, err := s.pool.Query(ctx, `SELECT c.relname, coalesce(pg_get_expr(i.indpred, i.indrelid), '')
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			WHERE i.indrelid = $1::regclass`, tb.Table)
		if err != nil {
			t.Fatal(err)
		}
		type def struct{ name, pred string }
		defs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (def, error) {
			var d def
			return d, r.Scan(&d.name, &d.pred)
		})
		if err != nil {
			t.Fatal(err)
		}
		e := opcost.TableEntries{Rows: count(tb.Table, tb.Column, key, ""), Indexes: map[string]int{}}
		for _, d := range defs {
			e.Indexes[d.name] = count(tb.Table, tb.Column, key, d.pred)
		}
		got[tb.Table] = e
	}
	opcost.CheckWithdrawalIndexes(t, got, map[string]opcost.TableEntries{
		"withdrawals": {Rows: 1, Indexes: map[string]int{
			"withdrawals_pkey": 1,
			"withdrawals_merchant_id_organization_id_key": 1,
			"withdrawals_due":                    1,
			"withdrawals_organization_created":   1,
			"withdrawals_organization_status":    1,
			"withdrawals_organization_method":    1,
			"withdrawals_organization_reference": 0,
		}},
		"events": {Rows: 1, Indexes: map[string]int{
			"events_pkey":                 1,
			"events_organization_created": 1,
			"events_resource_created":     1,
			"events_organization_type":    1,
		}},
		"journals": {Rows: 1, Indexes: map[string]int{
			"journals_pkey":                 1,
			"journals_organization_created": 1,
			// The key its entries and movements check (migration 0027).
			"journals_id_organization_id_key": 1,
		}},
		"ledger_entries": {Rows: 2, Indexes: map[string]int{
			"ledger_entries_pkey":    2,
			"ledger_entries_account": 2,
		}},
		"balance_transactions": {Rows: 2, Indexes: map[string]int{
			"balance_transactions_pkey":                 2,
			"balance_transactions_organization_account": 2,
		}},
	})
}

// TestLedgerRowsOfTheirJournalsOrganization: a ledger entry or a balance
// movement names its journal and its organization, and the key that
// checks the two at once refuses a row whose organization is not its
// journal's (another organization's journal, or a forged copy of the
// organization column), as the two keys it replaced did not.
func TestLedgerRowsOfTheirJournalsOrganization(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	_, journal := opcost.CreateWithdrawal(t, s)
	var org string
	if err := s.pool.QueryRow(ctx, `SELECT organization_id FROM journals WHERE id = $1`, journal).Scan(&org); err != nil {
		t.Fatal(err)
	}
	// Another organization, a copy of the first but for its ID.
	_, err := s.pool.Exec(ctx, `INSERT INTO organizations
		SELECT (jsonb_populate_record(o, jsonb_build_object('id', 'org_other'))).* FROM organizations o WHERE id = $1`, org)
	if err != nil {
		t.Fatal(err)
	}
	for name, insert := range map[string]string{
		"ledger entry": `INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
			VALUES ($1, $3, $2, 'available', 0)`,
		"balance movement": `INSERT INTO balance_transactions (id, organization_id, account, journal_id, kind, reference, amount_minor, balance_after_minor, created_at)
			VALUES ('txn_forged_' || $3::int, $2, 'available', $1, 'adjustment', '', 0, 0, now())`,
	} {
		if _, err := s.pool.Exec(ctx, insert, journal, "org_other", 7); err == nil || !strings.Contains(err.Error(), "23503") {
			t.Errorf("%s of another organization's journal: %v, want a foreign key violation", name, err)
		}
		if _, err := s.pool.Exec(ctx, insert, "jnl_nosuch", org, 8); err == nil || !strings.Contains(err.Error(), "23503") {
			t.Errorf("%s of no journal: %v, want a foreign key violation", name, err)
		}
		if _, err := s.pool.Exec(ctx, insert, journal, "org_nosuch", 9); err == nil || !strings.Contains(err.Error(), "23503") {
			t.Errorf("%s of no organization: %v, want a foreign key violation", name, err)
		}
	}
}
