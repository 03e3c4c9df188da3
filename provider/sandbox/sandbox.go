// Package sandbox is payd's test-mode provider, modelled on Stripe's test
// mode: no money moves. Wallet payments are simulated by recording them
// (POST /api/sandbox/payments, or the pay button of the hosted checkout),
// lookups answer from those records, and a switch simulates an outage.
//
// Its records are its own tables, kept with its own SQL on the engine's
// store through engine.SQLTx (NewSQLStore): the stores never learn the
// sandbox's types, so a provider is added or removed without touching
// storage/.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd/engine"
)

// PaymentStore keeps simulated payments durably, so a payment recorded
// before a restart is still found after it. Each organization has a sandbox
// of its own: a payment one records is never found for another.
// NewSQLStore implements it on the engine's store.
type PaymentStore interface {
	// RecordSandboxPayment stores p for an organization. Returns
	// engine.ErrDuplicate if that organization has a payment with the same
	// channel and transaction ID.
	RecordSandboxPayment(ctx context.Context, organizationID string, p *engine.ProviderTransaction) error
	// GetSandboxPayment returns an organization's payment or
	// engine.ErrNotFound.
	GetSandboxPayment(ctx context.Context, organizationID, channel, transactionID string) (*engine.ProviderTransaction, error)
}

// Config configures the sandbox provider.
type Config struct {
	// PublicURL is the externally reachable URL where payd's handler is
	// mounted, which serves the hosted checkout page, e.g.
	// "http://localhost:8080" or "https://shop.example/payments". It may
	// be set later with SetPublicURL (payd.New does).
	PublicURL string
	// Store is the engine's store, on which the sandbox keeps its payments
	// and payouts (NewSQLStore). It may be left nil when the provider is
	// given to payd.New, which gives it the store the engine writes
	// through (JoinStore), so that its writes share the engine's commits.
	Store engine.Store
	// Payments and Payouts replace the tables on Store (a test's fakes).
	Payments PaymentStore
	Payouts  PayoutStore
	// PayoutMode is PayoutsAuto (the default) or PayoutsManual.
	PayoutMode string
	// PayoutDelay is how long an auto payout stays pending (default 2s).
	PayoutDelay time.Duration
	// UnavailablePayoutMethods are refused by CheckPayoutMethod, to try
	// the 503 path.
	UnavailablePayoutMethods []string
	// Clock defaults to the wall clock.
	Clock clock.Clock
}

// Provider is the sandbox implementation of engine.Provider.
type Provider struct {
	publicURL atomic.Pointer[string]
	// payments and payouts are set by New or, once, by JoinStore before
	// the provider is used; ownStore: they are the tables on a Store.
	payments    PaymentStore
	payouts     PayoutStore
	ownStore    bool
	payoutMode  string
	payoutDelay time.Duration
	unavailable map[string]bool
	clock       clock.Clock
	// outages holds the organizations whose simulated outage is on.
	outages sync.Map
}

var _ engine.Provider = (*Provider)(nil)

// New returns a sandbox provider.
func New(cfg Config) (*Provider, error) {
	if (cfg.Payments == nil) != (cfg.Payouts == nil) {
		return nil, errors.New("sandbox: Config.Payments and Config.Payouts are given together")
	}
	switch cfg.PayoutMode {
	case "":
		cfg.PayoutMode = PayoutsAuto
	case PayoutsAuto, PayoutsManual:
	default:
		return nil, fmt.Errorf("sandbox: payout mode must be auto or manual, not %q", cfg.PayoutMode)
	}
	if cfg.PayoutDelay <= 0 {
		cfg.PayoutDelay = 2 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	p := &Provider{
		payments: cfg.Payments, payouts: cfg.Payouts,
		payoutMode: cfg.PayoutMode, payoutDelay: cfg.PayoutDelay, unavailable: map[string]bool{}, clock: cfg.Clock,
	}
	p.SetPublicURL(cfg.PublicURL)
	if p.payments == nil && cfg.Store != nil {
		p.JoinStore(cfg.Store)
	} else if p.payments == nil {
		p.payments, p.payouts = noStore{}, noStore{}
		p.ownStore = true
	}
	for _, m := range cfg.UnavailablePayoutMethods {
		p.unavailable[m] = true
	}
	return p, nil
}

// SetPublicURL sets where payd's handler is reached (Config.PublicURL),
// for the checkouts started from now on.
func (p *Provider) SetPublicURL(u string) {
	u = strings.TrimRight(u, "/")
	p.publicURL.Store(&u)
}

// JoinStore keeps the sandbox's payments and payouts on s (NewSQLStore),
// unless Config gave Payments and Payouts of its own. payd.New calls it,
// before the provider is used, with the store the engine writes through
// (engine.GroupCommitted), so that the sandbox's writes, one per request,
// share the engine's commits instead of each taking one alone.
func (p *Provider) JoinStore(s engine.Store) {
	if p.payments != nil && !p.ownStore {
		return
	}
	sq := NewSQLStore(s)
	p.payments, p.payouts, p.ownStore = sq, sq, true
}

// StartCheckout points the payer at payd's hosted checkout page for the
// deposit; the token makes the URL unguessable.
func (p *Provider) StartCheckout(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	base := *p.publicURL.Load()
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, errors.New("sandbox: no public URL to send the payer to (Config.PublicURL or SetPublicURL)")
	}
	return &engine.Checkout{URL: base + "/checkout/" + req.Token}, nil
}

