// Command paydbench measures a payd over HTTP on loopback and, in the same
// run, the limits it is measured against: the store's bare transaction of
// the same statements, and a bare net/http handler that decodes and encodes
// the same JSON. It prints payd's figures as ratios to those, so results
// compare across machines.
//
// The verify scenario takes H2H deposits through to succeeded. By default
// (-await poll) each client then reads its deposit every -poll; with
// -await webhook it waits, as a merchant's backend does, for the
// deposit.succeeded webhook: paydbench runs a loopback receiver, registers
// it as the organization's endpoint while verify runs (payd started with
// --webhook-allow-private), checks each delivery's Standard Webhooks
// signature and wakes the client of that deposit.
//
// After the table it prints the CPU that payd and paydbench itself spent
// per operation, and the tool's CPU per request: the load tool shares the
// machine with payd, so its own cost is part of the figures. Beside them,
// the time payd's write transactions held a database connection per
// operation, read from payd's metrics (it runs with --metrics-addr): on
// SQLite, whose one writer is what saturates first, the ceiling of the
// rates' ratios.
//
//	go run ./cmd/paydbench                          # SQLite in a temp dir
//	go run ./cmd/paydbench -db postgres://...       # Postgres (needs PAYD_MASTER_KEY or makes one)
//	go run ./cmd/paydbench -scenarios verify -await webhook
//	go run ./cmd/paydbench -smoke                   # seconds-long check that it works
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// options of a run.
type options struct {
	payd      string        // payd binary; built from ./cmd/payd when empty
	db        string        // DSN; a temp SQLite file when empty
	clients   int           // concurrent clients
	duration  time.Duration // per scenario
	scenarios []string
	seed      int           // deposits to insert through the store before measuring
	journals  int           // journals to insert into the ledger before measuring
	growth    []int         // ledger growth: the scenarios at each of these journal counts
	lists     []int         // list growth: the list scenarios at each of these deposit counts
	half      bool          // also measure latency at half the peak throughput
	limits    bool          // also measure the bare store transaction and handler
	poll      time.Duration // verify: wait between reads of a deposit
	await     string        // verify: "poll" (read the deposit) or "webhook" (its deposit.succeeded)
	logLevel  string        // payd's --log-level
	signBare  bool          // the bare handler's clients sign their requests
	out       io.Writer
}

func main() {
	var o options
	var scenarios string
	smoke := flag.Bool("smoke", false, "run every scenario for a second with 4 clients: a check that the tool works, not a measurement")
	flag.StringVar(&o.payd, "payd", "", "payd binary to measure (default: build ./cmd/payd)")
	flag.StringVar(&o.db, "db", "", "database: SQLite path or postgres:// URL (default: a new SQLite file in a temp dir)")
	flag.IntVar(&o.clients, "clients", 32, "concurrent clients")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long each scenario runs")
	flag.StringVar(&scenarios, "scenarios", strings.Join(allScenarios, ","), "comma-separated scenarios to run")
	flag.IntVar(&o.seed, "seed-deposits", 0, "deposits to insert through the store before measuring (flat-cost runs: 10000, 1000000)")
	flag.IntVar(&o.journals, "seed-journals", 0, "journals of two entries to insert into the ledger before measuring (ledger growth: 5000, 500000)")
	growth := flag.String("ledger-growth", "", "comma-separated journal counts (e.g. 5000,500000): grow the ledger to each in turn and measure the scenarios at each, in one run")
	lists := flag.String("list-growth", "", "comma-separated deposit counts (e.g. 10000,1000000): seed deposits to each in turn and time GET /v1/deposits pages at each, in one run")
	flag.BoolVar(&o.half, "half", true, "also measure create, GET and withdrawal create latency at half of the peak throughput")
	flag.DurationVar(&o.poll, "poll", 2*time.Millisecond, "verify: how long a client waits between reads of its deposit")
	flag.StringVar(&o.await, "await", "poll", "verify: how a client learns its deposit succeeded: poll (read it every -poll) or webhook (a verified deposit.succeeded delivery to a loopback receiver; payd runs with --webhook-allow-private)")
	flag.StringVar(&o.logLevel, "log-level", "warn", "payd's --log-level: warn logs nothing per request; info adds the access log line of every request")
	flag.BoolVar(&o.signBare, "sign-bare", true, "the bare handler's clients sign each GET as payd's are signed, so the load tool's work is the same on both sides of the signed GET ratio")
	cpuProfile := flag.String("cpuprofile", "", "write the load tool's own CPU profile to this file (payd's: its --pprof-addr)")
	flag.BoolVar(&o.limits, "limits", true, "also measure the limits (the bare store transaction and the bare net/http handler) and print the ratios")
	flag.Parse()
	if addr := os.Getenv(serveBareEnv); addr != "" {
		serveBare(addr) // the baseline's own process
		return
	}
	o.scenarios = strings.Split(scenarios, ",")
	if err := parseGrowth(*growth, &o); err != nil {
		fmt.Fprintln(os.Stderr, "paydbench:", err)
		os.Exit(2)
	}
	var err error
	if o.lists, err = parseListGrowth(*lists); err != nil {
		fmt.Fprintln(os.Stderr, "paydbench:", err)
		os.Exit(2)
	}
	if *smoke {
		o.clients, o.duration, o.half = 4, time.Second, false
	}
	o.out = os.Stdout
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "paydbench:", err)
			os.Exit(2)
		}
	}
	err = run(context.Background(), o)
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "paydbench:", err)
		os.Exit(1)
	}
}

