package main

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/storage/postgres"
)

// pgBinDir holds the PostgreSQL 15 binaries the failover drill builds its
// clusters with (Debian's and Ubuntu's place for them).
const pgBinDir = "/usr/lib/postgresql/15/bin"

// pgRunner runs PostgreSQL's binaries as a user initdb accepts: this one,
// or postgres (through runuser) when this is root.
type pgRunner struct {
	t   *testing.T
	uid int // the owner to give the clusters' directory; -1: this user
}

func newPGRunner(t *testing.T) *pgRunner {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pgBinDir, "initdb")); err != nil {
		t.Skipf("failover drill skipped: no PostgreSQL 15 binaries in %s", pgBinDir)
	}
	if os.Geteuid() != 0 {
		return &pgRunner{t: t, uid: -1}
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skip("failover drill skipped: running as root (initdb refuses root) and there is no postgres user to run it as")
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		t.Skip("failover drill skipped: running as root (initdb refuses root) and there is no runuser to run it as postgres")
	}
	uid, _ := strconv.Atoi(u.Uid)
	return &pgRunner{t: t, uid: uid}
}

func (r *pgRunner) command(name string, args ...string) *exec.Cmd {
	bin := filepath.Join(pgBinDir, name)
	if r.uid >= 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

// run runs a binary to its end, failing the test if it fails.
func (r *pgRunner) run(name string, args ...string) {
	r.t.Helper()
	if out, err := r.command(name, args...).CombinedOutput(); err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func appendConf(t *testing.T, dataDir string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// pgPair is a primary and its synchronous streaming standby, throwaway
// clusters in a directory of their own.
type pgPair struct {
	dir                      string
	primary, standby         string // data directories
	primaryPort, standbyPort int
}

// startPGPair builds the pair as an operator would: initdb, a primary
// that waits for one synchronous standby, pg_basebackup -R for the
// standby. It stops both (immediately) and removes them when the test ends.
func startPGPair(t *testing.T, r *pgRunner) *pgPair {
	t.Helper()
	dir, err := os.MkdirTemp("", "payd-failover-")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgPair{dir: dir, primary: filepath.Join(dir, "primary"), standby: filepath.Join(dir, "standby"),
		primaryPort: freePort(t), standbyPort: freePort(t)}
	if r.uid >= 0 {
		if err := os.Chown(dir, r.uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, d := range []string{p.primary, p.standby} {
			_ = r.command("pg_ctl", "-D", d, "-m", "immediate", "stop").Run()
		}
		os.RemoveAll(dir)
	})
	r.run("initdb", "-D", p.primary, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	appendConf(t, p.primary,
		"listen_addresses = '127.0.0.1'",
		fmt.Sprintf("port = %d", p.primaryPort),
		fmt.Sprintf("unix_socket_directories = '%s'", dir),
		"wal_level = replica", "max_wal_senders = 4", "max_connections = 100",
		// Every commit waits for the standby to have it on disk: an
		// answered change survives the primary.
		"synchronous_standby_names = '*'")
	r.run("pg_ctl", "-D", p.primary, "-l", filepath.Join(dir, "primary.log"), "-w", "start")
	r.run("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(p.primaryPort), "-U", "postgres",
		"-D", p.standby, "-R", "-X", "stream", "--no-sync")
	// Once promoted it is alone: it must not wait for a standby of its own.
	appendConf(t, p.standby, fmt.Sprintf("port = %d", p.standbyPort), "synchronous_standby_names = ''")
	r.run("pg_ctl", "-D", p.standby, "-l", filepath.Join(dir, "standby.log"), "-w", "start")

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, p.url(p.primaryPort, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the standby never became synchronous")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE payd`); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *pgPair) url(port int, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, db)
}

// multiHostURL is what payd is given: both servers, the writable one
// chosen at each connection.
func (p *pgPair) multiHostURL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/payd?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		p.primaryPort, p.standbyPort)
}

// TestFailoverDrill runs two payd serve processes on a primary and its
// synchronous standby (the multi-host URL) under a mixed load, kills the
// primary hard mid-load (pg_ctl stop -m immediate), promotes the standby
// two seconds later, and checks: nothing acknowledged lost, nothing done
// twice, no 500 (every answer of the outage a 503 with Retry-After), the
// ledger verified, every webhook delivered. It prints a FIGURES line.
func TestFailoverDrill(t *testing.T) {
	if testing.Short() {
		t.Skip("failover drill skipped in -short mode")
	}
	r := newPGRunner(t)
	bin := buildPayd(t)
	pair := startPGPair(t, r)
	db := pair.multiHostURL()

	env := paydEnv(false)
	paydAdmin(t, bin, db, env, "init")
	org := paydAdmin(t, bin, db, env, "org", "create", "--name", "Failover", "--h2h", "--withdrawals", "--deposit-fee-percent", "1", "--withdraw-commission-percent", "0.5")
	orgID := str(org, "organization_id")
	for i := range 3 {
		paydAdmin(t, bin, db, env, "wallet", "add", "--org", orgID, "--channel", "bkash", "--operation", "cash_out", "--phone", fmt.Sprintf("0181200000%d", i))
	}
	paydAdmin(t, bin, db, env, "balance", "adjust", "--org", orgID, "--amount", "10000000", "--reason", "float")
	rcv := paydtest.NewReceiver(t, nil)
	paydAdmin(t, bin, db, env, "webhook", "add", "--org", orgID, "--url", rcv.URL)

	stats := &crashStats{}
	var clients []*crashClient
	var instances []*instance
	for range 2 {
		inst := startInstance(t, bin, db, env)
		c := &crashClient{key: str(org, "api_key"), secret: str(org, "signing_secret"), stats: stats, failf: t.Errorf}
		c.base.Store(&inst.base)
		clients, instances = append(clients, c), append(instances, inst)
	}
	l := &crashLedger{
		deposits: map[string]crashDeposit{}, payments: map[string]bool{}, withdrawals: map[string]crashWithdrawal{},
		settled: map[string]string{}, terminal: map[string]string{}, attempts: map[string]string{},
	}

	// The load: deposit creates and verifies, withdrawals and settlements,
	// reads; each worker on one instance, as a load balancer would spread
	// them.
	var stop atomic.Bool
	var wg sync.WaitGroup
	seed := uint64(time.Now().UnixNano())
	for w := range 6 {
		c := clients[w%len(clients)]
		rng := mrand.New(mrand.NewPCG(seed, uint64(w)+1))
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				switch n := rng.IntN(10); {
				case n < 5:
					crashDepositFlow(c, l, rng, w, i)
				case n < 9:
					crashWithdrawalFlow(c, l, rng, w, i)
				default:
					if res := c.do("GET", "/api/v1/balance", "", false); res.status != 200 {
						t.Errorf("balance: %d %s", res.status, res.raw)
					}
				}
			}
		})
	}
	for deadline := time.Now().Add(30 * time.Second); stats.ok.Load() < 50; {
		if time.Now().After(deadline) || t.Failed() {
			stop.Store(true)
			wg.Wait()
			t.Fatalf("the load did not start: %d 2xx", stats.ok.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	// The primary dies hard; two seconds later the standby is promoted.
	atKill := struct{ sent, unavailable, connErrors int64 }{stats.sent.Load(), stats.unavailable.Load(), stats.connErrors.Load()}
	killed := time.Now()
	r.run("pg_ctl", "-D", pair.primary, "-m", "immediate", "stop")
	time.Sleep(2 * time.Second)
	promoting := time.Now()
	r.run("pg_ctl", "-D", pair.standby, "-w", "promote")
	promoted := time.Now()
	stats.watchFrom.Store(promoted.UnixNano())
	for deadline := time.Now().Add(30 * time.Second); stats.writeBack.Load() == 0; {
		if time.Now().After(deadline) {
			stop.Store(true)
			wg.Wait()
			t.Fatal("no write succeeded within 30 s of the promotion")
		}
		time.Sleep(5 * time.Millisecond)
	}
	writeBack := time.Unix(0, stats.writeBack.Load())
	during := struct{ sent, unavailable, connErrors int64 }{stats.sent.Load() - atKill.sent,
		stats.unavailable.Load() - atKill.unavailable, stats.connErrors.Load() - atKill.connErrors}
	time.Sleep(1500 * time.Millisecond) // load on the new primary
	stop.Store(true)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	store, err := postgres.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
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
			t.Fatalf("the work did not complete after the failover, no progress for 30 s: %s", summary)
		}
		time.Sleep(200 * time.Millisecond)
	}
	crashCheck(t, store, db, orgID, l, rcv)
	if v := paydAdmin(t, bin, db, env, "ledger", "verify"); v["ok"] != true {
		t.Errorf("ledger verify: %v", v)
	}
	if n := stats.internal.Load(); n > 0 {
		t.Errorf("%d answers were 500: an outage of the database must be answered 503", n)
	}
	if n := stats.noRetryAfter.Load(); n > 0 {
		t.Errorf("%d answers were 503 without Retry-After", n)
	}
	if during.unavailable == 0 {
		t.Error("no request was answered 503 during the outage: the drill did not catch one")
	}
	// The workers say the outage started and ended once each, not once per
	// failed attempt.
	for i, inst := range instances {
		logs := inst.logText()
		started := strings.Count(logs, `"msg":"database unavailable: background work paused until it answers"`)
		ended := strings.Count(logs, `"msg":"database available again: background work resumed"`)
		if started > 1 || ended != started {
			t.Errorf("instance %d logged the outage's start %d times and its end %d times, want once each", i, started, ended)
		}
		if n := strings.Count(logs, `"msg":"background work failed"`); n > 0 {
			t.Errorf("instance %d logged %d background errors for the outage", i, n)
		}
	}
	t.Logf("FIGURES failover drill: requests=%d 2xx=%d 500=%d during_outage: requests=%d 503=%d connection_errors=%d; "+
		"primary killed, standby promoted after %.1fs (promote took %.2fs), writes back %.2fs after the promotion, %.2fs after the kill; "+
		"deposits=%d withdrawals=%d settlements=%d lost=0 doubled=0 ledger=verified; %s",
		stats.sent.Load(), stats.ok.Load(), stats.internal.Load(), during.sent, during.unavailable, during.connErrors,
		promoting.Sub(killed).Seconds(), promoted.Sub(promoting).Seconds(), writeBack.Sub(promoted).Seconds(), writeBack.Sub(killed).Seconds(),
		len(l.deposits), len(l.withdrawals), len(l.settled), summary)
}
