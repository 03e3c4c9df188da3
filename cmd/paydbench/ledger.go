package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The ledger-growth scenario: -seed-journals N writes N deposit credits
// (two entries each) into the bench organization's ledger in bulk SQL,
// then withdraw-create, balance-get and balance-transactions (the first
// page of balance movements: one per journal, on both accounts) are timed
// over it. Run it at two
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
	var movements int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'balance_transactions'`).Scan(&movements); err != nil {
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
		if movements > 0 {
			// One balance movement per journal, every other one on held,
			// a microsecond apart: the movements list merges the two.
			stmts = append(stmts, struct {
				q    string
				args []any
			}{series + `INSERT INTO balance_transactions (id, organization_id, account, journal_id, kind, reference,
					amount_minor, balance_after_minor, created_at)
				SELECT printf('txn_seed%s_%09d', ?, i), ?, CASE i % 2 WHEN 0 THEN 'available' ELSE 'held' END,
					printf('jnl_seed%s_%09d', ?, i), 'deposit_credit', printf('dep_seed%s_%09d', ?, i), ?, ?, ? + i FROM s`,
				[]any{lo, hi, run, orgID, run, run, seedAmountMinor, seedAmountMinor, now}})
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
	var balanceRows, movements bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('account_balances') IS NOT NULL, to_regclass('balance_transactions') IS NOT NULL`).Scan(&balanceRows, &movements); err != nil {
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
			if err == nil && movements {
				// As for SQLite: one movement per journal, every other on held.
				_, err = tx.Exec(ctx, `INSERT INTO balance_transactions (id, organization_id, account, journal_id, kind, reference,
						amount_minor, balance_after_minor, created_at)
					SELECT format('txn_seed%s_%s', $3::text, lpad(i::text, 9, '0')), $4, CASE i % 2 WHEN 0 THEN 'available' ELSE 'held' END,
						format('jnl_seed%s_%s', $3::text, lpad(i::text, 9, '0')), 'deposit_credit',
						format('dep_seed%s_%s', $3::text, lpad(i::text, 9, '0')), $5::bigint, $5::bigint,
						now() + i * interval '1 microsecond'
					FROM generate_series($1::bigint, $2::bigint) AS i`, lo, hi, run, orgID, seedAmountMinor)
			}
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
	// Vacuumed and analyzed, as autovacuum leaves a ledger grown over a
	// month, and so that autovacuum does not run on the new rows during the
	// measurement.
	vacuum := `VACUUM (ANALYZE) journals, ledger_entries`
	if movements {
		vacuum += `, balance_transactions`
	}
	_, err = conn.Exec(ctx, vacuum)
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
	return c.call(ctx, "GET", "/v1/balance", nil, false, http.StatusOK, nil)
}}

// balanceTransactionsPage reads the first page of the organization's
// balance movements, of both accounts (merged from the by-account index).
var balanceTransactionsPage = scenario{op: func(ctx context.Context, c *client, _, _ int) error {
	return c.call(ctx, "GET", "/v1/balance/transactions?limit=10", nil, true, http.StatusOK, nil)
}}

func init() {
	scenarioByName["balance-get"] = balanceGet
	scenarioByName["balance-transactions"] = balanceTransactionsPage
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

// parseGrowth reads -ledger-growth: increasing journal counts.
func parseGrowth(s string, o *options) error {
	if s == "" {
		return nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(o.growth) > 0 && n <= o.growth[len(o.growth)-1]) {
			return fmt.Errorf("-ledger-growth %q: want increasing journal counts, e.g. 5000,500000", s)
		}
		o.growth = append(o.growth, n)
	}
	return nil
}

// measureLedgerGrowth grows the organization's ledger to each size of
// o.growth in turn and measures the scenarios there, in one run (one payd,
// one database), so the sizes compare under the same noise; it ends with
// each scenario's p50 at the largest size as a ratio to the smallest.
func measureLedgerGrowth(ctx context.Context, o options, c *client, orgID string, srv *paydProcess) error {
	// A second of each scenario first, unmeasured, so that the first size
	// does not pay the new process's warm-up (connections, caches).
	for _, name := range o.scenarios {
		if sc, ok := scenarioByName[name]; ok {
			if _, err := measure(ctx, c, sc, o.clients, time.Second, 0); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	report := newReport(o.out)
	first := map[string]*result{}
	var last map[string]*result
	seeded := 0
	for _, size := range o.growth {
		start := time.Now()
		if err := seedJournals(ctx, o.db, orgID, size-seeded); err != nil {
			return fmt.Errorf("seed journals: %w", err)
		}
		seeded = size
		entries, err := countEntries(ctx, o.db, orgID)
		if err != nil {
			return err
		}
		fmt.Fprintf(o.out, "\n%d journals seeded in %s; the ledger holds %d entries\n", size, time.Since(start).Round(time.Millisecond), entries)
		report.header = false
		last = map[string]*result{}
		for _, name := range o.scenarios {
			sc, ok := scenarioByName[name]
			if !ok {
				return fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(allScenarios, ", "))
			}
			res, err := measure(ctx, c, sc, o.clients, o.duration, 0)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			report.row(name, res, srv.peakRSS())
			last[name] = res
			if first[name] == nil {
				first[name] = res
			}
		}
	}
	fmt.Fprintf(o.out, "\np50 at %d journals / p50 at %d journals:\n", o.growth[len(o.growth)-1], o.growth[0])
	for _, name := range o.scenarios {
		if a, b := first[name].percentile(0.5), last[name].percentile(0.5); a > 0 {
			fmt.Fprintf(o.out, "  %-28s %.2fx (%s -> %s)\n", name, float64(b)/float64(a), ms(a), ms(b))
		}
	}
	return nil
}
