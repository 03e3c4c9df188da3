// Package payd wires payd: a store, a provider, the engine and the
// HTTP handler, as the reference server (cmd/payd) runs them. The server,
// a host application that embeds payd, and every end-to-end test build the
// same thing with New, so that there is one wiring and no copies of it.
//
//	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, PublicURL: url, APIPrefix: "/api"})
//	go app.RunEngine(ctx)                // verification, expiry, payouts, webhooks
//	http.Handle("/", app.Handler)        // the API under /api and the hosted checkout
//
// Main serves an App over HTTP with its background work, and stops both in
// order. The package paydtest runs one for a test.
package payd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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

// Store is what the reference server needs of a database: the engine's
// store, on whose transactions the providers keep their own tables
// (engine.SQLTx). storage/sqlite and storage/postgres implement it.
type Store interface {
	engine.Store
}

// Providers the reference server runs with.
const (
	ProviderSandbox  = "sandbox"
	ProviderSMSInbox = "smsinbox"
)

// Config is everything a payd is built from. Store and Keyring are
// required; the zero value of every other field is a working default.
type Config struct {
	Store   Store
	Keyring *engine.Keyring
	// PublicURL is where payers reach payd (checkout and payment links);
	// an https one also makes the console's cookies Secure.
	PublicURL string
	APIPrefix string
	Clock     clock.Clock
	Logger    *slog.Logger
	// Provider is ProviderSandbox (the default) or ProviderSMSInbox.
	Provider string
	Sandbox  SandboxSettings
	// SMSSilence is how long an SMS device may be silent (0: default).
	SMSSilence time.Duration
	// SMSGrace is how long an ID no SMS proves yet waits (0: default).
	SMSGrace time.Duration
	// Webhooks posts events; nil means transport.NewWebhookClient(false).
	Webhooks engine.WebhookClient
	// LeaseDuration is how long a process owns claimed work (0: default).
	LeaseDuration time.Duration
	// RateLimits are per API key; the zero value means none.
	RateLimits transport.RateLimits
	// WorkerConcurrency is how many claimed items a worker handles at once.
	WorkerConcurrency int
	// WebhookPerEndpoint is engine.Config.WebhookPerEndpoint (0: its default).
	WebhookPerEndpoint int
	// APIKeyCacheTTL is engine.Config.APIKeyCacheTTL (0: its default).
	APIKeyCacheTTL time.Duration
	// PayoutYield is engine.Config.PayoutYield (0: its default).
	PayoutYield time.Duration
	// CreateBatch is engine.Config.CreateBatch (0: its default).
	CreateBatch int
	// PollInterval and PayoutPollInterval are the engine's (0: its
	// defaults); tests shorten them.
	PollInterval, PayoutPollInterval time.Duration
	// LedgerCheckInterval is how often RunEngine verifies the ledger
	// (App.CheckLedger; 0: DefaultLedgerCheckInterval, negative: never).
	LedgerCheckInterval time.Duration

	// ConsoleApart serves the operator console only on a listener of its
	// own (Main.RunConsole, --console-addr), not under /console beside the
	// API; payment links (/pay/) stay beside the API, where payers are.
	ConsoleApart bool
	// TrustedProxies are the reverse proxies in front of payd whose
	// X-Forwarded-For and X-Forwarded-Proto the console believes.
	TrustedProxies console.TrustedProxies
}

// SandboxSettings configure the sandbox provider's payouts.
type SandboxSettings struct {
	PayoutMode         string
	PayoutDelay        time.Duration
	UnavailableMethods []string
}

// App is a wired payd: the engine, its provider and the HTTP handler.
type App struct {
	Engine *engine.Engine
	// One of Sandbox and Inbox is set, as Config.Provider says.
	Sandbox *sandbox.Provider
	Inbox   *smsinbox.Provider
	// Handler serves the API under Config.APIPrefix and the checkout.
	Handler http.Handler
	// Metrics are this payd's Prometheus series, served by OpsHandler.
	Metrics *metrics.Metrics
	// Console is the operator console's handler (under /console), also in
	// Handler unless Config.ConsoleApart.
	Console http.Handler

	store   Store
	working atomic.Int32 // RunEngine calls running, for readiness

	clock        clock.Clock
	logger       *slog.Logger
	ledgerEvery  time.Duration // <= 0: never
	ledgerChecks *metrics.LedgerChecks
}