var allScenarios = []string{"redirect-create", "h2h-create", "h2h-get", "verify", "withdraw-create"}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "paydbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if o.payd == "" {
		o.payd = filepath.Join(dir, "payd")
		build := exec.Command("go", "build", "-o", o.payd, "./cmd/payd")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/payd (run from the repository root or pass -payd): %v\n%s", err, out)
		}
	}
	if o.db == "" {
		o.db = filepath.Join(dir, "bench.db")
	}
	if o.logLevel == "" {
		o.logLevel = "warn"
	}
	master := os.Getenv("PAYD_MASTER_KEY")
	if master == "" {
		key := make([]byte, 32)
		rand.Read(key)
		master = hex.EncodeToString(key)
	}
	env := append(os.Environ(), "PAYD_MASTER_KEY="+master)
	webhooks, err := awaitWebhook(o.await)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.out, "paydbench: %d clients, %s per scenario, db %s\n", o.clients, o.duration, redact(o.db))
	if webhooks {
		fmt.Fprintln(o.out, "verify clients learn of success from verified deposit.succeeded webhooks (-await webhook), not by reading")
	} else if o.poll != 2*time.Millisecond {
		fmt.Fprintf(o.out, "verify clients read their deposit every %s\n", o.poll)
	}
	fmt.Fprintf(o.out, "machine: %s\n\n", machine())

	if len(o.lists) > 0 {
		return measureListGrowth(ctx, o, env, dir, o.lists)
	}
	var hooks *receiver
	var extra []string
	var handled atomic.Int64 // webhook deliveries the receiver served
	if webhooks {
		if hooks, err = startReceiver(&handled); err != nil {
			return err
		}
		defer hooks.close()
		extra = append(extra, "--webhook-allow-private")
	}
	srv, err := startPayd(ctx, o.payd, o.db, env, dir, o.logLevel, extra...)
	if err != nil {
		return err
	}
	defer srv.stop()
	org, err := bootstrap(o.payd, o.db, env)
	if err != nil {
		return err
	}
	if o.seed > 0 {
		start := time.Now()
		if err := seedDeposits(ctx, o.db, org.id, o.seed); err != nil {
			return err
		}
		fmt.Fprintf(o.out, "seeded %d deposits through the store in %s\n\n", o.seed, time.Since(start).Round(time.Millisecond))
	}
	if o.journals > 0 {
		start := time.Now()
		if err := seedJournals(ctx, o.db, org.id, o.journals); err != nil {
			return fmt.Errorf("seed journals: %w", err)
		}
		fmt.Fprintf(o.out, "seeded %d journals in SQL in %s\n", o.journals, time.Since(start).Round(time.Millisecond))
		defer printLedgerSize(ctx, o, org.id)
		printLedgerSize(ctx, o, org.id)
	}
	c := newClient(srv.base, org, o.clients)
	defer c.conns.closeIdle()
	c.poll = o.poll
	c.paydPID = srv.pid
	c.writeBusy = srv.writeBusy
	c.hooks = hooks
	c.received = &handled
	if len(o.growth) > 0 {
		return measureLedgerGrowth(ctx, o, c, org.id, srv)
	}

	results := map[string]*result{}
	report := newReport(o.out)
	for _, name := range o.scenarios {
		sc, ok := scenarioByName[name]
		if !ok {
			return fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(allScenarios, ", "))
		}
		// The endpoint exists only while verify runs: other scenarios'
		// events (withdrawals') would add deliveries to their figures.
		subscribed := name == "verify" && hooks != nil
		if subscribed {
			if err := hooks.subscribe(o.payd, o.db, env, org.id); err != nil {
				return err
			}
		}
		res, err := measure(ctx, c, sc, o.clients, o.duration, 0)
		if subscribed {
			if err := hooks.unsubscribe(o.payd, o.db, env); err != nil {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results[name] = res
		report.row(name, res, srv.peakRSS())
		if o.half && (name == "h2h-create" || name == "h2h-get" || name == "withdraw-create") && res.throughput() > 0 {
			halfRes, err := measure(ctx, c, sc, o.clients, o.duration, res.throughput()/2)
			if err != nil {
				return err
			}
			report.row(name+" @ half", halfRes, srv.peakRSS())
		}
	}
	rss := srv.peakRSS()
	srv.stop()
	if _, ok := results["verify"]; ok {
		if hooks != nil {
			fmt.Fprintf(o.out, "\nverify, per deposit: %s\n", c.phases.describe("the deposit.succeeded webhook"))
			fmt.Fprintf(o.out, "webhooks received: %s\n", hooks)
		} else {
			fmt.Fprintf(o.out, "\nverify, per deposit: %s\n", c.phases.describe("succeeded"))
		}
	}
	printCPU(o.out, o.scenarios, results)
	if !o.limits {
		fmt.Fprintf(o.out, "\npayd peak RSS: %.1f MiB\n", float64(rss)/(1<<20))
		if r, ok := results["verify"]; ok {
			fmt.Fprintf(o.out, "%-44s %.0f deposits/s\n", "verify to succeeded", r.throughput())
		}
		printSameRunRatios(o.out, results, !isPostgres(o.db))
		return nil
	}

	// The limits payd is measured against, with payd stopped.
	raw, err := measureStore(ctx, o.db, org.id, o.clients, o.duration)
	if err != nil {
		return fmt.Errorf("store limit: %w", err)
	}
	report.row("store: bare 3-statement tx", raw, 0)
	bareRes, err := measureBareHTTP(ctx, dir, o.clients, o.duration, o.signBare)
	if err != nil {
		return fmt.Errorf("bare handler: %w", err)
	}
	report.row("net/http: bare JSON handler", bareRes, 0)

	fmt.Fprintf(o.out, "\npayd peak RSS: %.1f MiB\n", float64(rss)/(1<<20))
	ratio := func(label, a string, b *result) {
		if r, ok := results[a]; ok && b.throughput() > 0 {
			fmt.Fprintf(o.out, "%-44s %.2fx\n", label, r.throughput()/b.throughput())
		}
	}
	ratio("signed H2H create / bare store transaction", "h2h-create", raw)
	ratio("redirect create / bare store transaction", "redirect-create", raw)
	ratio("signed GET / bare net/http JSON handler", "h2h-get", bareRes)
	// The same ratio from CPU per GET (server and load tool), which the
	// other load on a shared machine moves less than it moves throughput.
	if r, ok := results["h2h-get"]; ok && r.ops > 0 && bareRes.ops > 0 && r.cpu.paydKnown && bareRes.cpu.paydKnown {
		per := func(r *result) time.Duration { return (r.cpu.payd + r.cpu.tool) / time.Duration(r.ops) }
		fmt.Fprintf(o.out, "%-44s %.2fx (bare handler %s + paydbench %s per GET)\n", "  by CPU per GET", float64(per(bareRes))/float64(per(r)),
			micros(bareRes.cpu.payd/time.Duration(bareRes.ops)), micros(bareRes.cpu.tool/time.Duration(bareRes.ops)))
	}
	if r, ok := results["verify"]; ok {
		fmt.Fprintf(o.out, "%-44s %.0f deposits/s\n", "verify to succeeded", r.throughput())
	}
	// A verified deposit's four writes against one durable transaction.
	ratio("verify to succeeded / bare store transaction", "verify", raw)
	printSameRunRatios(o.out, results, !isPostgres(o.db))
	return nil
}

