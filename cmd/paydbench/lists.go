package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The lists scenario, for the claim that a page costs the same at any
// history: -list-growth 10000,1000000 seeds, in bulk
// SQL, a database per count with that many deposits of its organization
// and times GET /v1/deposits pages on each, in one run: the first page, a
// page by status, a page deep in the history (starting_after a deposit
// half way back) and a page by payment method in a created range. Every
// list is an index range, so each p50 at the largest count should stay
// within 20% of the smallest.

// listSeed is what the list scenarios page from, for the client of each
// size.
type listSeed struct {
	middle   string // a deposit half way back in the history
	from, to string // a created range in the middle tenth of the history, RFC 3339
}

var listSeeds = map[*client]listSeed{}

// listSeedStart is when the seeded history begins: a month back, a
// millisecond per deposit, so that it is older than what the bench creates.
var listSeedStart = time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Second)

func listSeedID(i int) string    { return fmt.Sprintf("dep_seedlist_%012d", i) }
func listSeedAt(i int) time.Time { return listSeedStart.Add(time.Duration(i) * time.Millisecond) }

var listScenarios = map[string]scenario{
	"list-first": {op: func(ctx context.Context, c *client, _, _ int) error {
		return c.call(ctx, "GET", "/v1/deposits?limit=10", nil, true, http.StatusOK, nil)
	}},
	"list-status": {op: func(ctx context.Context, c *client, _, _ int) error {
		return c.call(ctx, "GET", "/v1/deposits?limit=10&status=failed", nil, true, http.StatusOK, nil)
	}},
	"list-deep": {op: func(ctx context.Context, c *client, _, _ int) error {
		return c.call(ctx, "GET", "/v1/deposits?limit=10&starting_after="+listSeeds[c].middle, nil, true, http.StatusOK, nil)
	}},
	"list-method-range": {op: func(ctx context.Context, c *client, _, _ int) error {
		q := "/v1/deposits?limit=10&payment_method=nagad&created%5Bgte%5D=" + url.QueryEscape(listSeeds[c].from) +
			"&created%5Blt%5D=" + url.QueryEscape(listSeeds[c].to)
		return c.call(ctx, "GET", q, nil, true, http.StatusOK, nil)
	}},
}

var listScenarioNames = []string{"list-first", "list-status", "list-deep", "list-method-range"}

func init() {
	for name, sc := range listScenarios {
		scenarioByName[name] = sc
	}
}

