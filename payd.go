// Package payd is payd as a library, its front door: a payments engine for
// Bangladesh Taka deposits and withdrawals that a Go program runs in its
// own process, over its own database, with one http.Handler (the API, the
// hosted checkout, payment links and the operator console) mounted
// wherever it likes. The reference server, cmd/payd, is built on this
// package too, so there is one wiring and no copies of it.
//
// # Wire it
//
// New takes a Config with three required fields, Store, Keyring and
// Provider; every other field's zero value is a working default:
//
//	store, err := sqlite.New(db)                       // the host's *sql.DB, or postgres.New(pool)
//	_, err = store.Migrate(ctx, sandbox.Migrations())  // when the host decides; sqlite.Open does both
//	sb, err := sandbox.New(sandbox.Config{})           // test mode; smsinbox.New or your engine.Provider
//	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: sb,
//		PublicURL: "https://shop.example/payments", APIPrefix: "/api"})
//
// The stores are github.com/payd-engine/payd/storage/sqlite and
// .../storage/postgres; the providers live under .../provider. New finds
// on the provider what more it offers (PublicURLSetter, StoreJoiner,
// MigrationLiner, ...) and refuses a store whose schema is behind.
//
// # Run it
//
// App.Run is the one way to start the background work (verification,
// expiry, payouts, refunds, webhooks, the ledger checks); run it until the
// host stops. Main serves an App over HTTP beside it and stops both in
// order, as payd serve does.
//
//	go func() { worked <- app.Run(ctx) }()
//
// # Mount it
//
// App.Handler serves everything relative to where it is mounted; PublicURL
// names that place, and every URL payd writes follows it:
//
//	mux.Handle("/payments/", http.StripPrefix("/payments", app.Handler))
//
// App.Engine is the engine itself, for a host that creates deposits and
// withdrawals without HTTP, or inside its own database transaction
// (Engine.CreateDepositTx with the store's HostTx). App.OpsHandler serves
// /metrics, /healthz and /readyz.
//
// # Test with it
//
// Package paydtest runs a whole payd in a test; package paydmock has fakes
// of what a host implements (a provider, the webhook sender); package
// transport/client is the Go client a merchant's backend uses.
//
// Example_embed is the whole of it in one function; the repository's
// examples/host is a complete host program in one file (its own *sql.DB, a
// provider of its own, an order and its deposit in one transaction). The repository's
// docs/embedding.md explains each choice, and docs/library/ the host's
// database and transactions.
package payd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/metrics"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/transport"
	"github.com/payd-engine/payd/transport/console"
)

// Store is what payd needs of a database: the engine's store, on whose
// transactions the providers keep their own tables (engine.SQLTx).
// storage/sqlite and storage/postgres implement it.
type Store interface {
	engine.Store
}