// printSameRunRatios prints the rates of the other money operations as
// ratios to the signed H2H create of the same run. oneWriter: the store
// writes one transaction at a time (SQLite).
func printSameRunRatios(out io.Writer, results map[string]*result, oneWriter bool) {
	create, ok := results["h2h-create"]
	if !ok || create.throughput() <= 0 {
		return
	}
	for _, r := range []struct{ label, name string }{
		{"verify to succeeded / signed H2H create", "verify"},
		{"withdrawal create / signed H2H create", "withdraw-create"},
	} {
		res, ok := results[r.name]
		if !ok {
			continue
		}
		fmt.Fprintf(out, "%-44s %.2fx\n", r.label, res.throughput()/create.throughput())
		// The same ratio from the CPU payd and paydbench spent per
		// operation: the rate ratio's ceiling when the machine's CPUs
		// saturate, as they do when paydbench, payd and SQLite share them.
		// A Postgres server's own CPU, which this leaves out, shares them
		// too.
		if res.ops > 0 && create.ops > 0 && res.cpu.paydKnown && create.cpu.paydKnown {
			per := func(r *result) time.Duration { return (r.cpu.payd + r.cpu.tool) / time.Duration(r.ops) }
			fmt.Fprintf(out, "%-44s %.2fx (%s against %s per create)\n", "  by CPU per operation",
				float64(per(create))/float64(per(res)), micros(per(res)), micros(per(create)))
		}
		// The same ratio from the time write transactions held the one
		// writer per operation: the ceiling of the rate ratio once the
		// writer is saturated. (Postgres's connections write in parallel
		// and hold their transactions through row-lock waits, so there
		// the time per operation bounds nothing.)
		if oneWriter && res.ops > 0 && create.ops > 0 && res.cpu.writesKnown && create.cpu.writesKnown && res.cpu.writes > 0 {
			per := func(r *result) time.Duration { return r.cpu.writes / time.Duration(r.ops) }
			fmt.Fprintf(out, "%-44s %.2fx (%s against %s per create)\n", "  by write time per operation",
				float64(per(create))/float64(per(res)), micros(per(res)), micros(per(create)))
		}
	}
}

