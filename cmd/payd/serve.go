package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport"
)

// paydStore is what the reference server needs of a database: the engine's
// store, on whose transactions the providers keep their own tables.
type paydStore interface {
	engine.Store
}

// Providers the reference server runs with.
const (
	providerSandbox  = "sandbox"
	providerSMSInbox = "smsinbox"
)

// appConfig is everything the reference server is built from.
type appConfig struct {
	store     paydStore
	keyring   *engine.Keyring
	publicURL string
	apiPrefix string
	clock     clock.Clock
	logger    *slog.Logger
	// provider is providerSandbox (the default) or providerSMSInbox.
	provider string
	sandbox  sandboxSettings
	// smsSilence is how long an SMS device may be silent (0: default).
	smsSilence time.Duration
	// smsGrace is how long an ID no SMS proves yet waits (0: default).
	smsGrace time.Duration
	// webhooks posts events; nil means transport.NewWebhookClient(false).
	webhooks engine.WebhookClient
	// leaseDuration is how long a process owns claimed work (0: default).
	leaseDuration time.Duration
	// rateLimits are per API key; the zero value means none.
	rateLimits transport.RateLimits
	// workerConcurrency is how many claimed items a worker handles at once.
	workerConcurrency int
	// apiKeyCacheTTL is engine.Config.APIKeyCacheTTL (0: its default).
	apiKeyCacheTTL time.Duration
	// createBatch is engine.Config.CreateBatch (0: its default).
	createBatch int
}

// sandboxSettings configure the sandbox provider's payouts.
type sandboxSettings struct {
	payoutMode         string
	payoutDelay        time.Duration
	unavailableMethods []string
}

// app is a wired payd: the engine, its provider and the HTTP handler.
type app struct {
	engine *engine.Engine
	// One of sandbox and inbox is set, as cfg.provider says.
	sandbox *sandbox.Provider
	inbox   *smsinbox.Provider
	handler http.Handler
}

func newApp(cfg appConfig) (*app, error) {
	a := &app{}
	var provider engine.Provider
	switch cfg.provider {
	case "", providerSandbox:
		sb, err := sandbox.New(sandbox.Config{
			PublicURL: cfg.publicURL, Payments: sandbox.NewSQLStore(cfg.store), Payouts: sandbox.NewSQLStore(cfg.store), Clock: cfg.clock,
			PayoutMode: cfg.sandbox.payoutMode, PayoutDelay: cfg.sandbox.payoutDelay,
			UnavailablePayoutMethods: cfg.sandbox.unavailableMethods,
		})
		if err != nil {
			return nil, err
		}
		a.sandbox, provider = sb, sb
	case providerSMSInbox:
		inbox, err := smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(cfg.store), Silence: cfg.smsSilence, NotFoundGrace: cfg.smsGrace, Clock: cfg.clock, Logger: cfg.logger})
		if err != nil {
			return nil, err
		}
		a.inbox, provider = inbox, inbox
	default:
		return nil, fmt.Errorf("--provider must be %s or %s, got %q", providerSandbox, providerSMSInbox, cfg.provider)
	}
	if cfg.webhooks == nil {
		cfg.webhooks = transport.NewWebhookClient(false)
	}
	eng, err := engine.New(engine.Config{
		Store: cfg.store, Provider: provider, Clock: cfg.clock, Keyring: cfg.keyring,
		APIPrefix: cfg.apiPrefix, Logger: cfg.logger, Webhooks: cfg.webhooks, LeaseDuration: cfg.leaseDuration,
		WorkerConcurrency: cfg.workerConcurrency, APIKeyCacheTTL: cfg.apiKeyCacheTTL, CreateBatch: cfg.createBatch,
		RequireLiveWallets: a.inbox != nil,
	})
	if err != nil {
		return nil, err
	}
	a.engine = eng
	tc := transport.Config{Engine: eng, Prefix: cfg.apiPrefix, Logger: cfg.logger, RateLimits: cfg.rateLimits}
	if a.sandbox != nil {
		tc.Sandbox = sandboxControl{a.sandbox, eng}
	} else {
		a.inbox.Attach(eng)
		tc.Devices = inboxDevices{a.inbox}
	}
	a.handler = transport.NewHandler(tc)
	return a, nil
}

