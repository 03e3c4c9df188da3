package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/transport/signing"
)

// The crash test's knobs. Bounded by default (what go test ./... runs);
// a soak is e.g. go test ./cmd/payd -run TestCrashSafety -crash.kills=200.
var (
	crashSeed  = flag.Uint64("crash.seed", 0, "seed of TestCrashSafety's kill moments and load mix; 0 picks one (printed)")
	crashKills = flag.Int("crash.kills", crashKillsDefault(), "SIGKILLs per store in TestCrashSafety (env PAYD_CRASH_KILLS)")
)

// instanceStdout adds what an instance writes to stdout to its log.
type instanceStdout struct{ i *instance }

func (w instanceStdout) Write(p []byte) (int, error) {
	w.i.mu.Lock()
	defer w.i.mu.Unlock()
	return w.i.logs.Write(p)
}

// paydEnv is the environment of payd processes under test: a fresh master
// key and, unless keepLimits, no rate limits (the load is one API key).
func paydEnv(keepLimits bool) []string {
	master := make([]byte, 32)
	rand.Read(master)
	env := append(os.Environ(), "PAYD_MASTER_KEY="+hex.EncodeToString(master))
	if !keepLimits {
		env = append(env, "PAYD_RATE_LIMIT=0", "PAYD_RATE_LIMIT_VERIFY=0", "PAYD_RATE_LIMIT_WITHDRAW=0")
	}
	return env
}

// paydAdmin runs "payd admin ... --json" on db and decodes its answer.
func paydAdmin(t *testing.T, bin, db string, env []string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"admin"}, args...), "--db", db, "--json")...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("payd admin %v: %v %s", args, err, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("payd admin %v: %q", args, out)
	}
	return v
}

// crashStats count what the clients saw.
type crashStats struct {
	sent, answered, ok, connErrors, serverErrors, retriedOps atomic.Int64
	// Of serverErrors: 503s (without Retry-After, noRetryAfter), and the
	// others (500s).
	unavailable, noRetryAfter, internal atomic.Int64
	// watchFrom (unix ns, 0: off) starts a watch for the first 2xx answer
	// to a write sent after it; writeBack is when it came.
	watchFrom, writeBack atomic.Int64
}

// crashClient is a merchant's client of one payd that may be down: it
// retries a request that got no answer (or a 5xx) with the same body and
// a fresh signature, as a real client would, until it gets an answer.
type crashClient struct {
	base   atomic.Pointer[string] // "" while payd is down
	key    string
	secret string
	stats  *crashStats
	// failf reports a broken expectation (t.Errorf: workers are not the
	// test goroutine).
	failf func(format string, args ...any)
}

// reply is one answer.
type reply struct {
	status int
	body   map[string]any
	raw    string
	tries  int // 1 when the first request was answered
}