// Config is everything a payd is built from. Store, Keyring and Provider
// are required; the zero value of every other field is a working default.
type Config struct {
	// Store is the database (storage/sqlite, storage/postgres). New writes
	// through it with group commit (engine.GroupCommitted), and so does a
	// provider that joins it (StoreJoiner).
	Store Store
	// Keyring seals secrets under the master key. Check it against the
	// database (engine.CheckMasterKey) before serving.
	Keyring *engine.Keyring
	// Provider proves payments and sends payouts: sandbox.New's (test
	// mode), smsinbox.New's, or the host's own engine.Provider. New finds
	// on the value what more it offers the HTTP layer: transport.Sandbox
	// (the sandbox endpoints and the checkout's pay button), an SMS inbox's
	// device endpoints and console pages, PublicURLSetter, StoreJoiner,
	// EngineAttacher and LiveWalletsRequirer.
	Provider engine.Provider

	// PublicURL is the absolute URL at which payers and merchants reach
	// Handler, the path it is mounted under included:
	// "https://shop.example/payments" for a Handler served with
	// http.StripPrefix("/payments", ...). Every URL payd writes (checkout
	// links, verify endpoints, console links and redirects, payment links)
	// begins with it or its path. It may be only a path ("/payments") when
	// the listener's address is not known yet: App.SetPublicURL completes it
	// before payers need it. An https one makes the console's cookies
	// Secure. Payd never derives it from a request's Host.
	PublicURL string
	// APIPrefix is where the API is under Handler: "/api" serves
	// /api/v1/deposits (the reference server's); "" serves /v1/deposits.
	APIPrefix string
	// Clock defaults to the wall clock; tests pass clock.NewMock().
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Webhooks posts events; nil means transport.NewWebhookClient(false),
	// which refuses private and loopback addresses.
	Webhooks engine.WebhookClient
	// RateLimits are per API key; the zero value means none.
	RateLimits transport.RateLimits
	// LedgerCheckInterval is how often Run verifies the ledger
	// (App.CheckLedger; 0: DefaultLedgerCheckInterval, negative: never).
	LedgerCheckInterval time.Duration

	// ConsoleApart serves the operator console only on a listener of its
	// own (App.Console, Main.RunConsole), not under /console beside the
	// API; payment links (/pay/) stay beside the API, where payers are.
	ConsoleApart bool
	// TrustedProxies are the reverse proxies in front of payd whose
	// X-Forwarded-For and X-Forwarded-Proto the console believes.
	TrustedProxies console.TrustedProxies

	// Engine holds the engine's other settings (timeouts, batches,
	// workers, webhook caps), each zero meaning the engine's default.
	// Store, Provider, Clock, Keyring, APIPrefix, Logger, Webhooks and
	// Observer are New's, from the fields above: leave them zero there.
	Engine engine.Config
}

// Capabilities New finds on Config.Provider, beyond engine.Provider.
type (
	// PublicURLSetter is a provider that writes links to payd's pages (a
	// hosted checkout): New and App.SetPublicURL tell it Config.PublicURL.
	PublicURLSetter interface{ SetPublicURL(string) }
	// StoreJoiner is a provider that keeps its own tables on the engine's
	// store: New gives it the store the engine writes through
	// (engine.GroupCommitted), so that its writes share the engine's
	// commits.
	StoreJoiner interface{ JoinStore(engine.Store) }
	// EngineAttacher is a provider that tells the engine of what it
	// learns (a payment proven, a payout recorded): New attaches it.
	EngineAttacher interface{ Attach(*engine.Engine) }
	// LiveWalletsRequirer is a provider that proves payments only to
	// wallets whose device reports (engine.Config.RequireLiveWallets).
	LiveWalletsRequirer interface{ RequireLiveWallets() bool }
	// WalletsProver is a provider that proves some of an organization's
	// wallets without a device (engine.Config.WalletsProven).
	WalletsProver interface {
		WalletsProven(ctx context.Context, tx engine.Tx, orgID string, m engine.Method) (bool, error)
	}
	// MigrationLiner is a provider that keeps tables of its own: their
	// migration line, which New checks the store has applied.
	MigrationLiner interface{ Migrations() engine.MigrationLine }
	// Fallbacker is a provider that serves some methods itself and hands
	// the rest to another (bkash.Provider): New also finds on the other
	// its migration line and what it offers the HTTP layer.
	Fallbacker interface{ Fallback() engine.Provider }
	// CallbackServer is a provider whose network calls back (a payer sent
	// back from the network's page): Handler serves Callbacks beside the
	// hosted checkout, at the paths the provider gives the network.
	CallbackServer interface{ Callbacks() http.Handler }
	// CallbackPather is a CallbackServer that names the paths its
	// Callbacks serve (exact paths, or prefixes ending in "/"): every
	// other request goes straight to payd's routes, without a lookup in
	// the provider's.
	CallbackPather interface{ CallbackPaths() []string }
	// BackgroundRunner is a provider with background work of its own
	// (asking the network about payments): App.Run runs it.
	BackgroundRunner interface{ RunBackground(context.Context) }
)

