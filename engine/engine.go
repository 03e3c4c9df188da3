// Package engine is payd's domain: organizations and their credentials,
// receiving wallets, deposits and their verification, withdrawals and the
// ledger. It knows no SQL and no HTTP: it talks to a database through Store,
// to money networks through Provider, and reads time from a Clock.
//
// # Who uses what
//
// A host application rarely starts here: package payd (the module's root)
// wires an Engine with its store, provider and HTTP handler. From this
// package a host uses the Engine's operations (CreateDeposit,
// CreateDepositTx in its own transaction through HostTx, CreateWithdrawal,
// GetDeposit, CreateRefund, ...), Config, the resource types (Deposit,
// Withdrawal, Refund, Organization, Event) and the errors (Error, the
// Code constants, ErrNotFound).
//
// A provider (a money network) implements Provider; Refunder and
// LateLearner are optional. It keeps its own tables through SQLTx and
// ships them as a MigrationLine; GroupCommitted gives its writes the
// engine's group commit.
//
// A store implements Store and Tx: Tx embeds one interface per noun
// (OrganizationTx, CredentialTx, WalletTx, DepositTx, AttemptTx, LedgerTx,
// WithdrawalTx, RefundTx, EventTx, WebhookTx, AuditTx, WorkTx) and returns
// the console's rows (ConsoleTx: OperatorTx, PaymentLinkTx, CompatTx) from
// Console. SQLTx, OneReader, CreateReader, ConcurrentWriter,
// JournalsCreator, Pipeliner, PoolStatser and DBHealther are optional
// capabilities the engine and the metrics find by type assertion. The
// shared suite
// (conformance/storetest) holds a store to all of it.
//
// The HTTP layer (package transport) uses the views (DepositView and the
// other views of the wire), Page and the checkout's operations; a host
// need not.
//
// # Files
//
// One concept, one file:
//
//	engine.go        Config, Engine, New; helpers every operation uses
//	store.go         Store, Tx and their parameters: what a database implements
//	migration.go     MigrationLine: a plug-in's own schema changes, migrated per line
//	provider.go      Provider and its requests and reports (lookups, checkouts, payouts)
//	organization.go  organizations, their settings and fee rules
//	apikey.go        API keys and authentication; keycache.go caches them
//	keyring.go       sealing secrets under the master key; keycheck.go checks the key
//	method.go        the catalog of payment methods, channels and operations
//	value.go         the contract's values: amounts, phones, transaction IDs, metadata, text, times
//	id.go            resource IDs and random tokens
//	deposit.go       deposits: create, read, and their end states (succeed, finish, expire)
//	checkout.go      the hosted checkout page's operations, by its token
//	wallet.go        receiving wallets and the pick of a deposit's recipient
//	batch.go         group commit (txBatcher) and what a shared transaction shares (sharedTx)
//	groupcommit.go   GroupCommitted: group commit for a plug-in's writes on the engine's store
//	verify.go        verification attempts: submission, the provider check, its verdict
//	handoff.go       submitted attempts passed to this engine's worker without a claim
//	latecredit.go    an operator's credit of a payment proven too late
//	withdrawal.go    withdrawals and their payouts
//	refund.go        refunds of deposits: the provider's Refunder, holds, the worker's steps
//	hosttx.go        deposits and withdrawals created in the host's own transaction (HostTx)
//	ledger.go        journals, balances, manual adjustments, the ledger check
//	list.go          lists newest first by keyset, balance transactions, exports
//	event.go         events, written with their deliveries in the change's transaction
//	webhook.go       webhook endpoints and their secrets
//	delivery.go      posting events to endpoints: retries, redelivery, history
//	webhooktest.go   a signed test post to an endpoint, on an operator's request
//	worker.go        Run: the background loop, wake-ups and leases
//	observe.go       Observer (outcomes told after their commit, for metrics) and Queues
//	view.go          the wire shapes of deposits and withdrawals
//	viewjson.go      an H2H deposit's JSON without reflection (a signed GET's)
//	audit.go         the audit log of administrative actions
//	operator.go      console operators: accounts, lockout, sessions
//	paymentlink.go   payment links: an amount a payer pays through the checkout
//	payable.go       the methods a payer can pay an organization by now
//	compat.go        the UddoktaPay-compatible checkout: its key, invoices (payment links), IPNs
//	console.go       the console's searches, counts and wallet limits
//	errors.go        the contract's error codes and the store's errors
package engine

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// Config holds what an Engine needs. Zero durations take the defaults.
type Config struct {
	Store    Store
	Provider Provider
	// Clock defaults to the wall clock; tests pass clock.NewMock().
	Clock clock.Clock
	// Keyring seals and opens secrets. Check it against the database with
	// CheckMasterKey before serving.
	Keyring *Keyring
	// APIPrefix is the host-relative prefix of the API ("/api" by
	// default; "/" for the root), which verify endpoints in resources and
	// events include.
	APIPrefix string

	// VerificationGrace is how long past a deposit's deadline a delayed
	// attempt keeps being retried before it fails (default 15m).
	VerificationGrace time.Duration
	// LeaseDuration is how long a worker owns claimed work (default 1m);
	// work of a worker that died is taken over when its lease runs out.
	LeaseDuration time.Duration
	// LookupTimeout bounds one provider call (default 20s).
	LookupTimeout time.Duration
	// PayoutPollInterval is how often a sent payout's status is asked for
	// (default 5s).
	PayoutPollInterval time.Duration
	// PayoutYield is how long a payout step waits at most, before it
	// calls the provider, while this engine's API writes (deposit
	// creates, transaction-ID submissions, withdrawal creates) are in
	// flight (DefaultPayoutYield; negative: never waits). Payout steps are
	// the costliest background work, and nobody waits on one as a client
	// waits on its request: they take the machine when the API leaves it,
	// and under a steady API load at least WorkerConcurrency steps per
	// PayoutYield.
	PayoutYield time.Duration
	// PollInterval is how often idle workers look for due work (default 1s).
	PollInterval time.Duration
	// ClaimBatch is how many items a worker claims at once (default 16).
	ClaimBatch int
	// WorkerConcurrency is how many claimed attempts (and payouts) are
	// worked on at once (default 1: one after another, deterministic). The
	// row locks taken to finish each one make any value safe.
	WorkerConcurrency int
	// CreateBatch is how many deposit creates may share one database
	// transaction and its commit (group commit; default 32; 1 writes each
	// in a transaction of its own), and as many transaction-ID
	// submissions, verdicts of verification attempts and withdrawal
	// creates, each kind in transactions of its own. See txBatcher.
	CreateBatch int
	// APIKeyCacheTTL is how long an API key that authenticated is used
	// without reading it again (default 5s; negative: always read). Key
	// changes made through this Engine apply at once; it bounds how long a
	// change made by another process (payd admin, another instance) takes
	// to apply here.
	APIKeyCacheTTL time.Duration
	// RequireLiveWallets keeps a wallet out of the recipient pool unless its
	// LiveUntil is set and ahead: for a provider that can prove payments
	// only to wallets whose device reports (an SMS inbox), so a wallet with
	// no device gets no deposits it could never prove.
	RequireLiveWallets bool
	// WalletsProven, with RequireLiveWallets, says in the deposit's
	// transaction whether the provider proves payments to an
	// organization's wallets of a method without a device (with the
	// wallet owner's own API): those stay in the pool with no LiveUntil.
	WalletsProven func(ctx context.Context, tx Tx, orgID string, m Method) (bool, error)
	// Logger receives background workers' errors (default slog.Default()).
	Logger *slog.Logger
	// Observer, when set, is told of outcomes once they commit (metrics).
	Observer Observer

	// Webhooks posts events to endpoints; nil leaves deliveries queued.
	Webhooks WebhookClient
	// WebhookPerEndpoint caps concurrent posts to one endpoint
	// (DefaultWebhookPerEndpoint).
	WebhookPerEndpoint int
	// WebhookConcurrency caps the deliveries claimed at once (default 32).
	WebhookConcurrency int
	// WebhookDisableAfter disables an endpoint whose every delivery has
	// failed for this long (default 72h).
	WebhookDisableAfter time.Duration
}