// measure runs sc with n clients for d; with rate > 0 the clients together
// are paced to that many operations per second (open loop), so latency is
// measured below saturation.
func measure(ctx context.Context, c *client, sc scenario, n int, d time.Duration, rate float64) (*result, error) {
	if sc.prepare != nil {
		if err := sc.prepare(ctx, c, n); err != nil {
			return nil, err
		}
	}
	meter := cpuMeter{paydPID: c.paydPID, requests: c.handled, writeBusy: c.writeBusy}
	meter.start()
	res, err := drive(ctx, n, d, rate, func(ctx context.Context, worker, i int) error { return sc.op(ctx, c, worker, i) })
	if res != nil {
		res.cpu = meter.stop()
	}
	return res, err
}

// result is what one measured run saw.
type result struct {
	ops       int
	errors    int
	firstErr  error
	elapsed   time.Duration
	latencies []time.Duration
	cpu       cpuUse // set by measure
}

func (r *result) throughput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.ops) / r.elapsed.Seconds()
}

func (r *result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(p * float64(len(r.latencies)-1))
	return r.latencies[i]
}

// drive calls op from n goroutines until d passes and collects latencies.
func drive(ctx context.Context, n int, d time.Duration, rate float64, op func(ctx context.Context, worker, i int) error) (*result, error) {
	type part struct {
		ops, errs int
		err       error
		lat       []time.Duration
	}
	parts := make([]part, n)
	deadline := time.Now().Add(d)
	start := time.Now()
	done := make(chan struct{})
	var tick <-chan time.Time
	if rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer t.Stop()
		tick = t.C
	}
	for w := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			p := &parts[w]
			for i := 0; time.Now().Before(deadline); i++ {
				if tick != nil {
					select {
					case <-tick:
					case <-time.After(time.Until(deadline)):
						return
					}
				}
				t0 := time.Now()
				err := op(ctx, w, i)
				p.lat = append(p.lat, time.Since(t0))
				if err != nil {
					p.errs++
					if p.err == nil {
						p.err = err
					}
					continue
				}
				p.ops++
			}
		}()
	}
	for range n {
		<-done
	}
	res := &result{elapsed: time.Since(start)}
	for _, p := range parts {
		res.ops += p.ops
		res.errors += p.errs
		res.latencies = append(res.latencies, p.lat...)
		if res.firstErr == nil {
			res.firstErr = p.err
		}
	}
	sort.Slice(res.latencies, func(i, j int) bool { return res.latencies[i] < res.latencies[j] })
	if res.ops == 0 && res.firstErr != nil {
		return nil, res.firstErr
	}
	return res, nil
}