func (c *crashClient) do(method, path, body string, sign bool) reply {
	deadline := time.Now().Add(90 * time.Second)
	for try := 1; ; try++ {
		if time.Now().After(deadline) {
			c.failf("%s %s: no answer for 90 s", method, path)
			return reply{}
		}
		base := *c.base.Load()
		if base == "" {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.key)
		if sign {
			ts := signing.Timestamp(time.Now())
			req.Header.Set(signing.TimestampHeader, ts)
			req.Header.Set(signing.SignatureHeader, signing.Sign([]byte(c.secret), ts, method, path, []byte(body)))
		}
		c.stats.sent.Add(1)
		sent := time.Now().UnixNano()
		res, err := crashHTTP.Do(req)
		if err != nil {
			c.stats.connErrors.Add(1)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil { // cut off mid-answer
			c.stats.connErrors.Add(1)
			continue
		}
		c.stats.answered.Add(1)
		if res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests {
			if res.StatusCode >= 500 {
				c.stats.serverErrors.Add(1)
			}
			switch {
			case res.StatusCode == http.StatusServiceUnavailable:
				c.stats.unavailable.Add(1)
				if res.Header.Get("Retry-After") == "" {
					c.stats.noRetryAfter.Add(1)
				}
			case res.StatusCode >= 500:
				c.stats.internal.Add(1)
			}
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if res.StatusCode/100 == 2 {
			c.stats.ok.Add(1)
			if w := c.stats.watchFrom.Load(); w != 0 && sent > w && method == http.MethodPost {
				c.stats.writeBack.CompareAndSwap(0, time.Now().UnixNano())
			}
		}
		if try > 1 {
			c.stats.retriedOps.Add(1)
		}
		r := reply{status: res.StatusCode, raw: string(data), tries: try}
		_ = json.Unmarshal(data, &r.body)
		return r
	}
}

// crashHTTP gives up on a request to a killed process quickly.
var crashHTTP = &http.Client{Timeout: 10 * time.Second}

// crashLedger is what the clients were told: every 2xx answer, to check
// against the database at the end.
type crashLedger struct {
	mu          sync.Mutex
	deposits    map[string]crashDeposit    // by deposit ID
	payments    map[string]bool            // acknowledged sandbox payments by transaction ID
	withdrawals map[string]crashWithdrawal // by withdrawal ID
	settled     map[string]string          // acknowledged sandbox settlements: withdrawal ID -> outcome
	terminal    map[string]string          // a terminal status some 2xx answer reported, by resource ID
	attempts    map[string]string          // attempt ID -> deposit ID, from verify answers
}

type crashDeposit struct{ merchantID, amount, txID string }
type crashWithdrawal struct{ merchantID, amount, account string }

func (l *crashLedger) saw(id, status string) {
	if status == engine.StatusSucceeded || status == engine.StatusFailed || status == engine.StatusExpired || status == engine.StatusCancelled {
		l.mu.Lock()
		l.terminal[id] = status
		l.mu.Unlock()
	}
}

// TestCrashSafety runs a mixed load against one payd serve, kills it with
// SIGKILL at random moments and restarts it on the same database, then
// checks that nothing acknowledged was lost and nothing was done twice. On
// SQLite and, with PAYD_TEST_POSTGRES_URL, on Postgres.
func TestCrashSafety(t *testing.T) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("crash test: seed %d (-crash.seed=%d repeats the kill schedule and load mix), %d kills per store", seed, seed, *crashKills)
	bin := buildPayd(t)
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			var db string
			if kind == "postgres" {
				db = pgtest.URL(t)
			} else {
				db = t.TempDir() + "/payd.db"
			}
			runCrash(t, bin, db, seed, *crashKills)
		})
	}
}