// New wires a payd from cfg. It starts nothing: run App.RunEngine for the
// background work (App.Engine.Run, which /readyz then knows runs), and serve
// App.Handler, and App.OpsHandler on a listener of its own.
func New(cfg Config) (*App, error) {
	a := &App{store: cfg.Store, Metrics: metrics.New()}
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
	// The engine and the sandbox write through one group commit: their
	// writes share commits instead of each taking SQLite's writer alone.
	batch := cfg.CreateBatch
	if batch <= 0 {
		batch = engine.DefaultCreateBatch
	}
	writes := engine.GroupCommitted(cfg.Store, batch)
	var provider engine.Provider
	switch cfg.Provider {
	case "", ProviderSandbox:
		sbStore := sandbox.NewSQLStore(writes)
		sb, err := sandbox.New(sandbox.Config{
			PublicURL: cfg.PublicURL, Payments: sbStore, Payouts: sbStore, Clock: cfg.Clock,
			PayoutMode: cfg.Sandbox.PayoutMode, PayoutDelay: cfg.Sandbox.PayoutDelay,
			UnavailablePayoutMethods: cfg.Sandbox.UnavailableMethods,
		})
		if err != nil {
			return nil, err
		}
		a.Sandbox, provider = sb, sb
	case ProviderSMSInbox:
		inbox, err := smsinbox.New(smsinbox.Config{Store: smsinbox.NewSQLStore(cfg.Store), PublicURL: cfg.PublicURL, Silence: cfg.SMSSilence, NotFoundGrace: cfg.SMSGrace, Clock: cfg.Clock, Logger: cfg.Logger, Keyring: cfg.Keyring})
		if err != nil {
			return nil, err
		}
		a.Inbox, provider = inbox, inbox
	default:
		return nil, fmt.Errorf("--provider must be %s or %s, got %q", ProviderSandbox, ProviderSMSInbox, cfg.Provider)
	}
	if cfg.Webhooks == nil {
		cfg.Webhooks = transport.NewWebhookClient(false)
	}
	eng, err := engine.New(engine.Config{
		Store: writes, Provider: provider, Clock: cfg.Clock, Keyring: cfg.Keyring,
		APIPrefix: cfg.APIPrefix, Logger: cfg.Logger, Webhooks: cfg.Webhooks, LeaseDuration: cfg.LeaseDuration,
		WorkerConcurrency: cfg.WorkerConcurrency, APIKeyCacheTTL: cfg.APIKeyCacheTTL, CreateBatch: cfg.CreateBatch, WebhookPerEndpoint: cfg.WebhookPerEndpoint,
		PollInterval: cfg.PollInterval, PayoutPollInterval: cfg.PayoutPollInterval, PayoutYield: cfg.PayoutYield,
		RequireLiveWallets: a.Inbox != nil, Observer: a.Metrics,
	})
	if err != nil {
		return nil, err
	}
	a.Engine = eng
	a.Metrics.WatchQueues(eng.Queues, eng.Now)
	a.Metrics.WatchDisabledEndpoints(eng.DisabledWebhookEndpoints)
	if ps, ok := cfg.Store.(engine.PoolStatser); ok {
		a.Metrics.WatchPools(ps)
	}
	tc := transport.Config{Engine: eng, Prefix: cfg.APIPrefix, Logger: cfg.Logger, RateLimits: cfg.RateLimits,
		ObserveRequest: a.Metrics.ObserveRequest}
	if a.Sandbox != nil {
		tc.Sandbox = sandboxControl{a.Sandbox}
	} else {
		a.Inbox.Attach(eng)
		a.Metrics.WatchInbox(inboxMetrics(eng, a.Inbox))
		tc.Devices = inboxDevices{a.Inbox}
	}
	cc := console.Config{Engine: eng, PublicURL: cfg.PublicURL, Logger: cfg.Logger, TrustedProxies: cfg.TrustedProxies}
	if a.Inbox != nil {
		silence := cfg.SMSSilence
		if silence <= 0 {
			silence = 5 * time.Minute // smsinbox.Config.Silence's default
		}
		cc.Inbox = inboxConsole{inbox: a.Inbox, eng: eng, silence: silence}
	}
	ch := console.New(cc)
	a.Console = ch.Console
	a.Handler = withConsole(transport.NewHandler(tc), ch, cfg.APIPrefix, !cfg.ConsoleApart)
	return a, nil
}

// sandboxControl adapts the sandbox provider to the transport's Sandbox.
type sandboxControl struct{ provider *sandbox.Provider }

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