// report prints rows as they come, in fixed-width columns.
type report struct {
	out    io.Writer
	header bool
}

var reportWidths = []int{30, 8, 9, 9, 9, 8, 9}

func newReport(out io.Writer) *report { return &report{out: out} }

func (r *report) row(name string, res *result, rss int64) {
	rssText := "-"
	if rss > 0 {
		rssText = fmt.Sprintf("%.1f MiB", float64(rss)/(1<<20))
	}
	errText := fmt.Sprint(res.errors)
	if res.firstErr != nil {
		errText += " (" + truncate(res.firstErr.Error(), 60) + ")"
	}
	if !r.header {
		r.print([]string{"scenario", "ops/s", "p50", "p99", "max", "peak RSS", "errors"})
		r.header = true
	}
	r.print([]string{name, fmt.Sprintf("%.0f", res.throughput()),
		ms(res.percentile(0.50)), ms(res.percentile(0.99)), ms(res.percentile(1)), rssText, errText})
}

func (r *report) print(cells []string) {
	for i, cell := range cells {
		fmt.Fprintf(r.out, "%-*s ", reportWidths[i], cell)
	}
	fmt.Fprintln(r.out)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// micros is a CPU time per operation, to the microsecond: in milliseconds
// to two places, a signed GET's 80-110 µs would read as 0.08-0.11.
func micros(d time.Duration) string {
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func redact(dsn string) string {
	if at := strings.LastIndex(dsn, "@"); at > 0 && strings.HasPrefix(dsn, "postgres") {
		return dsn[:strings.Index(dsn, "://")+3] + "***" + dsn[at:]
	}
	return dsn
}

// machine describes where the run happened.
func machine() string {
	cpu := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", cpu, numCPU())
}

// freePort asks the kernel for a free loopback port.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHTTP waits until url answers at all.
func waitHTTP(url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer within %s", url, within)
}
