package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport"
	"github.com/payd-engine/payd/transport/console"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("payd serve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: payd serve [flags]

Runs the HTTP server. On its first start on a SQLite path it creates the
database and its master key file (--db + ".key"). It refuses to start with
a master key other than the one that sealed the database's secrets, and
while another payd serve runs on the same SQLite file (a SQLite database
belongs to one process; run several instances on Postgres).

flags:
`)
		fs.PrintDefaults()
	}
	var sf storeFlags
	sf.register(fs)
	var ev envDefaults
	addr := fs.String("addr", env("PAYD_ADDR", "127.0.0.1:8080"), "address to listen on (env PAYD_ADDR)")
	publicURL := fs.String("public-url", env("PAYD_PUBLIC_URL", ""), "URL at which payers reach this server, for checkout links (a path in it, e.g. https://shop.example/payd, is where a reverse proxy that strips it serves payd: every link payd writes starts with it); an https one also makes the console's cookies Secure whatever a request says (default http://<addr>) (env PAYD_PUBLIC_URL)")
	var proxies proxiesFlag
	ev.proxies(&proxies, "PAYD_TRUSTED_PROXY")
	fs.Var(&proxies, "trusted-proxy", "comma-separated addresses and CIDR prefixes of the reverse proxies in front of payd, e.g. 127.0.0.1 or 10.0.0.0/8: from these peers the console believes X-Forwarded-For (the client is its right-most address that is not a trusted proxy's) and X-Forwarded-Proto; none by default (env PAYD_TRUSTED_PROXY)")
	apiPrefix := fs.String("api-prefix", env("PAYD_API_PREFIX", "/api"), "path prefix of the API (env PAYD_API_PREFIX)")
	logLevel := fs.String("log-level", env("PAYD_LOG_LEVEL", "info"), "debug, info, warn or error (env PAYD_LOG_LEVEL)")
	logFormat := fs.String("log-format", env("PAYD_LOG_FORMAT", "text"), "text or json (env PAYD_LOG_FORMAT)")
	provider := fs.String("provider", env("PAYD_PROVIDER", providerSandbox), "sandbox (test mode: no money moves) or smsinbox (real wallets proven by their phones' SMS; payouts by an operator) (env PAYD_PROVIDER)")
	bkashAPI := fs.Bool("bkash-api", os.Getenv("PAYD_BKASH_API") != "false", "serve the bkash and bkash_merchant methods of organizations connected with payd admin bkash connect through bKash's tokenized checkout API; the rest stays on --provider (env PAYD_BKASH_API=false turns it off)")
	smsSilence := fs.Duration("sms-silence", ev.duration("PAYD_SMS_SILENCE", 5*time.Minute), "smsinbox: how long a device may go without reporting before its wallets leave the recipient pool (env PAYD_SMS_SILENCE)")
	smsGrace := fs.Duration("sms-grace", ev.duration("PAYD_SMS_GRACE", smsinbox.DefaultNotFoundGrace), "smsinbox: how long a submitted transaction ID waits for the SMS that proves it before its attempt fails transaction_not_found (env PAYD_SMS_GRACE)")
	var sb sandbox.Config
	fs.StringVar(&sb.PayoutMode, "sandbox-payouts", env("PAYD_SANDBOX_PAYOUTS", "auto"), "sandbox payouts settle by themselves (auto) or by POST /api/sandbox/withdraws/{id}/settle (manual) (env PAYD_SANDBOX_PAYOUTS)")
	fs.DurationVar(&sb.PayoutDelay, "sandbox-payout-delay", ev.duration("PAYD_SANDBOX_PAYOUT_DELAY", 2*time.Second), "how long an auto sandbox payout stays pending (env PAYD_SANDBOX_PAYOUT_DELAY)")
	unavailable := fs.String("sandbox-unavailable-methods", env("PAYD_SANDBOX_UNAVAILABLE_METHODS", ""), "comma-separated payout methods the sandbox refuses with 503 (env PAYD_SANDBOX_UNAVAILABLE_METHODS)")
	perEndpoint := fs.Int("webhook-per-endpoint", ev.int("PAYD_WEBHOOK_PER_ENDPOINT", engine.DefaultWebhookPerEndpoint), "how many webhook posts may be in flight to one endpoint at once; its next deliveries are posted as each slot frees (env PAYD_WEBHOOK_PER_ENDPOINT)")
	allowPrivate := fs.Bool("webhook-allow-private", ev.bool("PAYD_WEBHOOK_ALLOW_PRIVATE"), "let webhooks reach loopback, private and link-local addresses, for local receivers (env PAYD_WEBHOOK_ALLOW_PRIVATE)")
	leaseDuration := fs.Duration("lease-duration", ev.duration("PAYD_LEASE_DURATION", time.Minute), "how long a process owns claimed background work; a killed process's work is taken over after it (env PAYD_LEASE_DURATION)")
	rl := transport.DefaultRateLimits
	fs.Float64Var(&rl.Default.PerSecond, "rate-limit", ev.float("PAYD_RATE_LIMIT", rl.Default.PerSecond), "requests per second per API key, bursts of twice that; 0 disables (env PAYD_RATE_LIMIT)")
	fs.Float64Var(&rl.Verify.PerSecond, "rate-limit-verify", ev.float("PAYD_RATE_LIMIT_VERIFY", rl.Verify.PerSecond), "transaction-ID submissions per second per API key; 0 disables (env PAYD_RATE_LIMIT_VERIFY)")
	fs.Float64Var(&rl.Withdraw.PerSecond, "rate-limit-withdraw", ev.float("PAYD_RATE_LIMIT_WITHDRAW", rl.Withdraw.PerSecond), "withdrawal creations per second per API key; 0 disables (env PAYD_RATE_LIMIT_WITHDRAW)")
	fs.Float64Var(&rl.Device.PerSecond, "rate-limit-device", ev.float("PAYD_RATE_LIMIT_DEVICE", rl.Device.PerSecond), "smsinbox: SMS and heartbeat posts per second per device, bursts of 60 times that; 0 disables (env PAYD_RATE_LIMIT_DEVICE)")
	workers := fs.Int("worker-concurrency", ev.int("PAYD_WORKER_CONCURRENCY", 8), "verification attempts and payouts worked on at once per process (env PAYD_WORKER_CONCURRENCY)")
	createBatch := fs.Int("create-batch", ev.int("PAYD_CREATE_BATCH", engine.DefaultCreateBatch), "how many concurrent deposit creates, transaction-ID submissions, verdicts, withdrawal creates, payout steps and sandbox writes (on Postgres each kind apart) may share one database transaction and its commit (group commit); 1 commits each alone (env PAYD_CREATE_BATCH)")
	payoutYield := fs.Duration("payout-yield", ev.duration("PAYD_PAYOUT_YIELD", engine.DefaultPayoutYield), "how long a payout step waits at most, before it calls the provider, while this process's API writes (deposit and withdrawal creates, transaction-ID submissions) are in flight, so that payouts take the machine when the API leaves it; 0 never waits (env PAYD_PAYOUT_YIELD)")
	keyCacheTTL := fs.Duration("api-key-cache-ttl", ev.duration("PAYD_API_KEY_CACHE_TTL", engine.DefaultAPIKeyCacheTTL), "how long an authenticated API key is used without reading it again; bounds how long a key revoked or rotated by another process (payd admin, another instance) still works here; 0 reads the key on every request (env PAYD_API_KEY_CACHE_TTL)")
	pprofAddr := fs.String("pprof-addr", env("PAYD_PPROF_ADDR", ""), "serve net/http/pprof on this address (e.g. 127.0.0.1:6060), apart from the API; off when empty (env PAYD_PPROF_ADDR)")
	metricsAddr := fs.String("metrics-addr", env("PAYD_METRICS_ADDR", ""), "serve the operations endpoints /metrics (Prometheus), /healthz and /readyz on this address (e.g. 127.0.0.1:9090), apart from the API; off when empty (env PAYD_METRICS_ADDR)")
	ledgerEvery := fs.Duration("ledger-check-interval", ev.duration("PAYD_LEDGER_CHECK_INTERVAL", payd.DefaultLedgerCheckInterval), "how often to verify the ledger in the background, as payd admin ledger verify does, for the payd_ledger_check_* metrics; it reads every ledger entry; 0 disables (env PAYD_LEDGER_CHECK_INTERVAL)")

	consoleAddr := fs.String("console-addr", env("PAYD_CONSOLE_ADDR", ""), "serve the operator console (/console) on this address instead of beside the API, e.g. 127.0.0.1:8081 (env PAYD_CONSOLE_ADDR)")
	shutdownTimeout := fs.Duration("shutdown-timeout", ev.duration("PAYD_SHUTDOWN_TIMEOUT", 20*time.Second), "how long to drain in-flight requests on SIGINT/SIGTERM (env PAYD_SHUTDOWN_TIMEOUT)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if err := ev.err(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, r := range []*transport.Rate{&rl.Default, &rl.Verify, &rl.Withdraw} {
		r.Burst = int(math.Ceil(2 * r.PerSecond))
	}
	rl.Device.Burst = int(math.Ceil(60 * rl.Device.PerSecond))
	if *unavailable != "" {
		sb.UnavailablePayoutMethods = strings.Split(*unavailable, ",")
	}
	logger, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	if !isPostgres(sf.db) {
		unlock, err := lockDatabase(sf.db)
		if err != nil {
			return err
		}
		defer unlock()
	}
	db, err := sf.openDatabase(ctx, true)
	if err != nil {
		return err
	}
	defer db.store.Close()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *publicURL == "" {
		*publicURL = defaultPublicURL(ln.Addr().(*net.TCPAddr))
	}
	var p engine.Provider
	switch *provider {
	case providerSandbox:
		if p, err = sandbox.New(sb); err != nil {
			return err
		}
	case providerSMSInbox:
		p, err = smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(db.store), Silence: *smsSilence, NotFoundGrace: *smsGrace,
			Logger: logger, Keyring: db.keyring})
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("--provider must be %s or %s, got %q", providerSandbox, providerSMSInbox, *provider)
	}
	if *bkashAPI {
		// Organizations connected with payd admin bkash connect pay their
		// bkash methods through bKash's API; the rest stays on p.
		if p, err = bkash.New(bkash.Config{Store: db.store, Keyring: db.keyring, Fallback: p, Logger: logger}); err != nil {
			return err
		}
	}
	a, err := payd.New(payd.Config{
		Store: db.store, Keyring: db.keyring, Provider: p, PublicURL: *publicURL, APIPrefix: *apiPrefix, Logger: logger,
		Webhooks: transport.NewWebhookClient(*allowPrivate), RateLimits: rl, LedgerCheckInterval: cacheTTL(*ledgerEvery),
		ConsoleApart: *consoleAddr != "", TrustedProxies: proxies.set,
		Engine: engine.Config{
			LeaseDuration: *leaseDuration, WorkerConcurrency: *workers, APIKeyCacheTTL: cacheTTL(*keyCacheTTL),
			PayoutYield: cacheTTL(*payoutYield), CreateBatch: *createBatch, WebhookPerEndpoint: *perEndpoint,
		},
	})
	if err != nil {
		return err
	}
	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr, logger)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	var opsLn net.Listener
	if *metricsAddr != "" {
		if opsLn, err = net.Listen("tcp", *metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer opsLn.Close()
	}
	var consoleLn net.Listener
	if *consoleAddr != "" {
		if consoleLn, err = net.Listen("tcp", *consoleAddr); err != nil {
			return fmt.Errorf("--console-addr: %w", err)
		}
		defer consoleLn.Close()
	}
	next, err := nextStep(ctx, db.store, &sf)
	if err != nil {
		return err
	}
	logger.Info("payd listening", "addr", ln.Addr().String(), "api", *publicURL+*apiPrefix, "mode", modeOf(*provider),
		"db", redactDSN(sf.db), "db_created", db.created, "master_key", db.key, "master_key_created", db.keyCreated,
		"key_check", map[bool]string{true: "recorded", false: "verified"}[db.checkRecorded], "next", next)
	m := payd.NewMain(a, logger)
	m.ShutdownTimeout = *shutdownTimeout
	m.Run(ln)
	if opsLn != nil {
		m.RunOps(opsLn)
		logger.Info("operations listening", "addr", opsLn.Addr().String(), "endpoints", "/metrics /healthz /readyz")
	}
	if consoleLn != nil {
		m.RunConsole(consoleLn)
		logger.Info("console listening", "addr", consoleLn.Addr().String(), "path", "/console/")
	}
	var serveErr error
	select {
	case serveErr = <-m.Served():
		m.Stop()
	case <-ctx.Done():
		logger.Info("shutting down: draining in-flight requests", "timeout", *shutdownTimeout)
		serveErr = m.Close()
	}
	logger.Info("stopped")
	return serveErr
}

// The providers --provider names.
const (
	providerSandbox  = "sandbox"
	providerSMSInbox = "smsinbox"
)

// proxiesFlag is --trusted-proxy.
type proxiesFlag struct {
	text string
	set  console.TrustedProxies
}

func (p *proxiesFlag) String() string { return p.text }

func (p *proxiesFlag) Set(s string) error {
	set, err := console.ParseTrustedProxies(s)
	if err != nil {
		return err
	}
	p.text, p.set = s, set
	return nil
}

// modeOf says, on the startup line, whether money moves.
func modeOf(provider string) string {
	if provider == providerSMSInbox {
		return "smsinbox: real money, wallets proven by their phones' SMS"
	}
	return "sandbox: test mode, no money moves"
}

// nextStep is the command the startup line suggests: creating the first
// organization, or the list of operator commands.
func nextStep(ctx context.Context, store payd.Store, sf *storeFlags) (string, error) {
	var orgs []*engine.Organization
	err := store.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		orgs, err = tx.ListOrganizations(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	flags := sf.hint()
	if len(orgs) == 0 {
		return "create an organization: payd admin org create" + flags + ` --name "My Shop" --h2h`, nil
	}
	return "payd admin lists the operator commands, e.g. payd admin org list" + flags, nil
}

// cacheTTL maps the --api-key-cache-ttl flag, where 0 means off, to
// engine.Config.APIKeyCacheTTL, where 0 means the default; and likewise
// --ledger-check-interval to payd.Config.LedgerCheckInterval and
// --payout-yield to engine.Config.PayoutYield.
func cacheTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// servePprof serves the runtime profiles on a listener of their own, so that
// they are never reachable through the API's address or prefix.
func servePprof(addr string, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	logger.Info("pprof listening", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, got %q", format)
}

// defaultPublicURL is where a local payer reaches a server listening on a.
func defaultPublicURL(a *net.TCPAddr) string {
	host := a.IP.String()
	if a.IP.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(a.Port))
}