// seedListDeposits inserts the organization's deposits from index lo up to
// hi, in batches, in SQL: statuses and methods rotate.
func seedListDeposits(ctx context.Context, dsn, orgID string, lo, hi int) error {
	const batch = 50_000
	if isPostgres(dsn) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		for b := lo; b < hi; b += batch {
			_, err := conn.Exec(ctx, `INSERT INTO deposits (id, organization_id, merchant_id, checkout_mode, amount, payment_method,
					redirect_url, payer_phone, metadata, status, action, checkout_token, checkout_url, channel, operation, wallet_id,
					recipient_phone, recipient_name, qr_payload, verification_state, attempts_used, failure_code, provider_transaction_id,
					expires_at, created_at, updated_at)
				SELECT format('dep_seedlist_%s', lpad(i::text, 12, '0')), $3, format('seedlist-%s', i), 'redirect', 500,
					CASE i % 2 WHEN 0 THEN 'bkash' ELSE 'nagad' END, '', '', '{}',
					(ARRAY['pending', 'succeeded', 'failed', 'expired'])[i % 4 + 1], 'redirect', format('tok_seedlist_%s', i), '',
					'bkash', '', NULL, '', '', '', 'processing', 0, '', '',
					$4::timestamptz + i * interval '1 millisecond', $4::timestamptz + i * interval '1 millisecond',
					$4::timestamptz + i * interval '1 millisecond'
				FROM generate_series($1::bigint, $2::bigint) AS i`, b, min(hi, b+batch)-1, orgID, listSeedStart)
			if err != nil {
				return err
			}
		}
		_, err = conn.Exec(ctx, `VACUUM (ANALYZE) deposits`)
		return err
	}
	db, err := sql.Open("sqlite", "file:"+dsn+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	start := listSeedStart.UnixMicro()
	for b := lo; b < hi; b += batch {
		_, err := db.ExecContext(ctx, `WITH RECURSIVE s(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM s WHERE i < ?)
			INSERT INTO deposits (id, organization_id, merchant_id, checkout_mode, amount, payment_method, redirect_url, payer_phone,
				metadata, status, action, checkout_token, checkout_url, channel, operation, wallet_id, recipient_phone, recipient_name,
				qr_payload, verification_state, attempts_used, failure_code, provider_transaction_id, expires_at, created_at, updated_at)
			SELECT printf('dep_seedlist_%012d', i), ?, 'seedlist-' || i, 'redirect', '500', CASE i % 2 WHEN 0 THEN 'bkash' ELSE 'nagad' END,
				'', '', '{}', CASE i % 4 WHEN 0 THEN 'pending' WHEN 1 THEN 'succeeded' WHEN 2 THEN 'failed' ELSE 'expired' END,
				'redirect', 'tok_seedlist_' || i, '', 'bkash', '', NULL, '', '', '', 'processing', 0, '', '',
				? + i * 1000, ? + i * 1000, ? + i * 1000
			FROM s`, b, min(hi, b+batch)-1, orgID, start, start, start)
		if err != nil {
			return err
		}
	}
	// Statistics, and the seed's WAL folded into the database: a WAL of a
	// million rows' pages, which payd's auto-checkpoints would have folded
	// in as they went, makes every read search its index.
	if _, err = db.ExecContext(ctx, `ANALYZE`); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// parseListGrowth reads -list-growth: increasing deposit counts.
func parseListGrowth(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 20 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("-list-growth %q: want increasing deposit counts of 20 or more, e.g. 10000,1000000", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// measureListGrowth measures the list scenarios at each deposit count of
// sizes, in one run: a payd and a database of its own per count, each
// seeded to its count first, then every scenario measured in rounds that
// alternate between the counts, so that the load the shared machine adds
// meanwhile falls on all of them alike. It ends with each scenario's p50
// at the largest count as a ratio to the smallest.
func measureListGrowth(ctx context.Context, o options, env []string, dir string, sizes []int) error {
	const rounds = 10
	clients := make([]*client, len(sizes))
	servers := make([]*paydProcess, len(sizes))
	for k, size := range sizes {
		db, err := listDB(ctx, o.db, dir, k)
		if err != nil {
			return err
		}
		srv, err := startPayd(ctx, o.payd, db, env, dir, o.logLevel)
		if err != nil {
			return err
		}
		defer srv.stop()
		org, err := bootstrap(o.payd, db, env)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := seedListDeposits(ctx, db, org.id, 0, size); err != nil {
			return fmt.Errorf("seed deposits: %w", err)
		}
		fmt.Fprintf(o.out, "%d deposits seeded in %s (%s)\n", size, time.Since(start).Round(time.Millisecond), redact(db))
		c := newClient(srv.base, org, o.clients)
		listSeeds[c] = listSeed{
			middle: listSeedID(size / 2),
			from:   listSeedAt(size * 45 / 100).Format(time.RFC3339Nano),
			to:     listSeedAt(size * 55 / 100).Format(time.RFC3339Nano),
		}
		clients[k], servers[k] = c, srv
	}
	// A second of each, unmeasured: caches and each process's warm-up.
	for _, c := range clients {
		for _, name := range listScenarioNames {
			if _, err := measure(ctx, c, listScenarios[name], o.clients, time.Second, 0); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	results := make([]map[string]*result, len(sizes))
	for k := range results {
		results[k] = map[string]*result{}
	}
	for _, name := range listScenarioNames {
		for range rounds {
			for k, c := range clients {
				res, err := measure(ctx, c, listScenarios[name], o.clients, o.duration/rounds, 0)
				if err != nil {
					return fmt.Errorf("%s at %d: %w", name, sizes[k], err)
				}
				results[k][name] = merge(results[k][name], res)
			}
		}
	}
	for k, size := range sizes {
		fmt.Fprintf(o.out, "\n%d deposits:\n", size)
		report := newReport(o.out)
		for _, name := range listScenarioNames {
			report.row(name, results[k][name], servers[k].peakRSS())
		}
	}
	last := len(sizes) - 1
	fmt.Fprintf(o.out, "\np50 at %d deposits / p50 at %d deposits (rounds of %s alternating between them):\n",
		sizes[last], sizes[0], o.duration/rounds)
	for _, name := range listScenarioNames {
		if a, b := results[0][name].percentile(0.5), results[last][name].percentile(0.5); a > 0 {
			fmt.Fprintf(o.out, "  %-28s %.2fx (%s -> %s)\n", name, float64(b)/float64(a), ms(a), ms(b))
		}
	}
	return nil
}

// merge adds b's operations and latencies to a (nil: none yet).
func merge(a, b *result) *result {
	if a == nil {
		return b
	}
	a.ops += b.ops
	a.errors += b.errors
	a.elapsed += b.elapsed
	a.latencies = append(a.latencies, b.latencies...)
	sort.Slice(a.latencies, func(i, j int) bool { return a.latencies[i] < a.latencies[j] })
	return a
}

// listDB is the database of the kth size: a SQLite file in dir, or a
// Postgres database next to the one -db names, made anew.
func listDB(ctx context.Context, dsn, dir string, k int) (string, error) {
	if !isPostgres(dsn) {
		return filepath.Join(dir, fmt.Sprintf("lists%d.db", k)), nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	name := strings.TrimPrefix(u.Path, "/") + fmt.Sprintf("_lists%d", k)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}
