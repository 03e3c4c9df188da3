package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
)

// TestPayoutClaimReadsOnlyDueRows: a claim reads about as many withdrawals
// as it claims. Never those waiting for a later run (a payout polled again
// in five seconds, a bank transfer checked every minute for a day): their
// number grows with every payout in flight, and walking them made the
// claim the costliest statement of a benchmark run (10 ms a claim with
// 3,000 waiting). Nor the whole backlog of due ones when the worker is
// behind: reading and sorting all of them on every claim (7 ms a claim
// with 2,000 due) only puts it further behind. It must hold whatever plan
// Postgres picks: with and without statistics, custom or generic, with
// or without bitmap scans.
func TestPayoutClaimReadsOnlyDueRows(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	now := base.Add(time.Hour)
	const waiting, limit = 2000, 10
	add := func(prefix string, n int, next func(i int) time.Time) {
		write(t, s, func(ctx context.Context, tx engine.Tx) error {
			for i := range n {
				id := fmt.Sprintf("wd_%s_%04d", prefix, i)
				err := tx.CreateWithdrawal(ctx, &engine.Withdrawal{
					ID: id, OrganizationID: "org_1", MerchantID: id, Amount: decimal.RequireFromString("10"),
					Metadata: []byte("{}"), Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutSent,
					NextRunAt: next(i), CreatedAt: base, UpdatedAt: base,
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })
	add("wait", waiting, func(i int) time.Time { return now.Add(time.Duration(i+1) * time.Second) })
	neverRun := func(int) time.Time { return time.Time{} }
	dueAgain := func(i int) time.Time { return now.Add(-time.Duration(i+1) * time.Second) }
	for _, backlog := range []struct {
		name string
		add  func()
		want int
	}{
		{"3 never run, 2 due again", func() { add("new", 3, neverRun); add("due", 2, dueAgain) }, 5},
		{"3 never run, 500 due again", func() { add("due_more", 498, dueAgain) }, limit},
		{"500 never run, 500 due again", func() { add("new_more", 497, neverRun) }, limit},
	} {
		backlog.add()
		checkClaimReads(t, s, backlog.name, claimPayoutsQuery, "withdrawals", claimArgs(now, limit), limit, backlog.want)
	}
}

// TestRefundClaimReadsOnlyDueRows is TestPayoutClaimReadsOnlyDueRows for
// refunds, whose claim has the same shape.
func TestRefundClaimReadsOnlyDueRows(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	now := base.Add(time.Hour)
	const waiting, limit = 2000, 10
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1"))
	})
	add := func(prefix string, n int, next func(i int) time.Time) {
		write(t, s, func(ctx context.Context, tx engine.Tx) error {
			for i := range n {
				id := fmt.Sprintf("rf_%s_%04d", prefix, i)
				err := tx.CreateRefund(ctx, &engine.Refund{
					ID: id, OrganizationID: "org_1", DepositID: "dep_1", MerchantID: id, Amount: decimal.RequireFromString("1"),
					Metadata: []byte("{}"), Status: engine.RefundProcessing, Step: engine.PayoutSent,
					NextRunAt: next(i), CreatedAt: base, UpdatedAt: base,
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	add("wait", waiting, func(i int) time.Time { return now.Add(time.Duration(i+1) * time.Second) })
	neverRun := func(int) time.Time { return time.Time{} }
	dueAgain := func(i int) time.Time { return now.Add(-time.Duration(i+1) * time.Second) }
	for _, backlog := range []struct {
		name string
		add  func()
		want int
	}{
		{"3 never run, 2 due again", func() { add("new", 3, neverRun); add("due", 2, dueAgain) }, 5},
		{"3 never run, 500 due again", func() { add("due_more", 498, dueAgain) }, limit},
		{"500 never run, 500 due again", func() { add("new_more", 497, neverRun) }, limit},
	} {
		backlog.add()
		checkClaimReads(t, s, backlog.name, claimRefundsQuery, "refunds", claimArgs(now, limit), limit, backlog.want)
	}
}

// TestAttemptClaimReadsOnlyDueRows is TestPayoutClaimReadsOnlyDueRows for
// verification attempts: a submitted transaction ID waiting for its SMS
// is tried again later, and a burst of submissions is a backlog.
func TestAttemptClaimReadsOnlyDueRows(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	now := base.Add(time.Hour)
	const limit = 10
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		for i := range 2500 {
			id := fmt.Sprintf("%04d", i)
			if err := tx.CreateDeposit(ctx, newDeposit("dep_"+id, "org_1")); err != nil {
				return err
			}
			due := now.Add(-time.Duration(i+1) * time.Second) // 500 due
			if i >= 500 {
				due = now.Add(time.Duration(i) * time.Second) // 2,000 waiting
			}
			if err := tx.CreateAttempt(ctx, newAttempt("att_"+id, "dep_"+id, "org_1", due)); err != nil {
				return err
			}
		}
		return nil
	})
	checkClaimReads(t, s, "500 due, 2,000 waiting", claimQuery, "attempts", claimArgs(now, limit), limit, limit)
}

// claimArgs are the arguments of claimQuery and claimPayoutsQuery, as an
// EXECUTE's list.
func claimArgs(now time.Time, limit int) string {
	return fmt.Sprintf("('w', '%s'::timestamptz, '%s'::timestamptz, %d)",
		now.Add(time.Minute).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), limit)
}

// checkClaimReads runs a claim query under every planner setting that a
// connection may meet, before and after ANALYZE, each time undone: it
// must claim want rows and read at most three times limit.
func checkClaimReads(t *testing.T, s *Store, name, query, table, args string, limit, want int) {
	t.Helper()
	ctx := context.Background()
	errRollback := errors.New("rollback")
	for _, analyzed := range []bool{false, true} {
		if analyzed {
			if _, err := s.pool.Exec(ctx, `ANALYZE `+table); err != nil {
				t.Fatal(err)
			}
		}
		for _, mode := range []string{"auto", "force_custom_plan", "force_generic_plan"} {
			for _, bitmap := range []string{"on", "off"} {
				name := fmt.Sprintf("%s, analyzed=%v plan_cache_mode=%s enable_bitmapscan=%s", name, analyzed, mode, bitmap)
				var plan []byte
				err := s.runTx(ctx, readWrite, func(tx pgx.Tx) error {
					setup := []string{`SET LOCAL plan_cache_mode = ` + mode, `SET LOCAL enable_bitmapscan = ` + bitmap}
					setup = append(setup, claimPlanning...) // as claimList plans it
					for _, q := range append(setup, `PREPARE claim AS `+query) {
						if _, err := tx.Exec(ctx, q); err != nil {
							return err
						}
					}
					defer tx.Exec(ctx, `DEALLOCATE claim`) //nolint:errcheck // the rollback follows
					// The plan cache makes five custom plans before it weighs
					// a generic one; each of these claims is undone.
					for range 6 {
						for _, q := range []string{`SAVEPOINT warm`, `EXECUTE claim` + args, `ROLLBACK TO SAVEPOINT warm`} {
							if _, err := tx.Exec(ctx, q); err != nil {
								return err
							}
						}
					}
					if err := tx.QueryRow(ctx, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim`+args).Scan(&plan); err != nil {
						return err
					}
					return errRollback
				})
				if !errors.Is(err, errRollback) {
					t.Fatalf("%s: %v", name, err)
				}
				claimed, read := pgtest.PlanReads(t, plan, table, table+"_pkey")
				if bytes.Contains(plan, []byte(`"JIT"`)) {
					t.Errorf("%s: compiled (JIT)", name)
				}
				if claimed != want {
					t.Errorf("%s: claimed %d, want %d", name, claimed, want)
				}
				if read > 3*limit {
					t.Errorf("%s: the claim read %d %s to claim %d", name, read, table, claimed)
				}
			}
		}
	}
}

// TestDeliveryClaimReadsOnlyDueRows is TestPayoutClaimReadsOnlyDueRows
// for webhook deliveries: a receiver that fails has its deliveries retried
// for days, and those wait; those delivered stay in the table.
func TestDeliveryClaimReadsOnlyDueRows(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	now := base.Add(time.Hour)
	const limit = 10
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		for _, ep := range []string{"whe_a", "whe_b"} {
			err := tx.CreateWebhookEndpoint(ctx, &engine.WebhookEndpoint{ID: ep, OrganizationID: "org_1", URL: "https://x",
				Secret: []byte("s"), Enabled: true, CreatedAt: base, UpdatedAt: base})
			if err != nil {
				return err
			}
		}
		return nil
	})
	// In SQL: a row at a time through the store took a minute.
	_, err := s.pool.Exec(context.Background(), `INSERT INTO events (id, organization_id, type, resource_id, payload, created_at)
		SELECT 'evt_' || i, 'org_1', 'x', 'r', '{}', $1 FROM generate_series(0, 2004) AS i`, base)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.pool.Exec(context.Background(), `
		INSERT INTO deliveries (id, event_id, endpoint_id, organization_id, status, attempts, next_attempt_at,
				lease_owner, leased_until, last_status_code, last_error, delivered_at, created_at, updated_at)
			SELECT 'del_' || i, 'evt_' || i, CASE WHEN i < 2003 THEN 'whe_a' ELSE 'whe_b' END, 'org_1',
				CASE WHEN i < 1000 THEN 'delivered' ELSE 'pending' END, 0,
				CASE WHEN i < 1000 THEN NULL -- delivered
					WHEN i < 2000 THEN $2::timestamptz + i * interval '1 second' -- to be tried again, later
					WHEN i < 2003 THEN NULL -- never tried
					ELSE $2::timestamptz - interval '1 second' END, -- due again
				'', NULL, 0, '', NULL, $1, $1
			FROM generate_series(0, 2004) AS i`, base, now)
	if err != nil {
		t.Fatal(err)
	}
	args := fmt.Sprintf("('w', '%s'::timestamptz, '%s'::timestamptz, '{}'::text[], %d, %d, '{}'::text[], %d)",
		now.Add(time.Minute).Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), limit, limit, limit)
	checkClaimReads(t, s, "5 due, 1,000 waiting, 1,000 delivered", claimDeliveriesQuery, "deliveries", args, limit, 5)
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
	lookupsReadOneRow(t, []lookupCase{
		{"deposit", "deposits", getDepositByMerchantIDQuery, `('org_1', 'm_dep_0042')`},
		{"withdrawal", "withdrawals", getWithdrawalByMerchantIDQuery, `('org_1', 'm_0042')`},
		{"withdrawals taken", "withdrawals", takenMerchantIDsQuery, `('org_1', '{m_0042,m_0043,m_x}'::text[])`},
	})
}

// TestRefundMerchantIDLookupReadsOneRow is TestMerchantIDLookupsReadOneRow
// for a refund's merchant_id, which every refund create looks up.
func TestRefundMerchantIDLookupReadsOneRow(t *testing.T) {
	t.Parallel()
	lookupsReadOneRow(t, []lookupCase{
		{"refund", "refunds", getRefundByMerchantIDQuery, `('org_1', 'm_0042')`},
	})
}

// TestKeyedReadsUseTheirIndex: the statement that reads a batch of GETs'
// deposits by ID probes the primary key for each, even with a plan cached
// while the table was empty. Asked as id = ANY($1), that plan scanned the
// whole table for every batch: 2.3 ms a batch a few seconds into a
// benchmark's verify run, a fifth of the server's CPU.
func TestKeyedReadsUseTheirIndex(t *testing.T) {
	t.Parallel()
	lookupsReadOneRow(t, []lookupCase{
		{"deposits by ID", "deposits", getDepositsQuery, `('{dep_0042,dep_0043,dep_x}'::text[])`},
	})
}

type lookupCase struct{ name, table, query, args string }

// lookupsReadOneRow checks that each case's statement, planned on empty
// tables and again after ANALYZE, reads at most a few rows of 2,000.
func lookupsReadOneRow(t *testing.T, cases []lookupCase) {
	s, _ := openStore(t)
	ctx := context.Background()
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })
	const rows = 2000
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
			if _, read := pgtest.PlanReads(t, plan, cases[i].table, ""); read > 3 {
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
			if err := tx.CreateRefund(ctx, &engine.Refund{ID: fmt.Sprintf("rf_%04d", i), OrganizationID: "org_1", DepositID: "dep_0000",
				MerchantID: fmt.Sprintf("m_%04d", i), Amount: decimal.RequireFromString("1"), Metadata: []byte("{}"),
				Status: engine.RefundSucceeded, Step: engine.PayoutSettled, CreatedAt: base, UpdatedAt: base}); err != nil {
				return err
			}
		}
		return nil
	})
	check(empty)
	if _, err := s.pool.Exec(ctx, `ANALYZE deposits, withdrawals, refunds`); err != nil {
		t.Fatal(err)
	}
	check(prepare("after ANALYZE"))
}
