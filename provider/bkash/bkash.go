// Package bkash is a provider on bKash's own tokenized checkout API, for
// organizations with a bKash merchant account and API credentials.
//
// With an organization connected (Connect, or payd admin bkash connect),
// its bkash redirect deposits pay on bKash's hosted page: the provider
// creates the payment (mode 0011, the deposit's ID as the invoice number,
// payd's callback URL), executes it once when the payer comes back, and
// asks bKash for its status when they do not; the trxID bKash reports is
// then submitted to the engine, which matches it as any other payment. Its
// bkash_merchant display-instructions deposits are verified by bKash's
// transaction search, and refunds of checkout payments go through bKash's
// refund operation. Every other method, and every organization not
// connected, is served by Config.Fallback (the sandbox or an SMS inbox).
//
// Credentials and tokens are sealed with the engine's Keyring. A token is
// granted once and shared by every request and every payd instance on the
// database: one caller renews it, under a lease on its row.
package bkash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
)

// DefaultBaseURL is bKash's production tokenized checkout endpoint.
const DefaultBaseURL = "https://tokenized.pay.bka.sh/v1.2.0-beta"

// Method is the payment method paid on bKash's hosted page.
const Method = "bkash"

// Config configures the provider.
type Config struct {
	// Keyring seals credentials and tokens (required).
	Keyring *engine.Keyring
	// Store is the engine's store, on which the provider keeps its tables;
	// payd.New gives it the one the engine writes through (JoinStore).
	Store engine.Store
	// PublicURL is where payd's handler is reached (SetPublicURL): the
	// callback URL given to bKash is under it.
	PublicURL string
	// Fallback serves the methods and organizations bKash does not (nil:
	// they are unavailable).
	Fallback engine.Provider
	// HTTPClient calls bKash (default: a 30 s timeout).
	HTTPClient *http.Client
	// CheckEvery is how often payments whose payer has not come back are
	// looked at (default 30 s); FirstCheck how long after its creation a
	// payment is first asked about (default 1 minute).
	CheckEvery, FirstCheck time.Duration
	Clock                  clock.Clock
	Logger                 *slog.Logger
}

// Provider is engine.Provider on bKash's API, with Config.Fallback beside.
type Provider struct {
	keyring    *engine.Keyring
	store      SQLStore
	hasStore   bool
	fallback   engine.Provider
	client     client
	clock      clock.Clock
	logger     *slog.Logger
	checkEvery time.Duration
	firstCheck time.Duration
	publicURL  atomic.Pointer[string]
	engine     atomic.Pointer[engine.Engine]

	mu       sync.Mutex
	sessions map[string]*session // by organization
	renewing map[string]*sync.Mutex
	// failedUntil: an organization's token renewal failed; until then its
	// callers are answered at once.
	failedUntil map[string]time.Time
}

var (
	_ engine.Provider = (*Provider)(nil)
	_ engine.Refunder = (*Provider)(nil)
)

// New returns a provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Keyring == nil {
		return nil, errors.New("bkash: Config.Keyring is required (credentials are sealed with it)")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CheckEvery <= 0 {
		cfg.CheckEvery = 30 * time.Second
	}
	if cfg.FirstCheck <= 0 {
		cfg.FirstCheck = time.Minute
	}
	p := &Provider{keyring: cfg.Keyring, fallback: cfg.Fallback, client: client{http: cfg.HTTPClient},
		clock: cfg.Clock, logger: cfg.Logger, checkEvery: cfg.CheckEvery, firstCheck: cfg.FirstCheck,
		sessions: map[string]*session{}, renewing: map[string]*sync.Mutex{},
		failedUntil: map[string]time.Time{}}
	if cfg.Store != nil {
		p.store, p.hasStore = NewSQLStore(cfg.Store), true
	}
	p.SetPublicURL(cfg.PublicURL)
	return p, nil
}

// Fallback is the provider serving what bKash does not (nil for none).
func (p *Provider) Fallback() engine.Provider { return p.fallback }

// Migrations is the provider's migration line (the package's Migrations).
func (p *Provider) Migrations() engine.MigrationLine { return Migrations() }

// JoinStore keeps the provider's tables on s, unless Config.Store was
// given, and lets the fallback join it too.
func (p *Provider) JoinStore(s engine.Store) {
	if !p.hasStore {
		p.store, p.hasStore = NewSQLStore(s), true
	}
	if j, ok := p.fallback.(interface{ JoinStore(engine.Store) }); ok {
		j.JoinStore(s)
	}
}

// Attach gives the provider the engine it tells of executed payments.
func (p *Provider) Attach(e *engine.Engine) {
	p.engine.Store(e)
	if a, ok := p.fallback.(interface{ Attach(*engine.Engine) }); ok {
		a.Attach(e)
	}
}

// SetPublicURL sets where payd's handler is reached.
func (p *Provider) SetPublicURL(u string) {
	u = strings.TrimRight(u, "/")
	p.publicURL.Store(&u)
	if s, ok := p.fallback.(interface{ SetPublicURL(string) }); ok {
		s.SetPublicURL(u)
	}
}

// NotFoundGrace is the fallback's (engine.LateLearner), zero without one.
func (p *Provider) NotFoundGrace() time.Duration {
	if l, ok := p.fallback.(engine.LateLearner); ok {
		return l.NotFoundGrace()
	}
	return 0
}