// DefaultWebhookPerEndpoint is Config.WebhookPerEndpoint's default: a
// merchant's receiver gets at most this many posts at once.
const DefaultWebhookPerEndpoint = 4

// DefaultCreateBatch is Config.CreateBatch's default.
const DefaultCreateBatch = 32

// DefaultPayoutYield is Config.PayoutYield's default.
const DefaultPayoutYield = 50 * time.Millisecond

// DefaultAPIKeyCacheTTL is Config.APIKeyCacheTTL's default.
const DefaultAPIKeyCacheTTL = 5 * time.Second

// Engine carries out every operation of payd.
type Engine struct {
	cfg      Config
	store    Store
	provider Provider
	clock    clock.Clock
	keyring  *Keyring
	// workerID names this engine's leases on claimed work.
	workerID string
	// wake tells idle workers that work was queued, so they need not wait
	// for the next poll.
	wake chan struct{}
	// attemptsWake does the same for Run's verification (runAttempts).
	attemptsWake chan struct{}
	// handoff passes submitted attempts to runAttempts unclaimed.
	handoff handoff
	// deliveriesQueued is set when an event was queued for delivery (by
	// writeEvent), so that runAttempts, whose verdicts write events, wakes
	// Run to post them.
	deliveriesQueued atomic.Bool
	// apiWrites counts the API's writes in flight, which payout steps
	// yield to (yieldToAPI).
	apiWrites apiLoad
	// creates batches the transactions of deposit creates; submits those
	// of transaction-ID submissions, finishes those that record the
	// verdicts of verification attempts, withdraws those of withdrawal
	// creates, payouts those that record what a provider said of a payout,
	// and posts those that record webhook posts' outcomes (group commit,
	// see txBatcher).
	creates, submits, finishes, withdraws, payouts, posts *txBatcher
	// keys caches authenticated API keys.
	keys keyCache
	// hints spare the worker a read of each deposit it checks.
	hints lookupHints
	// deliveries tracks webhook posts in flight.
	deliveries dispatcher
	// outage is the database outage the background work is waiting out.
	outage dbOutage
}

