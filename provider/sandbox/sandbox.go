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
	// PublicURL is the externally reachable base URL of the server that
	// serves the hosted checkout page, e.g. "http://localhost:8080".
	PublicURL string
	Payments  PaymentStore
	Payouts   PayoutStore
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
	publicURL   string
	payments    PaymentStore
	payouts     PayoutStore
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
	if cfg.PublicURL == "" || cfg.Payments == nil || cfg.Payouts == nil {
		return nil, errors.New("sandbox: PublicURL, Payments and Payouts are required")
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
		publicURL: strings.TrimRight(cfg.PublicURL, "/"), payments: cfg.Payments, payouts: cfg.Payouts,
		payoutMode: cfg.PayoutMode, payoutDelay: cfg.PayoutDelay, unavailable: map[string]bool{}, clock: cfg.Clock,
	}
	for _, m := range cfg.UnavailablePayoutMethods {
		p.unavailable[m] = true
	}
	return p, nil
}

// StartCheckout points the payer at payd's hosted checkout page for the
// deposit; the token makes the URL unguessable.
func (p *Provider) StartCheckout(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	return &engine.Checkout{URL: p.publicURL + "/checkout/" + req.Token}, nil
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

// PaymentParams is a simulated wallet payment as a payer would make it,
// in the contract's fields; Type is optional (cash_out, payment, send_money).
// OrganizationID is the sandbox it is recorded in, the only one whose
// deposits it can prove.
type PaymentParams struct {
	OrganizationID string
	Channel        string
	TransactionID  string
	PayerPhone     string
	RecipientPhone string
	Amount         string
	Status         string
	CompletedAt    string // RFC 3339; empty means now
	Type           string
}

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