// sandboxControl adapts the sandbox provider to the transport's Sandbox.
type sandboxControl struct {
	provider *sandbox.Provider
	engine   *engine.Engine
}

func (c sandboxControl) RecordPayment(ctx context.Context, p transport.SandboxPayment) (*engine.ProviderTransaction, error) {
	return c.provider.RecordPayment(ctx, sandbox.PaymentParams(p))
}

func (c sandboxControl) SetOutage(organizationID string, down bool) {
	c.provider.SetOutage(organizationID, down)
}

func (c sandboxControl) SettlePayout(ctx context.Context, organizationID, withdrawalID, outcome string) error {
	_, err := c.provider.Settle(ctx, organizationID, withdrawalID, outcome)
	if errors.Is(err, sandbox.ErrAlreadySettled) {
		return engine.Errorf(engine.CodeConflict, "outcome: the payout was already settled the other way")
	}
	return err
}

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
	addr := fs.String("addr", env("PAYD_ADDR", "127.0.0.1:8080"), "address to listen on (env PAYD_ADDR)")
	publicURL := fs.String("public-url", env("PAYD_PUBLIC_URL", ""), "URL at which payers reach this server, for checkout links (default http://<addr>) (env PAYD_PUBLIC_URL)")
	apiPrefix := fs.String("api-prefix", env("PAYD_API_PREFIX", "/api"), "path prefix of the API (env PAYD_API_PREFIX)")
	logLevel := fs.String("log-level", env("PAYD_LOG_LEVEL", "info"), "debug, info, warn or error (env PAYD_LOG_LEVEL)")
	logFormat := fs.String("log-format", env("PAYD_LOG_FORMAT", "text"), "text or json (env PAYD_LOG_FORMAT)")
	provider := fs.String("provider", env("PAYD_PROVIDER", providerSandbox), "sandbox (test mode: no money moves) or smsinbox (real wallets proven by their phones' SMS; payouts by an operator) (env PAYD_PROVIDER)")
	smsSilence := fs.Duration("sms-silence", envDuration("PAYD_SMS_SILENCE", 5*time.Minute), "smsinbox: how long a device may go without reporting before its wallets leave the recipient pool (env PAYD_SMS_SILENCE)")
	smsGrace := fs.Duration("sms-grace", envDuration("PAYD_SMS_GRACE", smsinbox.DefaultNotFoundGrace), "smsinbox: how long a submitted transaction ID waits for the SMS that proves it before its attempt fails transaction_not_found (env PAYD_SMS_GRACE)")
	var sb sandboxSettings
	fs.StringVar(&sb.payoutMode, "sandbox-payouts", env("PAYD_SANDBOX_PAYOUTS", "auto"), "sandbox payouts settle by themselves (auto) or by POST /api/sandbox/withdraws/{id}/settle (manual) (env PAYD_SANDBOX_PAYOUTS)")
	fs.DurationVar(&sb.payoutDelay, "sandbox-payout-delay", envDuration("PAYD_SANDBOX_PAYOUT_DELAY", 2*time.Second), "how long an auto sandbox payout stays pending (env PAYD_SANDBOX_PAYOUT_DELAY)")
	unavailable := fs.String("sandbox-unavailable-methods", env("PAYD_SANDBOX_UNAVAILABLE_METHODS", ""), "comma-separated payout methods the sandbox refuses with 503 (env PAYD_SANDBOX_UNAVAILABLE_METHODS)")
	allowPrivate := fs.Bool("webhook-allow-private", envBool("PAYD_WEBHOOK_ALLOW_PRIVATE"), "let webhooks reach loopback, private and link-local addresses, for local receivers (env PAYD_WEBHOOK_ALLOW_PRIVATE)")
	leaseDuration := fs.Duration("lease-duration", envDuration("PAYD_LEASE_DURATION", time.Minute), "how long a process owns claimed background work; a killed process's work is taken over after it (env PAYD_LEASE_DURATION)")
	rl := transport.DefaultRateLimits
	fs.Float64Var(&rl.Default.PerSecond, "rate-limit", envFloat("PAYD_RATE_LIMIT", rl.Default.PerSecond), "requests per second per API key, bursts of twice that; 0 disables (env PAYD_RATE_LIMIT)")
	fs.Float64Var(&rl.Verify.PerSecond, "rate-limit-verify", envFloat("PAYD_RATE_LIMIT_VERIFY", rl.Verify.PerSecond), "transaction-ID submissions per second per API key; 0 disables (env PAYD_RATE_LIMIT_VERIFY)")
	fs.Float64Var(&rl.Withdraw.PerSecond, "rate-limit-withdraw", envFloat("PAYD_RATE_LIMIT_WITHDRAW", rl.Withdraw.PerSecond), "withdrawal creations per second per API key; 0 disables (env PAYD_RATE_LIMIT_WITHDRAW)")
	fs.Float64Var(&rl.Device.PerSecond, "rate-limit-device", envFloat("PAYD_RATE_LIMIT_DEVICE", rl.Device.PerSecond), "smsinbox: SMS and heartbeat posts per second per device, bursts of 60 times that; 0 disables (env PAYD_RATE_LIMIT_DEVICE)")
	workers := fs.Int("worker-concurrency", envInt("PAYD_WORKER_CONCURRENCY", 8), "verification attempts and payouts worked on at once per process (env PAYD_WORKER_CONCURRENCY)")
	createBatch := fs.Int("create-batch", envInt("PAYD_CREATE_BATCH", engine.DefaultCreateBatch), "how many concurrent deposit creates may share one database transaction and its commit (group commit); 1 commits each alone (env PAYD_CREATE_BATCH)")
	keyCacheTTL := fs.Duration("api-key-cache-ttl", envDuration("PAYD_API_KEY_CACHE_TTL", engine.DefaultAPIKeyCacheTTL), "how long an authenticated API key is used without reading it again; bounds how long a key revoked or rotated by another process (payd admin, another instance) still works here; 0 reads the key on every request (env PAYD_API_KEY_CACHE_TTL)")
	pprofAddr := fs.String("pprof-addr", env("PAYD_PPROF_ADDR", ""), "serve net/http/pprof on this address (e.g. 127.0.0.1:6060), apart from the API; off when empty (env PAYD_PPROF_ADDR)")
	shutdownTimeout := fs.Duration("shutdown-timeout", envDuration("PAYD_SHUTDOWN_TIMEOUT", 20*time.Second), "how long to drain in-flight requests on SIGINT/SIGTERM (env PAYD_SHUTDOWN_TIMEOUT)")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
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
		sb.unavailableMethods = strings.Split(*unavailable, ",")
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
	a, err := newApp(appConfig{
		store: db.store, keyring: db.keyring, publicURL: *publicURL, apiPrefix: *apiPrefix, logger: logger, sandbox: sb,
		provider: *provider, smsSilence: *smsSilence, smsGrace: *smsGrace,
		webhooks: transport.NewWebhookClient(*allowPrivate), leaseDuration: *leaseDuration, rateLimits: rl,
		workerConcurrency: *workers, apiKeyCacheTTL: cacheTTL(*keyCacheTTL), createBatch: *createBatch,
	})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if *pprofAddr != "" {
		stopPprof, err := servePprof(*pprofAddr, logger)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	next, err := nextStep(ctx, db.store, &sf)
	if err != nil {
		return err
	}
	logger.Info("payd listening", "addr", ln.Addr().String(), "api", *publicURL+*apiPrefix, "mode", modeOf(*provider),
		"db", redactDSN(sf.db), "db_created", db.created, "master_key", db.key, "master_key_created", db.keyCreated,
		"key_check", map[bool]string{true: "recorded", false: "verified"}[db.checkRecorded], "next", next)
	workCtx, stopWork := context.WithCancel(context.Background())
	worked := make(chan error, 1)
	go func() { worked <- a.engine.Run(workCtx) }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var serveErr error
	select {
	case serveErr = <-served:
	case <-ctx.Done():
		logger.Info("shutting down: draining in-flight requests", "timeout", *shutdownTimeout)
		shutdownCtx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			serveErr = fmt.Errorf("shutdown: %w", err)
		} else if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	}
	// Background work stops after the last request: work it leaves claimed
	// is taken over when its lease runs out.
	stopWork()
	<-worked
	logger.Info("stopped")
	return serveErr
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
func nextStep(ctx context.Context, store paydStore, sf *storeFlags) (string, error) {
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
// engine.Config.APIKeyCacheTTL, where 0 means the default.
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