func runCrash(t *testing.T, bin, db string, seed uint64, kills int) {
	env := paydEnv(false)
	paydAdmin(t, bin, db, env, "init")
	org := paydAdmin(t, bin, db, env, "org", "create", "--name", "Crash", "--h2h", "--withdrawals", "--deposit-fee-percent", "1", "--withdraw-commission-percent", "0.5")
	orgID := str(org, "organization_id")
	for i := range 3 {
		paydAdmin(t, bin, db, env, "wallet", "add", "--org", orgID, "--channel", "bkash", "--operation", "cash_out", "--phone", fmt.Sprintf("0181100000%d", i))
	}
	paydAdmin(t, bin, db, env, "balance", "adjust", "--org", orgID, "--amount", "10000000", "--reason", "float")
	rcv := paydtest.NewReceiver(t, nil)
	paydAdmin(t, bin, db, env, "webhook", "add", "--org", orgID, "--url", rcv.URL)

	stats := &crashStats{}
	c := &crashClient{key: str(org, "api_key"), secret: str(org, "signing_secret"), stats: stats, failf: t.Errorf}
	l := &crashLedger{
		deposits: map[string]crashDeposit{}, payments: map[string]bool{}, withdrawals: map[string]crashWithdrawal{},
		settled: map[string]string{}, terminal: map[string]string{}, attempts: map[string]string{},
	}
	inst := startInstance(t, bin, db, env)
	c.base.Store(&inst.base)

	// The load: workers run flows until the kills are done.
	var stop atomic.Bool
	var wg sync.WaitGroup
	const workers = 6
	for w := range workers {
		rng := mrand.New(mrand.NewPCG(seed, uint64(w)+1))
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				switch r := rng.IntN(10); {
				case r < 5:
					crashDepositFlow(c, l, rng, w, i)
				case r < 9:
					crashWithdrawalFlow(c, l, rng, w, i)
				default:
					if res := c.do("GET", "/api/v1/balance", "", false); res.status != 200 {
						t.Errorf("balance: %d %s", res.status, res.raw)
					}
				}
			}
		})
	}

	// The kills, from the test goroutine: at random moments, SIGKILL and a
	// restart on the same database (a new port: clients find it as a
	// restarted service behind a fixed name).
	rng := mrand.New(mrand.NewPCG(seed, 0))
	empty := ""
	for k := 1; k <= kills; k++ {
		time.Sleep(time.Duration(150+rng.IntN(600)) * time.Millisecond)
		before := stats.ok.Load()
		c.base.Store(&empty)
		inst.cmd.Process.Signal(syscall.SIGKILL)
		inst.cmd.Process.Wait()
		served := strings.Count(inst.logText(), `"msg":"request"`)
		time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond) // down for a moment
		inst = startInstance(t, bin, db, env)
		c.base.Store(&inst.base)
		t.Logf("kill %d: the process had served %d requests; %d 2xx answers so far", k, served, before)
	}
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Let the last instance finish what the load queued (and what killed
	// processes held, once their 2 s leases run out), then check.
	store, err := openStore(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// A soak queues more webhooks than one endpoint drains during the
	// load: wait as long as there is progress.
	var summary string
	for deadline := time.Now().Add(30 * time.Second); ; {
		done, s := crashQuiescent(t, store, orgID, l, rcv)
		if done {
			summary = s
			break
		}
		if s != summary {
			summary, deadline = s, time.Now().Add(30*time.Second)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the work did not complete after the kills, no progress for 30 s: %s", summary)
		}
		time.Sleep(200 * time.Millisecond)
	}
	crashCheck(t, store, db, orgID, l, rcv)
	t.Logf("FIGURES store=%s seed=%d kills=%d requests_sent=%d answered=%d 2xx=%d connection_errors=%d 5xx=%d retried_ops=%d deposits=%d withdrawals=%d settlements=%d lost=0; %s",
		storeKind(db), seed, kills, stats.sent.Load(), stats.answered.Load(), stats.ok.Load(), stats.connErrors.Load(), stats.serverErrors.Load(),
		stats.retriedOps.Load(), len(l.deposits), len(l.withdrawals), len(l.settled), summary)
	if n := stats.serverErrors.Load(); n > 0 {
		t.Errorf("%d answers were 5xx: a crash must never make payd answer 500 after a restart", n)
	}
}

// crashDepositFlow creates an H2H deposit, records the matching wallet
// payment in the sandbox, submits its transaction ID and maybe reads the
// deposit back.
func crashDepositFlow(c *crashClient, l *crashLedger, rng *mrand.Rand, w, i int) {
	mid := fmt.Sprintf("dep-%d-%d", w, i)
	amount := fmt.Sprintf("%d.%02d", 100+rng.IntN(5000), rng.IntN(100))
	res := c.do("POST", "/api/v1/deposits", h2h(kv{"merchant_id", strconv.Quote(mid)}, kv{"amount", strconv.Quote(amount)}), true)
	if res.status != 201 && res.status != 200 {
		c.failf("create deposit %s: %d %s", mid, res.status, res.raw)
		return
	}
	id := str(res.body, "id")
	recipient := str(res.body, "next_action", "recipient", "value")
	txID := fmt.Sprintf("CRASH%02dX%05d", w, i)
	l.mu.Lock()
	l.deposits[id] = crashDeposit{mid, amount, txID}
	l.mu.Unlock()

	pay := fmt.Sprintf(`{"channel":"bkash","transaction_id":%q,"payer_phone":"01712345678","recipient_phone":%q,"amount":%q,"status":"completed"}`, txID, recipient, amount)
	res = c.do("POST", "/api/sandbox/payments", pay, false)
	switch {
	case res.status == 201:
	case res.status == 409 && res.tries > 1 && str(res.body, "error", "code") == engine.CodeTransactionIDUsed:
		// recorded by a request whose answer was lost
	default:
		c.failf("sandbox payment %s: %d %s (try %d)", txID, res.status, res.raw, res.tries)
		return
	}
	l.mu.Lock()
	l.payments[txID] = true
	l.mu.Unlock()

	res = c.do("POST", "/api/v1/deposits/"+id+"/verify", fmt.Sprintf(`{"provider_transaction_id":%q}`, strings.ToLower(txID)), true)
	if res.status != 202 && res.status != 200 {
		c.failf("verify %s: %d %s", id, res.status, res.raw)
		return
	}
	l.mu.Lock()
	l.attempts[str(res.body, "attempt_id")] = id
	l.mu.Unlock()
	if s := str(res.body, "deposit_status"); s != "" {
		l.saw(id, s)
	}
	if rng.IntN(2) == 0 {
		res = c.do("GET", "/api/v1/deposits/"+id, "", true)
		if res.status != 200 || str(res.body, "id") != id {
			c.failf("read deposit %s: %d %s", id, res.status, res.raw)
			return
		}
		l.saw(id, str(res.body, "status"))
	}
}

// crashWithdrawalFlow creates a withdrawal (finding it by merchant_id when
// a retry says it exists), maybe settles it in the sandbox and reads it.
func crashWithdrawalFlow(c *crashClient, l *crashLedger, rng *mrand.Rand, w, i int) {
	mid := fmt.Sprintf("wd-%d-%d", w, i)
	amount := fmt.Sprintf("%d", 100+rng.IntN(900))
	account := fmt.Sprintf("0171%07d", rng.IntN(10_000_000))
	if rng.IntN(5) == 0 {
		account = "01712000000" // the sandbox fails payouts to accounts ending 000000
	}
	body := withdrawal(kv{"merchant_id", strconv.Quote(mid)}, kv{"amount", strconv.Quote(amount)}, kv{"phone", strconv.Quote(account)})
	res := c.do("POST", "/api/v1/withdraws", body, false)
	switch {
	case res.status == 201:
	case res.status == 409 && res.tries > 1 && str(res.body, "error", "code") == engine.CodeMerchantIDExists:
		// Created by a request whose answer was lost: find it.
		res = c.do("GET", "/api/v1/withdraws?merchant_id="+url.QueryEscape(mid), "", false)
		data, _ := res.body["data"].([]any)
		if res.status != 200 || len(data) != 1 {
			c.failf("find withdrawal %s after merchant_id_exists: %d %s", mid, res.status, res.raw)
			return
		}
		res.body, _ = data[0].(map[string]any)
	default:
		c.failf("create withdrawal %s: %d %s (try %d)", mid, res.status, res.raw, res.tries)
		return
	}
	id := str(res.body, "id")
	if str(res.body, "merchant_id") != mid || str(res.body, "amount") != amount+".00" {
		c.failf("withdrawal %s answered as %s", mid, res.raw)
		return
	}
	l.mu.Lock()
	l.withdrawals[id] = crashWithdrawal{mid, amount, account}
	l.mu.Unlock()
	l.saw(id, str(res.body, "status"))

	if rng.IntN(3) == 0 {
		outcome := []string{engine.PayoutSucceeded, engine.PayoutFailed}[rng.IntN(2)]
		res = c.do("POST", "/api/sandbox/withdraws/"+id+"/settle", fmt.Sprintf(`{"outcome":%q}`, outcome), false)
		switch {
		case res.status == 200:
			l.mu.Lock()
			l.settled[id] = outcome
			l.mu.Unlock()
		case res.status == 409 && str(res.body, "error", "code") == engine.CodeConflict:
			// The sandbox settled it the other way first (auto mode).
		default:
			c.failf("settle %s: %d %s", id, res.status, res.raw)
			return
		}
	}
	if rng.IntN(2) == 0 {
		res = c.do("GET", "/api/v1/withdraws/"+id, "", false)
		if res.status != 200 || str(res.body, "id") != id {
			c.failf("read withdrawal %s: %d %s", id, res.status, res.raw)
			return
		}
		l.saw(id, str(res.body, "status"))
	}
}

// crashRows is what the database holds for the organization.
type crashRows struct {
	journals []*engine.Journal
	events   []*engine.Event
	sums     map[string]decimal.Decimal
}

func readCrashRows(t *testing.T, store payd.Store, orgID string) crashRows {
	t.Helper()
	var r crashRows
	err := store.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		var err error
		if r.journals, err = tx.ListJournals(ctx, orgID); err != nil {
			return err
		}
		if r.sums, err = tx.AccountBalances(ctx, orgID); err != nil {
			return err
		}
		r.events, err = tx.ListEvents(ctx, engine.ListEventsParams{OrganizationID: orgID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// crashQuiescent reports whether every deposit and withdrawal is settled
// and every event was delivered.
func crashQuiescent(t *testing.T, store payd.Store, orgID string, l *crashLedger, rcv *paydtest.Receiver) (bool, string) {
	t.Helper()
	r := readCrashRows(t, store, orgID)
	kinds := map[string]int{}
	for _, j := range r.journals {
		kinds[j.Kind]++
	}
	delivered := map[string]bool{}
	for _, d := range rcv.Deliveries() {
		delivered[d.Header.Get("webhook-id")] = true
	}
	undelivered := 0
	for _, ev := range r.events {
		if !delivered[ev.ID] {
			undelivered++
		}
	}
	finished := kinds[engine.JournalWithdrawalSettle] + kinds[engine.JournalWithdrawalRelease]
	summary := fmt.Sprintf("%d/%d deposits credited, %d/%d withdrawals settled or released, %d events, %d undelivered, %d posts",
		kinds[engine.JournalDepositCredit], len(l.deposits), finished, len(l.withdrawals), len(r.events), undelivered, len(rcv.Deliveries()))
	return kinds[engine.JournalDepositCredit] >= len(l.deposits) && finished >= len(l.withdrawals) && undelivered == 0, summary
}

// crashCheck checks every promise against the database.
func crashCheck(t *testing.T, store payd.Store, db, orgID string, l *crashLedger, rcv *paydtest.Receiver) {
	t.Helper()
	ctx := context.Background()
	r := readCrashRows(t, store, orgID)

	// The ledger: balanced, nothing negative, nothing held at rest, and
	// each movement of each resource exactly once.
	total := decimal.Zero
	for account, v := range r.sums {
		total = total.Add(v)
		if (account == engine.AccountAvailable || account == engine.AccountHeld) && v.IsNegative() {
			t.Errorf("%s balance is negative: %s", account, v)
		}
	}
	if !total.IsZero() {
		t.Errorf("the ledger sums to %s, not zero", total)
	}
	if !r.sums[engine.AccountHeld].IsZero() {
		t.Errorf("%s still held at rest", r.sums[engine.AccountHeld])
	}
	perRef := map[string]map[string]int{}
	for _, j := range r.journals {
		if perRef[j.Kind] == nil {
			perRef[j.Kind] = map[string]int{}
		}
		perRef[j.Kind][j.Reference]++
		if j.Kind != engine.JournalAdjustment && perRef[j.Kind][j.Reference] > 1 {
			t.Errorf("%s written twice for %s", j.Kind, j.Reference)
		}
	}

	// Every acknowledged deposit is there, as created, credited once.
	for id, want := range l.deposits {
		var d *engine.Deposit
		var attempts []*engine.Attempt
		err := store.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			var err error
			if d, err = tx.GetDeposit(ctx, orgID, id); err != nil {
				return err
			}
			attempts, err = tx.ListAttempts(ctx, id)
			return err
		})
		if err != nil {
			t.Errorf("acknowledged deposit %s: %v", id, err)
			continue
		}
		if d.MerchantID != want.merchantID || !d.Amount.Equal(decimal.RequireFromString(want.amount)) {
			t.Errorf("deposit %s is %s %s, was created as %s %s", id, d.MerchantID, d.Amount, want.merchantID, want.amount)
		}
		if d.Status != engine.StatusSucceeded || d.ProviderTransactionID != want.txID {
			t.Errorf("deposit %s ended %s with %q, want succeeded with %s", id, d.Status, d.ProviderTransactionID, want.txID)
		}
		if len(attempts) != 1 || d.AttemptsUsed != 1 {
			t.Errorf("deposit %s has %d attempts (%d used), want 1: a retried verify must not queue another", id, len(attempts), d.AttemptsUsed)
		}
		if perRef[engine.JournalDepositCredit][id] != 1 {
			t.Errorf("deposit %s credited %d times", id, perRef[engine.JournalDepositCredit][id])
		}
		if s, ok := l.terminal[id]; ok && s != d.Status {
			t.Errorf("deposit %s was answered %s, is now %s", id, s, d.Status)
		}
	}
	for att, dep := range l.attempts {
		err := store.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			a, err := tx.GetAttempt(ctx, att)
			if err == nil && a.DepositID != dep {
				err = fmt.Errorf("belongs to %s", a.DepositID)
			}
			return err
		})
		if err != nil {
			t.Errorf("acknowledged attempt %s of %s: %v", att, dep, err)
		}
	}
	for txID := range l.payments {
		if _, err := sandbox.NewSQLStore(store).GetSandboxPayment(ctx, orgID, "bkash", txID); err != nil {
			t.Errorf("acknowledged sandbox payment %s: %v", txID, err)
		}
	}
	if n := len(perRef[engine.JournalDepositCredit]); n != len(l.deposits) {
		t.Errorf("%d deposits credited, %d acknowledged", n, len(l.deposits))
	}

	// Every acknowledged withdrawal is there, held once, paid out at most
	// once, and ended the way the payout book says.
	for id, want := range l.withdrawals {
		var w *engine.Withdrawal
		err := store.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			var err error
			w, err = tx.GetWithdrawal(ctx, orgID, id)
			return err
		})
		if err != nil {
			t.Errorf("acknowledged withdrawal %s: %v", id, err)
			continue
		}
		if w.MerchantID != want.merchantID || !w.Amount.Equal(decimal.RequireFromString(want.amount)) || w.Account != want.account {
			t.Errorf("withdrawal %s is %s %s %s, was created as %+v", id, w.MerchantID, w.Amount, w.Account, want)
		}
		po, _, err := sandbox.NewSQLStore(store).GetSandboxPayout(ctx, id)
		if err != nil {
			t.Errorf("withdrawal %s has no payout in the sandbox book: %v", id, err)
			continue
		}
		settles, releases := perRef[engine.JournalWithdrawalSettle][id], perRef[engine.JournalWithdrawalRelease][id]
		switch {
		case perRef[engine.JournalWithdrawalHold][id] != 1:
			t.Errorf("withdrawal %s held %d times", id, perRef[engine.JournalWithdrawalHold][id])
		case w.Status != po.Status:
			t.Errorf("withdrawal %s is %s, its payout %s", id, w.Status, po.Status)
		case w.Status == engine.WithdrawalSucceeded && (settles != 1 || releases != 0),
			w.Status == engine.WithdrawalFailed && (settles != 0 || releases != 1):
			t.Errorf("withdrawal %s (%s): %d settlements, %d releases", id, w.Status, settles, releases)
		case w.Status == engine.WithdrawalProcessing:
			t.Errorf("withdrawal %s still processing", id)
		}
		if s, ok := l.settled[id]; ok && s != w.Status {
			t.Errorf("withdrawal %s was settled %s (200), is %s", id, s, w.Status)
		}
		if s, ok := l.terminal[id]; ok && s != w.Status {
			t.Errorf("withdrawal %s was answered %s, is now %s", id, s, w.Status)
		}
	}
	if n := countSandboxPayouts(t, db); n != len(l.withdrawals) {
		t.Errorf("the sandbox payout book has %d rows for %d withdrawals", n, len(l.withdrawals))
	}
	if n := len(perRef[engine.JournalWithdrawalHold]); n != len(l.withdrawals) {
		t.Errorf("%d withdrawals held, %d acknowledged", n, len(l.withdrawals))
	}

	// Every event once in the outbox, and delivered at least once.
	delivered := map[string]bool{}
	for _, d := range rcv.Deliveries() {
		delivered[d.Header.Get("webhook-id")] = true
	}
	perResource := map[string]int{}
	for _, ev := range r.events {
		if !delivered[ev.ID] {
			t.Errorf("event %s (%s of %s) never delivered", ev.ID, ev.Type, ev.ResourceID)
		}
		if perResource[ev.Type+" "+ev.ResourceID]++; perResource[ev.Type+" "+ev.ResourceID] > 1 {
			t.Errorf("%s written twice for %s", ev.Type, ev.ResourceID)
		}
	}
	if want := 2*len(l.withdrawals) + len(l.deposits); len(r.events) != want {
		t.Errorf("%d events, want %d (one per deposit, two per withdrawal)", len(r.events), want)
	}
}

// countSandboxPayouts counts the rows of the sandbox payout book.
func countSandboxPayouts(t *testing.T, db string) int {
	t.Helper()
	ctx := context.Background()
	const q = `SELECT count(*) FROM sandbox_payouts`
	var n int
	if isPostgres(db) {
		conn, err := pgx.Connect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return n
}

func storeKind(db string) string {
	if isPostgres(db) {
		return "postgres"
	}
	return "sqlite"
}

// crashKillsDefault is PAYD_CRASH_KILLS, 10 when unset; a bad value panics.
func crashKillsDefault() int {
	n, err := envInt("PAYD_CRASH_KILLS", 10)
	if err != nil {
		panic(err)
	}
	return n
}