// LookupTransaction answers from the recorded payments, or reports the
// provider unavailable while the outage switch is on. Its not found is
// final (the sandbox is no engine.LateLearner): like a wallet's API it
// answers for the network, so an unknown ID fails its attempt at once and
// the payer may submit another.
func (p *Provider) LookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	if p.Outage(req.OrganizationID) {
		return nil, engine.ErrProviderUnavailable
	}
	t, err := p.payments.GetSandboxPayment(ctx, req.OrganizationID, req.Channel, req.TransactionID)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, engine.ErrTransactionNotFound
	}
	return t, err
}

// SetOutage switches an organization's simulated outage on or off: while
// on, every lookup and payout call for that organization answers
// engine.ErrProviderUnavailable. Other organizations are not affected.
func (p *Provider) SetOutage(organizationID string, down bool) {
	if down {
		p.outages.Store(organizationID, true)
	} else {
		p.outages.Delete(organizationID)
	}
}

// Outage reports whether an organization's simulated outage is on.
func (p *Provider) Outage(organizationID string) bool {
	_, down := p.outages.Load(organizationID)
	return down
}

// PaymentParams is a simulated wallet payment as a payer would make it
// (engine.SandboxPayment, the type the HTTP layer builds too).
type PaymentParams = engine.SandboxPayment

// RecordPayment validates and stores a simulated payment.
func (p *Provider) RecordPayment(ctx context.Context, params PaymentParams) (*engine.ProviderTransaction, error) {
	if params.OrganizationID == "" {
		return nil, errors.New("sandbox: a payment is recorded for an organization")
	}
	t := &engine.ProviderTransaction{Channel: params.Channel, Currency: engine.Currency, Type: params.Type}
	if !slices.Contains(engine.Channels(), params.Channel) {
		return nil, engine.Invalid("channel", "must be "+engine.OneOf(engine.Channels()))
	}
	var err error
	if t.TransactionID, err = engine.NormalizeTransactionID("transaction_id", params.TransactionID); err != nil {
		return nil, err
	}
	if t.PayerPhone, err = engine.NormalizePhone("payer_phone", params.PayerPhone); err != nil {
		return nil, err
	}
	if params.RecipientPhone != "" {
		if t.RecipientPhone, err = engine.NormalizePhone("recipient_phone", params.RecipientPhone); err != nil {
			return nil, err
		}
	}
	if t.Amount, err = engine.ParseAmount("amount", params.Amount); err != nil {
		return nil, err
	}
	switch params.Status {
	case engine.TransactionCompleted, engine.TransactionFailed:
		t.Status = params.Status
	default:
		return nil, engine.Invalid("status", "must be completed or failed")
	}
	switch params.Type {
	case "", engine.TransactionCashOut, engine.TransactionPayment, engine.TransactionSendMoney:
	default:
		return nil, engine.Invalid("type", "must be cash_out, payment or send_money")
	}
	t.CompletedAt = p.clock.Now().UTC().Truncate(time.Second)
	if params.CompletedAt != "" {
		if t.CompletedAt, err = time.Parse(time.RFC3339, params.CompletedAt); err != nil {
			return nil, engine.Invalid("completed_at", "must be an RFC 3339 time")
		}
		t.CompletedAt = t.CompletedAt.UTC()
	}
	if err := p.payments.RecordSandboxPayment(ctx, params.OrganizationID, t); errors.Is(err, engine.ErrDuplicate) {
		return nil, engine.Errorf(engine.CodeTransactionIDUsed, "transaction_id: %s is already recorded on %s", t.TransactionID, t.Channel)
	} else if err != nil {
		return nil, err
	}
	return t, nil
}

// noStore is the store of a sandbox built without one, before JoinStore:
// every call says what is missing.
type noStore struct{}

var errNoStore = errors.New("sandbox: no store (Config.Store, or give the provider to payd.New)")

func (noStore) RecordSandboxPayment(context.Context, string, *engine.ProviderTransaction) error {
	return errNoStore
}

func (noStore) GetSandboxPayment(context.Context, string, string, string) (*engine.ProviderTransaction, error) {
	return nil, errNoStore
}

func (noStore) CreateSandboxPayout(context.Context, string, *engine.Payout) error { return errNoStore }

func (noStore) GetSandboxPayout(context.Context, string) (*engine.Payout, string, error) {
	return nil, "", errNoStore
}

func (noStore) CompleteSandboxPayout(context.Context, *engine.Payout) error { return errNoStore }
