// Package smsinbox is a provider for self-hosted deployments that take
// payments into their own bKash and Nagad wallets and prove them, as this
// market's self-hosted gateways do, from the transaction SMS the receiving
// phones get.
//
// A forwarder app on each receiving phone (a device) posts every incoming
// SMS to payd with the device's bearer token, and reports in between
// messages (heartbeats); a wallet whose phone goes silent leaves the
// recipient pool until it reports again. Only whitelisted sender IDs count
// (smsparse). A parsed message proves its transaction only if its new
// balance continues the wallet's chain of balances: the last known balance
// plus the message's change. A forged SMS cannot know the balance, so it is
// held and never counts; a forwarded copy is recognized by its text. A
// transaction ID submitted before its SMS arrives waits for it, up to
// Config.NotFoundGrace, and is looked up again the moment the SMS is
// proven; an SMS proven later still is matched or left to the operator
// (see NotFoundGrace).
//
// Payouts cannot be sent from an SMS: they go to an operator's queue, and
// the operator records the outcome of their own send, or the SMS of that
// send, once proven, records it when it fits exactly one queued payout.
//
// The inbox keeps its own tables with its own SQL, per dialect, on the
// engine's transactions (NewSQLStore, through engine.SQLTx), so its rows
// commit with the audit entries, wallets and attempts that go with them,
// and the stores never learn its types: a plug-in that owns its SQL can be
// added or removed without touching storage/ (River's drivers and their
// migration lines are the model). The other way, a persistence interface
// the storage adapters implement, would make every store import every
// provider. sqlstore.go says more.
package smsinbox

import (
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
)

// ID prefixes, and the prefix of device tokens.
const (
	PrefixDevice = "dev_"
	PrefixSMS    = "sms_"
	TokenPrefix  = "payd_dev_"
)

// Audit actions of the inbox's administrative changes.
const (
	AuditDeviceAdd      = "sms_device.add"
	AuditDeviceRevoke   = "sms_device.revoke"
	AuditWalletAnchor   = "sms_wallet.anchor"
	AuditPayoutComplete = "payout.complete"
	AuditPayoutFail     = "payout.fail"
)

// Limits of an incoming message.
const (
	maxSenderLength = 64
	maxBodyLength   = 4096
	// maxClockSkew is how far in the future a phone's received time may be.
	maxClockSkew = 5 * time.Minute
)

// Config configures the provider.
type Config struct {
	Store Store
	// Silence is how long a device may go without reporting (an SMS or a
	// heartbeat) before its wallets leave the recipient pool; default 5m.
	// Forwarders should report every minute or so.
	Silence time.Duration
	// NotFoundGrace is how long after its submission a transaction ID no
	// accepted SMS proves yet waits for one before its attempt fails
	// transaction_not_found; default DefaultNotFoundGrace.
	NotFoundGrace time.Duration
	// PublicURL is where payers reach payd's hosted checkout; with it, the
	// methods personal wallets serve (bkash, nagad, rocket: the catalog's
	// CheckoutOperation) are paid by Send Money on that page. Without it,
	// redirect deposits are method_unavailable. payd.New sets it
	// (SetPublicURL).
	PublicURL string
	// Clock defaults to the wall clock.
	Clock  clock.Clock
	Logger *slog.Logger
	// Keyring seals the devices' signing secrets; without it, no device
	// can sign (forwarders.go).
	Keyring *engine.Keyring
}

// Provider is the SMS inbox implementation of engine.Provider.
type Provider struct {
	store     Store
	publicURL atomic.Pointer[string]
	silence   time.Duration
	grace     time.Duration
	clock     clock.Clock
	logger    *slog.Logger
	engine    *engine.Engine
	keyring   *engine.Keyring
}

var _ engine.Provider = (*Provider)(nil)

// New returns an SMS inbox provider. Attach the engine that uses it before
// ingesting messages or recording payouts.
func New(cfg Config) (*Provider, error) {
	if cfg.Store == nil {
		return nil, errors.New("smsinbox: Store is required")
	}
	if cfg.Silence <= 0 {
		cfg.Silence = 5 * time.Minute
	}
	if cfg.NotFoundGrace <= 0 {
		cfg.NotFoundGrace = DefaultNotFoundGrace
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	p := &Provider{store: cfg.Store, silence: cfg.Silence, grace: cfg.NotFoundGrace, clock: cfg.Clock, logger: cfg.Logger,
		keyring: cfg.Keyring}
	p.SetPublicURL(cfg.PublicURL)
	return p, nil
}

// SetPublicURL sets where payers reach payd's handler (Config.PublicURL),
// for the checkouts started from now on.
func (p *Provider) SetPublicURL(u string) {
	u = strings.TrimRight(u, "/")
	p.publicURL.Store(&u)
}

// Silence is how long a device may go without reporting, unless it has a
// silence of its own (Config.Silence).
func (p *Provider) Silence() time.Duration { return p.silence }

// RequireLiveWallets is true: the inbox proves payments only to wallets
// whose device reports, so the engine it serves keeps the others out of
// the recipient pool (engine.Config.RequireLiveWallets).
func (p *Provider) RequireLiveWallets() bool { return true }

// Attach gives the provider the engine it serves, which it tells when a
// payment is proven (so a waiting attempt is looked up at once) and when an
// operator records a payout (so the withdrawal moves at once). The engine
// is built with the provider, hence this second step.
func (p *Provider) Attach(e *engine.Engine) { p.engine = e }

func (p *Provider) now() time.Time { return p.clock.Now().UTC() }