// RequireLiveWallets is the fallback's.
func (p *Provider) RequireLiveWallets() bool {
	r, ok := p.fallback.(interface{ RequireLiveWallets() bool })
	return ok && r.RequireLiveWallets()
}

// WalletsProven: a connected organization's bkash merchant (make_payment)
// wallets are proven by bKash's transaction search, in the deposit's
// transaction, so they need no device forwarding SMS (a fallback that
// requires one, RequireLiveWallets, still does for all others).
func (p *Provider) WalletsProven(ctx context.Context, tx engine.Tx, orgID string, m engine.Method) (bool, error) {
	if m.Channel != engine.ChannelBkash || m.Operation != engine.OperationMakePayment {
		return false, nil
	}
	st, ok := tx.(engine.SQLTx)
	if !ok {
		return false, nil
	}
	found := false
	err := st.QuerySQL(ctx, `SELECT organization_id FROM bkash_accounts WHERE organization_id = $1`, []any{orgID},
		func(scan func(...any) error) error {
			var id string
			found = true
			return scan(&id)
		})
	return found, err
}

// Credentials are what bKash issues a merchant for its API.
type Credentials struct {
	AppKey, AppSecret, Username, Password string
	// BaseURL is the API's, with its version (default DefaultBaseURL).
	BaseURL string
}

// ErrNotConnected is returned for an organization with no credentials.
var ErrNotConnected = errors.New("bkash: the organization is not connected")

func sealContext(kind, orgID string) string { return "bkash " + kind + " " + orgID }

// Connect stores an organization's credentials, sealed, replacing any
// earlier ones (and their token).
func (p *Provider) Connect(ctx context.Context, orgID string, c Credentials) error {
	if orgID == "" {
		return engine.Invalid("organization_id", "is required")
	}
	for name, v := range map[string]string{"app_key": c.AppKey, "app_secret": c.AppSecret, "username": c.Username, "password": c.Password} {
		if strings.TrimSpace(v) == "" {
			return engine.Invalid(name, "is required")
		}
	}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return engine.Invalid("base_url", "must be an http or https URL without a query")
	}
	raw, err := json.Marshal(credentials{AppKey: c.AppKey, AppSecret: c.AppSecret, Username: c.Username,
		Password: c.Password, BaseURL: strings.TrimRight(c.BaseURL, "/")})
	if err != nil {
		return err
	}
	// The audit entry names the URL, never a credential.
	err = p.store.putAccount(ctx, &Account{OrganizationID: orgID, Credentials: p.keyring.Seal(raw, sealContext("credentials", orgID)),
		ConnectedAt: p.now()}, p.auditEntry(ctx, AuditConnect, orgID, map[string]string{"base_url": strings.TrimRight(c.BaseURL, "/")}))
	p.forget(orgID)
	p.mu.Lock()
	delete(p.failedUntil, orgID) // new credentials are tried at once
	p.mu.Unlock()
	return err
}

// Disconnect forgets an organization's credentials and token; false if
// it had none.
func (p *Provider) Disconnect(ctx context.Context, orgID string) (bool, error) {
	ok, err := p.store.deleteAccount(ctx, orgID, p.auditEntry(ctx, AuditDisconnect, orgID, nil))
	p.forget(orgID)
	return ok, err
}

// Audit actions of Connect and Disconnect, with the actor of the context
// (engine.WithActor).
const (
	AuditConnect    = "bkash.connect"
	AuditDisconnect = "bkash.disconnect"
)

func (p *Provider) auditEntry(ctx context.Context, action, orgID string, details map[string]string) *engine.AuditEntry {
	now := p.now()
	return &engine.AuditEntry{ID: engine.NewID(engine.PrefixAudit, now), Actor: engine.ActorFrom(ctx), Action: action,
		OrganizationID: orgID, Subject: orgID, Details: details, CreatedAt: now}
}

// BaseURL is the API URL an organization is connected to, or
// ErrNotConnected.
func (p *Provider) BaseURL(ctx context.Context, orgID string) (string, error) {
	a, err := p.store.GetAccount(ctx, orgID)
	if errors.Is(err, engine.ErrNotFound) {
		return "", ErrNotConnected
	}
	if err != nil {
		return "", err
	}
	s, err := p.open(a)
	if err != nil {
		return "", err
	}
	return s.creds.BaseURL, nil
}

// Connected reports whether an organization has credentials.
func (p *Provider) Connected(ctx context.Context, orgID string) (bool, error) {
	_, err := p.store.GetAccount(ctx, orgID)
	if errors.Is(err, engine.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// unavailable says whether err is bKash's (unreachable, a refusal, an error
// code) rather than the database's.
func unavailable(err error) bool {
	var u *unreachable
	var a *apiError
	return errors.As(err, &u) || errors.As(err, &a) || errors.Is(err, errUnauthorized) ||
		errors.Is(err, context.DeadlineExceeded)
}

func (p *Provider) logFault(ctx context.Context, what, orgID string, err error) {
	// err names bKash's code or the kind of fault, never a credential.
	p.logger.WarnContext(ctx, "bkash: "+what, "organization_id", orgID, "error", err.Error())
}

func (p *Provider) now() time.Time { return p.clock.Now().UTC().Truncate(time.Microsecond) }

func (p *Provider) checkStore() error {
	if !p.hasStore {
		return errors.New("bkash: no store (Config.Store, or give the provider to payd.New)")
	}
	return nil
}

func (p *Provider) errorf(format string, args ...any) error {
	return fmt.Errorf("bkash: "+format, args...)
}
