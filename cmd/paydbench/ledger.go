package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The ledger-growth scenario: -seed-journals N writes N deposit credits
// (two entries each) into the bench organization's ledger in bulk SQL,
// then withdraw-create and balance-get are timed over it. Run it at two
// sizes (5000 and 500000 journals: 10 thousand and 1 million entries) and
// compare the p50s: balances must cost the same at any ledger size.

// seedJournalBatch is how many journals one transaction of the seed writes.
const seedJournalBatch = 50_000

// seedJournals inserts n balanced journals of the organization straight in
// SQL, batch by batch. Where the schema keeps balance rows, each batch adds
// its sums to them in its own transaction, so the ledger stays consistent
// (payd admin ledger verify passes after a seed).
func seedJournals(ctx context.Context, dsn, orgID string, n int) error {
	run := fmt.Sprint(time.Now().UnixNano())
	if isPostgres(dsn) {
		return seedJournalsPostgres(ctx, dsn, orgID, run, n)
	}
	return seedJournalsSQLite(ctx, dsn, orgID, run, n)
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Each journal credits 1,000.00 BDT: external -100000 poisha, available
// +100000.
const seedAmountMinor = 100_000

func seedJournalsSQLite(ctx context.Context, path, orgID, run string, n int) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var balanceRows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'account_balances'`).Scan(&balanceRows); err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	series := `WITH RECURSIVE s(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM s WHERE i < ?) `
	for lo := 0; lo < n; lo += seedJournalBatch {
		hi := min(n, lo+seedJournalBatch) - 1
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		stmts := []struct {
			q    string
			args []any
		}{
			{series + `INSERT INTO journals (id, organization_id, kind, reference, memo, actor, created_at)
				SELECT printf('jnl_seed%s_%09d', ?, i), ?, 'deposit_credit', printf('dep_seed%s_%09d', ?, i), 'seed', '', ? FROM s`,
				[]any{lo, hi, run, orgID, run, now}},
			{series + `INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
				SELECT printf('jnl_seed%s_%09d', ?, i), 0, ?, 'external', ? FROM s
				UNION ALL SELECT printf('jnl_seed%s_%09d', ?, i), 1, ?, 'available', ? FROM s`,
				[]any{lo, hi, run, orgID, -seedAmountMinor, run, orgID, seedAmountMinor}},
		}
		if balanceRows > 0 {
			sum := int64(hi-lo+1) * seedAmountMinor
			stmts = append(stmts, struct {
				q    string
				args []any
			}{`INSERT INTO account_balances (organization_id, account, balance_minor) VALUES (?, 'available', ?), (?, 'external', ?)
				ON CONFLICT (organization_id, account) DO UPDATE SET balance_minor = balance_minor + excluded.balance_minor`,
				[]any{orgID, sum, orgID, -sum}})
		}
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
				tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func seedJournalsPostgres(ctx context.Context, url, orgID, run string, n int) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var balanceRows bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('account_balances') IS NOT NULL`).Scan(&balanceRows); err != nil {
		return err
	}
	for lo := 0; lo < n; lo += seedJournalBatch {
		hi := min(n, lo+seedJournalBatch) - 1
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO journals (id, organization_id, kind, reference, memo, actor, created_at)
				SELECT format('jnl_seed%s_%s', $3::text, lpad(i::text, 9, '0')), $4, 'deposit_credit',
					format('dep_seed%s_%s', $3::text, lpad(i::text, 9, '0')), 'seed', '', now()
				FROM generate_series($1::bigint, $2::bigint) AS i`, lo, hi, run, orgID)
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `INSERT INTO ledger_entries (journal_id, position, organization_id, account, amount_minor)
				SELECT format('jnl_seed%s_%s', $3::text, lpad(i::text, 9, '0')), p, $4, CASE p WHEN 0 THEN 'external' ELSE 'available' END,
					CASE p WHEN 0 THEN -$5::bigint ELSE $5::bigint END
				FROM generate_series($1::bigint, $2::bigint) AS i, (VALUES (0), (1)) AS pos (p)`, lo, hi, run, orgID, seedAmountMinor)
			if err != nil || !balanceRows {
				return err
			}
			sum := int64(hi-lo+1) * seedAmountMinor
			_, err = tx.Exec(ctx, `INSERT INTO account_balances (organization_id, account, balance_minor)
				VALUES ($1, 'available', $2::bigint), ($1, 'external', -$2::bigint)
				ON CONFLICT (organization_id, account) DO UPDATE SET balance_minor = account_balances.balance_minor + EXCLUDED.balance_minor`,
				orgID, sum)
			return err
		})
		if err != nil {
			return err
		}
	}
	// Fresh statistics, as autovacuum would have them on a ledger grown
	// over a month.
	_, err = conn.Exec(ctx, `ANALYZE journals; ANALYZE ledger_entries`)
	return err
}

// countEntries is the size of the organization's ledger.
func countEntries(ctx context.Context, dsn, orgID string) (int64, error) {
	var n int64
	if isPostgres(dsn) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		return n, conn.QueryRow(ctx, `SELECT count(*) FROM ledger_entries WHERE organization_id = $1`, orgID).Scan(&n)
	}
	db, err := sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return n, db.QueryRowContext(ctx, `SELECT count(*) FROM ledger_entries WHERE organization_id = ?`, orgID).Scan(&n)
}

// balanceGet reads the organization's balance, as a merchant's dashboard
// does before a payout.
var balanceGet = scenario{op: func(ctx context.Context, c *client, _, _ int) error {
	return c.call(ctx, "GET", "/v1/balance", "", false, http.StatusOK, nil)
}}

func init() {
	scenarioByName["balance-get"] = balanceGet
	allScenarios = append(allScenarios, "balance-get")
}

// printLedgerSize says how many entries the measured ledger holds.
func printLedgerSize(ctx context.Context, o options, orgID string) {
	n, err := countEntries(ctx, o.db, orgID)
	if err != nil {
		fmt.Fprintf(o.out, "ledger: %v\n", err)
		return
	}
	fmt.Fprintf(o.out, "ledger: %d entries\n", n)
}
