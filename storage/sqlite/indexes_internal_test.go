package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/internal/opcost"
	"github.com/payd-engine/payd/storage/internal/pagequery"
)

// TestDepositCreateIndexes lists exactly the indexes of deposits and
// which of them a signed H2H create writes (BENCHMARKS.md: index entries
// per create). A partial index is written when the created row meets its
// condition, which SQLite evaluates on the row.
func TestDepositCreateIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := opcost.CreateDeposit(t, s)
	rows, err := s.writer.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'index' AND tbl_name = 'deposits'`)
	if err != nil {
		t.Fatal(err)
	}
	type def struct{ name, sql string }
	var defs []def
	for rows.Next() {
		var d def
		if err := rows.Scan(&d.name, &d.sql); err != nil {
			t.Fatal(err)
		}
		defs = append(defs, d)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	// The table itself (a rowid B-tree) is written too, besides these.
	var got []opcost.Index
	for _, d := range defs {
		written := true
		if i := strings.Index(strings.ToUpper(d.sql), " WHERE "); i >= 0 {
			var n int
			if err := s.writer.QueryRowContext(ctx, `SELECT count(*) FROM deposits WHERE id = ? AND (`+d.sql[i+len(" WHERE "):]+`)`, id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			written = n == 1
		}
		got = append(got, opcost.Index{Name: d.name, Written: written})
	}
	opcost.CheckIndexes(t, "deposits", got, map[string]bool{
		"sqlite_autoindex_deposits_1":       true, // PRIMARY KEY (id)
		"sqlite_autoindex_deposits_2":       true, // UNIQUE checkout_token
		"sqlite_autoindex_deposits_3":       true, // UNIQUE (organization_id, merchant_id)
		"deposits_wallet_created":           true,
		"deposits_expirable":                true,
		"deposits_organization_created":     true,
		"deposits_organization_status":      true,
		"deposits_organization_method":      true,
		"deposits_organization_provider_tx": false,
		"deposits_organization_phone":       true,
	})
}

// TestBalanceTransactionPagesUseIndex: every page of balance movements is
// read from balance_transactions_organization_account, all of them as one
// page of each account merged, never a scan or a sort of the history.
func TestBalanceTransactionPagesUseIndex(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cursor := &engine.PageCursor{ID: "txn_1_available"}
	for name, p := range map[string]engine.PageParams{
		"all":           {OrganizationID: "org_1", Limit: 10},
		"all, after":    {OrganizationID: "org_1", Limit: 10, After: cursor},
		"all, before":   {OrganizationID: "org_1", Limit: 10, Before: cursor},
		"one account":   {OrganizationID: "org_1", Limit: 10, Account: engine.AccountHeld},
		"account, date": {OrganizationID: "org_1", Limit: 10, Account: engine.AccountHeld, After: cursor},
	} {
		q, args := pagequery.BalanceTransactions(dialect, p)
		plan := queryPlan(t, s.writer, q, args...)
		for _, line := range strings.Split(plan, "\n") {
			if strings.Contains(line, "balance_transactions") && !strings.Contains(line, "USING INDEX balance_transactions_organization_account") ||
				strings.Contains(line, "SCAN balance_transactions") {
				t.Errorf("%s: plan\n%s", name, plan)
				break
			}
		}
		if strings.Contains(plan, "TEMP B-TREE") && !strings.Contains(plan, "UNION ALL") {
			t.Errorf("%s: sorts:\n%s", name, plan)
		}
		t.Logf("%s:\n%s", name, plan)
	}
}

// TestWithdrawalCreateIndexes counts what a withdrawal create writes to
// each table it inserts into: its rows and the entries of each index,
// read from sqlite_master and each partial index's condition evaluated on
// the rows (BENCHMARKS.md: index entries per withdrawal create).
func TestWithdrawalCreateIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	withdrawal, journal := opcost.CreateWithdrawal(t, s)
	count := func(table, column, key, cond string) int {
		t.Helper()
		q := `SELECT count(*) FROM ` + table + ` WHERE ` + column + ` = ?`
		if cond != "" {
			q += ` AND (` + cond + `)`
		}
		var n int
		if err := s.writer.QueryRowContext(ctx, q, key).Scan(&n); err != nil {
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
		rows, err := s.writer.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'index' AND tbl_name = ?`, tb.Table)
		if err != nil {
			t.Fatal(err)
		}
		type def struct{ name, sql string }
		var defs []def
		for rows.Next() {
			var d def
			if err := rows.Scan(&d.name, &d.sql); err != nil {
				t.Fatal(err)
			}
			defs = append(defs, d)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		e := opcost.TableEntries{Rows: count(tb.Table, tb.Column, key, ""), Indexes: map[string]int{}}
		for _, d := range defs {
			cond := ""
			if i := strings.Index(strings.ToUpper(d.sql), " WHERE "); i >= 0 {
				cond = d.sql[i+len(" WHERE "):]
			}
			e.Indexes[d.name] = count(tb.Table, tb.Column, key, cond)
		}
		got[tb.Table] = e
	}
	opcost.CheckWithdrawalIndexes(t, got, map[string]opcost.TableEntries{
		"withdrawals": {Rows: 1, Indexes: map[string]int{
			"sqlite_autoindex_withdrawals_1":     1, // PRIMARY KEY (id)
			"sqlite_autoindex_withdrawals_2":     1, // UNIQUE (organization_id, merchant_id)
			"withdrawals_due":                    1,
			"withdrawals_organization_created":   1,
			"withdrawals_organization_status":    1,
			"withdrawals_organization_method":    1,
			"withdrawals_organization_reference": 0,
		}},
		"events": {Rows: 1, Indexes: map[string]int{
			"sqlite_autoindex_events_1":   1,
			"events_organization_created": 1,
			"events_resource_created":     1,
			"events_organization_type":    1,
		}},
		"journals": {Rows: 1, Indexes: map[string]int{
			"sqlite_autoindex_journals_1":   1,
			"journals_organization_created": 1,
		}},
		"ledger_entries": {Rows: 2, Indexes: map[string]int{
			"sqlite_autoindex_ledger_entries_1": 2,
			"ledger_entries_account":            2,
		}},
		"balance_transactions": {Rows: 2, Indexes: map[string]int{
			"sqlite_autoindex_balance_transactions_1":   2,
			"balance_transactions_organization_account": 2,
		}},
	})
}
