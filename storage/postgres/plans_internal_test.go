package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// TestPayoutClaimReadsOnlyDueRows: a claim reads the withdrawals that are
// due, never the ones waiting for a later run (a payout polled again in
// five seconds, a bank transfer checked every minute for a day). Their
// number grows with every payout in flight, and the claim runs several
// times a second: walking them made it the costliest statement in a
// benchmark run (10 ms a claim with 3,000 waiting). It must hold whatever
// plan Postgres picks: with and without statistics, as a custom or a
// generic plan, with or without bitmap scans.
func TestPayoutClaimReadsOnlyDueRows(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	now := base.Add(time.Hour)
	const waiting = 2000
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		add := func(id string, next time.Time) error {
			return tx.CreateWithdrawal(ctx, &engine.Withdrawal{
				ID: id, OrganizationID: "org_1", MerchantID: id, Amount: decimal.RequireFromString("10"),
				Metadata: []byte("{}"), Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutSent,
				NextRunAt: next, CreatedAt: base, UpdatedAt: base,
			})
		}
		for i := range waiting {
			if err := add(fmt.Sprintf("wd_wait_%04d", i), now.Add(time.Duration(i+1)*time.Second)); err != nil {
				return err
			}
		}
		for i := range 3 { // never run: the zero time
			if err := add(fmt.Sprintf("wd_new_%d", i), time.Time{}); err != nil {
				return err
			}
		}
		for i := range 2 { // due again
			if err := add(fmt.Sprintf("wd_due_%d", i), now.Add(-time.Duration(i+1)*time.Second)); err != nil {
				return err
			}
		}
		return nil
	})
	args := fmt.Sprintf("('w', '%s'::timestamptz, '%s'::timestamptz, 10)",
		now.Add(time.Minute).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	errRollback := errors.New("rollback")
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := s.pool.Exec(ctx, `ANALYZE withdrawals`); err != nil {
				t.Fatal(err)
			}
		}
		for _, mode := range []string{"auto", "force_custom_plan", "force_generic_plan"} {
			for _, bitmap := range []string{"on", "off"} {
				name := fmt.Sprintf("analyzed=%v plan_cache_mode=%s enable_bitmapscan=%s", analyzed, mode, bitmap)
				var plan []byte
				err := s.runTx(ctx, readWrite, func(tx pgx.Tx) error {
					for _, q := range []string{
						`SET LOCAL plan_cache_mode = ` + mode,
						`SET LOCAL enable_bitmapscan = ` + bitmap,
						`SET LOCAL enable_seqscan = off`,
						`PREPARE claim_payouts AS ` + claimPayoutsQuery,
					} {
						if _, err := tx.Exec(ctx, q); err != nil {
							return err
						}
					}
					defer tx.Exec(ctx, `DEALLOCATE claim_payouts`) //nolint:errcheck // the rollback follows
					// The plan cache makes five custom plans before it weighs
					// a generic one; each of these claims is undone.
					for range 6 {
						for _, q := range []string{`SAVEPOINT warm`, `EXECUTE claim_payouts` + args, `ROLLBACK TO SAVEPOINT warm`} {
							if _, err := tx.Exec(ctx, q); err != nil {
								return err
							}
						}
					}
					if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim_payouts`+args).Scan(&plan); err != nil {
						return err
					}
					return errRollback
				})
				if !errors.Is(err, errRollback) {
					t.Fatalf("%s: %v", name, err)
				}
				claimed, read := scanReads(t, plan, "withdrawals", "withdrawals_pkey")
				if claimed != 5 {
					t.Errorf("%s: claimed %d, want the 5 due", name, claimed)
				}
				if read > 20 {
					t.Errorf("%s: the claim read %d withdrawals for 5 due among %d waiting", name, read, waiting)
				}
			}
		}
	}
}

// scanReads walks an EXPLAIN (ANALYZE, FORMAT JSON): the rows the statement
// returned, and the rows of table its scans read other than through
// exceptIndex (returned or filtered out).
func scanReads(t *testing.T, plan []byte, table, exceptIndex string) (returned, read int) {
	t.Helper()
	type node struct {
		NodeType       string  `json:"Node Type"`
		Relation       string  `json:"Relation Name"`
		Index          string  `json:"Index Name"`
		Rows           float64 `json:"Actual Rows"`
		Loops          float64 `json:"Actual Loops"`
		RemovedFilter  float64 `json:"Rows Removed by Filter"`
		RemovedRecheck float64 `json:"Rows Removed by Index Recheck"`
		Plans          []node  `json:"Plans"`
	}
	var out []struct{ Plan node }
	if err := json.Unmarshal(plan, &out); err != nil || len(out) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	var walk func(n node)
	walk = func(n node) {
		if n.Relation == table && n.NodeType != "ModifyTable" && (exceptIndex == "" || n.Index != exceptIndex) {
			read += int(n.Rows*n.Loops + n.RemovedFilter + n.RemovedRecheck)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(out[0].Plan)
	return int(out[0].Plan.Rows), read
}

// TestMerchantIDLookupsReadOneRow: a lookup by merchant_id (a create's
// idempotency check, once per request) reads the one row it asks for, even
// with a plan Postgres made and cached while the table was empty, as on a
// new database before autovacuum's first ANALYZE. Such a plan took an
// index that starts with organization_id and filtered all of the
// organization's rows for the merchant_id: on a benchmark's fresh
// database, 15 million index entries read in 16 s of withdrawal creates,
// and a third of the throughput gone.
func TestMerchantIDLookupsReadOneRow(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })
	const rows = 2000
	cases := []struct{ name, table, query, args string }{
		{"deposit", "deposits", getDepositByMerchantIDQuery, `('org_1', 'm_dep_0042')`},
		{"withdrawal", "withdrawals", getWithdrawalByMerchantIDQuery, `('org_1', 'm_0042')`},
		{"withdrawals taken", "withdrawals", takenMerchantIDsQuery, `('org_1', '{m_0042,m_0043,m_x}'::text[])`},
	}
	type session struct {
		conn *pgxpool.Conn
		name string
	}
	// Each case's statement is prepared, and run until its plan is cached,
	// on an empty table, one connection per planner setting.
	prepare := func(when string) []session {
		var out []session
		for i, c := range cases {
			for _, mode := range []string{"auto", "force_generic_plan"} {
				for _, bitmap := range []string{"on", "off"} {
					conn, err := s.pool.Acquire(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, q := range []string{
						`SET plan_cache_mode = ` + mode,
						`SET enable_bitmapscan = ` + bitmap,
						fmt.Sprintf(`PREPARE lookup_%d AS %s`, i, c.query),
					} {
						if _, err := conn.Exec(ctx, q); err != nil {
							t.Fatal(err)
						}
					}
					for range 6 {
						if _, err := conn.Exec(ctx, fmt.Sprintf(`EXECUTE lookup_%d%s`, i, c.args)); err != nil {
							t.Fatal(err)
						}
					}
					out = append(out, session{conn, fmt.Sprintf("%s, planned %s, plan_cache_mode=%s enable_bitmapscan=%s", c.name, when, mode, bitmap)})
				}
			}
		}
		return out
	}
	check := func(sessions []session) {
		for j, ses := range sessions {
			i := j / 4
			var plan []byte
			err := ses.conn.QueryRow(ctx, fmt.Sprintf(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE lookup_%d%s`, i, cases[i].args)).Scan(&plan)
			if err != nil {
				t.Fatal(err)
			}
			if _, read := scanReads(t, plan, cases[i].table, ""); read > 3 {
				t.Errorf("%s: read %d rows of %d", ses.name, read, rows)
			}
			// Back to the pool as it was lent.
			if _, err := ses.conn.Exec(ctx, fmt.Sprintf(`DEALLOCATE lookup_%d; RESET plan_cache_mode; RESET enable_bitmapscan`, i)); err != nil {
				t.Fatal(err)
			}
			ses.conn.Release()
		}
	}
	empty := prepare("on empty tables")
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for i := range rows {
			if err := tx.CreateDeposit(ctx, newDeposit(fmt.Sprintf("dep_%04d", i), "org_1")); err != nil {
				return err
			}
			if err := tx.CreateWithdrawal(ctx, newWithdrawal(fmt.Sprintf("wd_%04d", i), "org_1", fmt.Sprintf("m_%04d", i))); err != nil {
				return err
			}
		}
		return nil
	})
	check(empty)
	if _, err := s.pool.Exec(ctx, `ANALYZE deposits, withdrawals`); err != nil {
		t.Fatal(err)
	}
	check(prepare("after ANALYZE"))
}