// withFallback is the provider and, when it has one, its fallback.
func withFallback(p engine.Provider) []engine.Provider {
	ps := []engine.Provider{p}
	if f, ok := p.(Fallbacker); ok && f.Fallback() != nil {
		ps = append(ps, f.Fallback())
	}
	return ps
}

// The sandbox is the transport's sandbox as it is.
var _ transport.Sandbox = (*sandbox.Provider)(nil)

// App is a wired payd: the engine, its provider and the HTTP handler.
type App struct {
	// Engine is the engine itself: deposits, withdrawals, organizations and
	// the rest without HTTP, or in the host's own transaction
	// (CreateDepositTx).
	Engine *engine.Engine
	// Provider is Config.Provider.
	Provider engine.Provider
	// Handler serves, under where it is mounted, the API under
	// Config.APIPrefix, the hosted checkout (/checkout/), payment links
	// (/pay/) and, unless Config.ConsoleApart, the console (/console/).
	Handler http.Handler
	// Metrics are this payd's Prometheus series, served by OpsHandler.
	Metrics *metrics.Metrics
	// Console is the operator console's handler (under /console), also in
	// Handler unless Config.ConsoleApart.
	Console http.Handler

	store      Store
	migrations []engine.MigrationLine // the provider's, checked with the store's own
	working    atomic.Int32           // Run calls running, for readiness

	clock        clock.Clock
	logger       *slog.Logger
	ledgerEvery  time.Duration // <= 0: never
	ledgerChecks *metrics.LedgerChecks
	background   BackgroundRunner // nil: the provider has none

	mount     string // PublicURL's path, which SetPublicURL keeps
	setURL    []func(string)
	publicURL atomic.Pointer[string]
}

// engineOwned are the engine settings New makes: a host sets them on
// Config, not on Config.Engine.
func engineOwned(c engine.Config) string {
	switch {
	case c.Store != nil:
		return "Store"
	case c.Provider != nil:
		return "Provider"
	case c.Clock != nil:
		return "Clock"
	case c.Keyring != nil:
		return "Keyring"
	case c.APIPrefix != "":
		return "APIPrefix"
	case c.Logger != nil:
		return "Logger"
	case c.Webhooks != nil:
		return "Webhooks"
	case c.Observer != nil:
		return "Observer"
	}
	return ""
}