// New returns an Engine over cfg.
func New(cfg Config) (*Engine, error) {
	if cfg.Store == nil || cfg.Provider == nil || cfg.Keyring == nil {
		return nil, errors.New("engine: Store, Provider and Keyring are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.APIPrefix == "" {
		cfg.APIPrefix = "/api"
	}
	cfg.APIPrefix = strings.TrimRight(cfg.APIPrefix, "/") // "/": the host's root
	setDefault(&cfg.VerificationGrace, 15*time.Minute)
	setDefault(&cfg.LeaseDuration, time.Minute)
	setDefault(&cfg.LookupTimeout, 20*time.Second)
	setDefault(&cfg.PollInterval, time.Second)
	setDefault(&cfg.PayoutPollInterval, 5*time.Second)
	if cfg.ClaimBatch <= 0 {
		cfg.ClaimBatch = 16
	}
	if cfg.WorkerConcurrency <= 0 {
		cfg.WorkerConcurrency = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WebhookPerEndpoint <= 0 {
		cfg.WebhookPerEndpoint = DefaultWebhookPerEndpoint
	}
	if cfg.WebhookConcurrency <= 0 {
		cfg.WebhookConcurrency = 32
	}
	setDefault(&cfg.WebhookDisableAfter, 72*time.Hour)
	if cfg.CreateBatch <= 0 {
		cfg.CreateBatch = DefaultCreateBatch
	}
	if cfg.APIKeyCacheTTL == 0 {
		cfg.APIKeyCacheTTL = DefaultAPIKeyCacheTTL
	}
	if cfg.PayoutYield == 0 {
		cfg.PayoutYield = DefaultPayoutYield
	}
	// A store that writes one transaction at a time (SQLite) gets one
	// writer queue for every kind, so that each commit carries whatever is
	// waiting, and a plug-in given the same GroupCommitted store joins it.
	// A store that writes in parallel gets a queue per kind (see txBatcher).
	var oneQueue *txBatcher
	if g, ok := cfg.Store.(*groupCommitted); ok {
		cfg.Store = g.Store // the engine's own transactions are the store's
		if !writesInParallel(g.Store) {
			oneQueue = g.batch
			oneQueue.observer, oneQueue.max = cfg.Observer, cfg.CreateBatch
		}
	} else if !writesInParallel(cfg.Store) {
		oneQueue = &txBatcher{store: cfg.Store, max: cfg.CreateBatch, observer: cfg.Observer}
	}
	batcher := func() *txBatcher {
		if oneQueue != nil {
			return oneQueue
		}
		return &txBatcher{store: cfg.Store, max: cfg.CreateBatch, observer: cfg.Observer}
	}
	return &Engine{
		cfg: cfg, store: cfg.Store, provider: cfg.Provider, clock: cfg.Clock, keyring: cfg.Keyring,
		keys:    keyCache{ttl: cfg.APIKeyCacheTTL},
		creates: batcher(), submits: batcher(), finishes: batcher(), withdraws: batcher(), payouts: batcher(), posts: batcher(),
		workerID: "wrk_" + RandomToken(9), wake: make(chan struct{}, 1), attemptsWake: make(chan struct{}, 1),
		deliveries: dispatcher{inFlight: map[string]int{}, waiting: map[string][]*Delivery{}, fast: map[string]time.Time{}},
	}, nil
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// now is the current time in UTC at the microsecond precision both stores
// keep, so a value read back equals the value written.
func (e *Engine) now() time.Time { return e.clock.Now().UTC().Truncate(time.Microsecond) }

// readOne runs fn, which makes one read statement, the cheapest way the
// store has: ReadOne if it is a OneReader, else ReadTx.
func (e *Engine) readOne(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error {
	if r, ok := e.store.(OneReader); ok {
		return r.ReadOne(ctx, fn)
	}
	return e.store.ReadTx(ctx, fn)
}

// notFound turns a store's ErrNotFound into the client-facing not_found
// error for the named resource and passes other errors through.
func notFound(err error, what string) error {
	if errors.Is(err, ErrNotFound) {
		return Errorf(CodeNotFound, "%s not found", what)
	}
	return err
}

// Now returns the engine's current time, for rendering what depends on it
// (next_action is null once a deposit's deadline has passed).
func (e *Engine) Now() time.Time { return e.now() }