// mountOf checks a public URL and returns its path, without a trailing
// slash ("" at the root). The URL is absolute (http or https), or only a
// path that SetPublicURL completes later.
func mountOf(field, u string) (string, error) {
	if u == "" {
		return "", nil
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	switch {
	case parsed.RawQuery != "" || parsed.Fragment != "" || parsed.User != nil:
		return "", fmt.Errorf("%s %q has a query, fragment or user: it is a base URL", field, u)
	case parsed.Scheme == "" && parsed.Host == "" && strings.HasPrefix(parsed.Path, "/"):
	case (parsed.Scheme == "http" || parsed.Scheme == "https") && parsed.Host != "":
	default:
		return "", fmt.Errorf("%s %q must be an http or https URL, or a path starting with /", field, u)
	}
	if parsed.RawPath != "" || strings.Contains(parsed.Path, "//") || strings.Contains(parsed.Path, "/../") || strings.HasSuffix(parsed.Path, "/..") {
		return "", fmt.Errorf("%s %q: its path must be plain", field, u)
	}
	return strings.TrimRight(parsed.Path, "/"), nil
}

// New wires a payd from cfg. It starts nothing: App.Run is the background
// work, App.Handler serves the HTTP side, and App.OpsHandler the
// operations endpoints on a listener of their own.
func New(cfg Config) (*App, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("payd.Config.Store is nil")
	case cfg.Keyring == nil:
		return nil, errors.New("payd.Config.Keyring is nil")
	case cfg.Provider == nil:
		return nil, errors.New("payd.Config.Provider is nil: pass sandbox.New's, smsinbox.New's or your own engine.Provider")
	}
	if f := engineOwned(cfg.Engine); f != "" {
		return nil, fmt.Errorf("payd.Config.Engine.%[1]s is set: set payd.Config.%[1]s (or leave it to New)", f)
	}
	mount, err := mountOf("payd.Config.PublicURL", cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimRight(cfg.APIPrefix, "/")
	if prefix != "" && (!strings.HasPrefix(prefix, "/") || strings.ContainsAny(prefix, "?#%") || strings.Contains(prefix, "//")) {
		return nil, fmt.Errorf("payd.Config.APIPrefix %q must be a plain path starting with /", cfg.APIPrefix)
	}
	a := &App{store: cfg.Store, Provider: cfg.Provider, Metrics: metrics.New(), mount: mount}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// Every line logged with a request's context names its request ID.
	cfg.Logger = slog.New(transport.LogHandler(cfg.Logger.Handler()))
	a.logger, a.clock, a.ledgerEvery = cfg.Logger, cfg.Clock, cfg.LedgerCheckInterval
	if a.clock == nil {
		a.clock = clock.New()
	}
	if a.ledgerEvery == 0 {
		a.ledgerEvery = DefaultLedgerCheckInterval
	}
	a.ledgerChecks = a.Metrics.WatchLedgerChecks()

	for _, p := range withFallback(cfg.Provider) {
		if m, ok := p.(MigrationLiner); ok {
			a.migrations = append(a.migrations, m.Migrations())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.checkMigrations(ctx); err != nil {
		return nil, err
	}
	ec := cfg.Engine
	// The engine and a provider that joins the store write through one
	// group commit: their writes share commits instead of each taking
	// SQLite's writer alone.
	batch := ec.CreateBatch
	if batch <= 0 {
		batch = engine.DefaultCreateBatch
	}
	writes := engine.GroupCommitted(cfg.Store, batch)
	if j, ok := cfg.Provider.(StoreJoiner); ok {
		j.JoinStore(writes)
	}
	if cfg.Webhooks == nil {
		cfg.Webhooks = transport.NewWebhookClient(false)
	}
	var inbox *smsinbox.Provider
	for _, p := range withFallback(cfg.Provider) {
		if i, ok := p.(*smsinbox.Provider); ok {
			inbox = i
		}
	}
	if r, ok := cfg.Provider.(LiveWalletsRequirer); ok && r.RequireLiveWallets() {
		ec.RequireLiveWallets = true
		if w, ok := cfg.Provider.(WalletsProver); ok {
			ec.WalletsProven = w.WalletsProven
		}
	}
	ec.Store, ec.Provider, ec.Clock, ec.Keyring, ec.Logger, ec.Webhooks, ec.Observer =
		writes, cfg.Provider, cfg.Clock, cfg.Keyring, cfg.Logger, cfg.Webhooks, a.Metrics
	// The verify endpoints the engine writes into resources and events
	// are host-relative: the mount comes first.
	ec.APIPrefix = mount + prefix
	if ec.APIPrefix == "" {
		ec.APIPrefix = "/"
	}
	eng, err := engine.New(ec)
	if err != nil {
		return nil, err
	}
	a.Engine = eng
	if at, ok := cfg.Provider.(EngineAttacher); ok {
		at.Attach(eng)
	}
	a.Metrics.WatchQueues(eng.Queues, eng.Now)
	a.Metrics.WatchDisabledEndpoints(eng.DisabledWebhookEndpoints)
	if ps, ok := cfg.Store.(engine.PoolStatser); ok {
		a.Metrics.WatchPools(ps)
	}
	a.watchDBHealth(cfg.Store)
	tc := transport.Config{Engine: eng, Prefix: prefix, Mount: mount, Logger: cfg.Logger, RateLimits: cfg.RateLimits,
		ObserveRequest: a.Metrics.ObserveRequest}
	for _, p := range withFallback(cfg.Provider) {
		if sb, ok := p.(transport.Sandbox); ok {
			tc.Sandbox = sb
		}
	}
	cc := console.Config{Engine: eng, PublicURL: cfg.PublicURL, Mount: mount, Logger: cfg.Logger, TrustedProxies: cfg.TrustedProxies, Sandbox: tc.Sandbox != nil, APIPrefix: prefix}
	// The SMS inbox's operations take its own types, which transport and
	// console cannot name: its adapters are here.
	if inbox != nil {
		a.Metrics.WatchInbox(inboxMetrics(eng, inbox))
		tc.Devices = inboxDevices{inbox}
		cc.Inbox = inboxConsole{inbox: inbox, eng: eng, silence: inbox.Silence()}
	}
	if b := findBkash(cfg.Provider); b != nil {
		cc.Bkash = bkashConsole{b}
	}
	ch := console.New(cc)
	tc.CompatPayURL = ch.PayURL
	a.Console = ch.Console
	a.Handler = withConsole(transport.NewHandler(tc), ch, prefix, !cfg.ConsoleApart)
	if cs, ok := cfg.Provider.(CallbackServer); ok {
		var paths []string
		if cp, ok := cfg.Provider.(CallbackPather); ok {
			paths = cp.CallbackPaths()
		}
		a.Handler = withCallbacks(a.Handler, cs.Callbacks(), paths)
	}
	a.background, _ = cfg.Provider.(BackgroundRunner)
	a.setURL = append(a.setURL, ch.SetPublicURL)
	if p, ok := cfg.Provider.(PublicURLSetter); ok {
		a.setURL = append(a.setURL, p.SetPublicURL)
	}
	a.tellPublicURL(strings.TrimRight(cfg.PublicURL, "/"))
	return a, nil
}

// SetPublicURL sets Config.PublicURL once the listener's address is known
// (for the checkouts and payment links made from then on). Its path must
// be the one New was given: the handler's links are fixed where it is
// mounted.
func (a *App) SetPublicURL(u string) error {
	mount, err := mountOf("payd: SetPublicURL", u)
	if err != nil {
		return err
	}
	if mount != a.mount {
		return fmt.Errorf("payd: SetPublicURL %q: the path must stay %q, where New mounted the handler", u, a.mount)
	}
	a.tellPublicURL(strings.TrimRight(u, "/"))
	return nil
}

// PublicURL is the public URL payd writes links under.
func (a *App) PublicURL() string { return *a.publicURL.Load() }

func (a *App) tellPublicURL(u string) {
	a.publicURL.Store(&u)
	for _, set := range a.setURL {
		set(u)
	}
}

// migrationChecker is a store that says whether its schema is behind
// migration lines (storage/sqlite and storage/postgres).
type migrationChecker interface {
	CheckMigrations(ctx context.Context, lines ...engine.MigrationLine) error
}

// checkMigrations returns an error naming the line and the versions it
// lacks when the store's schema is behind the engine's or the provider's
// migration line: the host migrates when it decides (the stores'
// Migrate), and a payd neither starts nor reports ready on a schema older
// than its code.
func (a *App) checkMigrations(ctx context.Context) error {
	if c, ok := a.store.(migrationChecker); ok {
		return c.CheckMigrations(ctx, a.migrations...)
	}
	return nil
}

// withCallbacks serves a provider's callbacks at the routes its handler
// has (a handler that is no mux: everything under /callbacks/), and
// everything else as before. With paths (CallbackPather), a request on
// none of them is not looked up in the callbacks' routes: a miss there
// costs a mux's search for other methods, on every API request.
func withCallbacks(h, callbacks http.Handler, paths []string) http.Handler {
	routes, ok := callbacks.(*http.ServeMux)
	if !ok {
		routes = http.NewServeMux()
		routes.Handle("/callbacks/", callbacks)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if paths != nil && !onPaths(r.URL.Path, paths) {
			h.ServeHTTP(w, r)
			return
		}
		if _, pattern := routes.Handler(r); pattern != "" {
			routes.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// onPaths says whether path is one of paths, or under one ending in "/".
func onPaths(path string, paths []string) bool {
	for _, p := range paths {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
