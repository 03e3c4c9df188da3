package engine_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydmock"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// fakeProvider is a wallet network whose payments a test writes directly.
type fakeProvider struct {
	paydmock.Provider // its functions are the methods below
	mu                sync.Mutex
	// payments are found by transaction ID alone, so a test can make the
	// provider report a payment on another channel than the one asked.
	payments map[string]*engine.ProviderTransaction
	down     bool
	// LookupFunc, when set, replaces the lookup.
	LookupFunc func(engine.LookupRequest) (*engine.ProviderTransaction, error)
	lookups    int

	// payouts is the provider's own book of payouts, by idempotency key:
	// what it really paid. sends counts SendPayout calls.
	payouts map[string]*engine.Payout
	sends   int
	// afterSend, when set, replaces the answer of a SendPayout that was
	// recorded: a provider that pays and then times out.
	afterSend func(*engine.Payout) (*engine.Payout, error)
	// payoutOutcome is what a pending payout becomes when next read;
	// "" leaves it pending.
	payoutOutcome string
	unavailable   map[string]bool
	// grace is its NotFoundGrace: zero, the default, makes not found final.
	grace time.Duration
}

// notFoundGrace makes the fake a LateLearner, final unless grace is set.
func (p *fakeProvider) notFoundGrace() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.grace
}

func newFakeProvider() *fakeProvider {
	p := &fakeProvider{payments: map[string]*engine.ProviderTransaction{}, payouts: map[string]*engine.Payout{}, unavailable: map[string]bool{}}
	p.StartCheckoutFunc = p.startCheckout
	p.LookupTransactionFunc = p.lookupTransaction
	p.CheckPayoutMethodFunc = p.checkPayoutMethod
	p.SendPayoutFunc = p.sendPayout
	p.GetPayoutFunc = p.getPayout
	p.NotFoundGraceFunc = p.notFoundGrace
	return p
}

func (p *fakeProvider) checkPayoutMethod(_ context.Context, method string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unavailable[method] {
		return engine.ErrMethodUnavailable
	}
	return nil
}

// SendPayout pays once per key, like a real provider with idempotency keys.
func (p *fakeProvider) sendPayout(_ context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sends++
	if p.down {
		return nil, engine.ErrProviderUnavailable
	}
	po, ok := p.payouts[req.IdempotencyKey]
	if !ok {
		po = &engine.Payout{IdempotencyKey: req.IdempotencyKey, Reference: "ref-" + req.IdempotencyKey,
			Method: req.Method, Account: req.Account, Amount: req.Amount, Status: engine.PayoutPending}
		p.payouts[req.IdempotencyKey] = po
	}
	c := *po
	if p.afterSend != nil {
		return p.afterSend(&c)
	}
	return &c, nil
}

func (p *fakeProvider) getPayout(_ context.Context, key string) (*engine.Payout, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return nil, engine.ErrProviderUnavailable
	}
	po, ok := p.payouts[key]
	if !ok {
		return nil, engine.ErrPayoutNotFound
	}
	if po.Status == engine.PayoutPending && p.payoutOutcome != "" {
		po.Status = p.payoutOutcome
		if po.Status == engine.PayoutFailed {
			po.Reason = "rejected"
		}
	}
	c := *po
	return &c, nil
}

func (p *fakeProvider) set(fn func(p *fakeProvider)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(p)
}

func (p *fakeProvider) startCheckout(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	return &engine.Checkout{URL: "https://pay.example/checkout/" + req.Token}, nil
}

func (p *fakeProvider) lookupTransaction(_ context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	p.mu.Lock()
	p.lookups++
	fn, down := p.LookupFunc, p.down
	t, ok := p.payments[req.TransactionID]
	p.mu.Unlock()
	switch {
	case fn != nil:
		return fn(req) // outside the lock: it may block
	case down:
		return nil, engine.ErrProviderUnavailable
	case !ok:
		return nil, engine.ErrTransactionNotFound
	}
	c := *t
	return &c, nil
}

func (p *fakeProvider) setLookup(fn func(engine.LookupRequest) (*engine.ProviderTransaction, error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.LookupFunc = fn
}

func (p *fakeProvider) pay(t engine.ProviderTransaction) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.payments[t.TransactionID] = &t
}

func (p *fakeProvider) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

// fixture is an engine over a real SQLite file, a mock clock and a fake
// provider, with one H2H organization that has a bKash agent wallet.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	kind     string // "sqlite" or "postgres"
	dsn      string // the SQLite path or the Postgres URL
	store    engine.Store
	clock    *clock.Mock
	provider *fakeProvider
	keyring  *engine.Keyring
	eng      *engine.Engine
	org      *engine.Organization
	wallet   *engine.Wallet
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

// stores are the store kinds every lifecycle test runs on.
var stores = []string{"sqlite", "postgres"}

// onEachStore runs fn as a subtest per store kind. The Postgres one skips,
// saying so, unless PAYD_TEST_POSTGRES_URL is set.
func onEachStore(t *testing.T, fn func(t *testing.T, newFixture func(t *testing.T) *fixture)) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			fn(t, func(t *testing.T) *fixture { return newFixtureOn(t, kind) })
		})
	}
}

func newFixtureOn(t *testing.T, kind string) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), kind: kind, clock: clock.NewMock(), provider: newFakeProvider()}
	if kind == "postgres" {
		f.dsn = pgtest.URL(t)
	} else {
		f.dsn = filepath.Join(t.TempDir(), "payd.db")
	}
	f.clock.Set(t0)
	var err error
	if f.keyring, err = engine.NewKeyring(make([]byte, engine.MasterKeySize)); err != nil {
		t.Fatal(err)
	}
	f.open()
	t.Cleanup(func() { f.store.Close() })
	creds, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{
		Name: ptr("Shop"), H2HEnabled: ptr(true),
		DepositFeePercent: ptr(decimal.RequireFromString("1.5")), DepositFeeFixed: ptr(decimal.RequireFromString("2")),
	})
	if err != nil {
		t.Fatal(err)
	}
	f.org = creds.Organization
	f.wallet = f.addWallet(f.org.ID, "bkash", "cash_out", "01811111111")
	return f
}

// open (re)opens the store and builds a new engine over it, as a restart.
func (f *fixture) open() {
	f.t.Helper()
	var err error
	if f.kind == "postgres" {
		f.store, err = postgres.Open(f.ctx, f.dsn)
	} else {
		f.store, err = sqlite.Open(f.ctx, f.dsn)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.eng, err = engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) addWallet(orgID, channel, operation, phone string) *engine.Wallet {
	f.t.Helper()
	w, err := f.eng.AddWallet(f.ctx, engine.AddWalletParams{OrganizationID: orgID, Channel: channel, Operation: operation, Phone: phone})
	if err != nil {
		f.t.Fatal(err)
	}
	return w
}

var merchantSeq int

// deposit creates an H2H deposit of amount for orgID with payment method m.
func (f *fixture) deposit(orgID, method, amount string) *engine.Deposit {
	f.t.Helper()
	merchantSeq++
	d, _, err := f.eng.CreateDeposit(f.ctx, engine.CreateDepositParams{
		OrganizationID: orgID, CheckoutMode: "h2h", Amount: amount, PaymentMethod: method,
		RedirectURL: "https://shop.example/r", MerchantID: "m-" + time.Now().Format("150405.000000") + "-" + decimal.NewFromInt(int64(merchantSeq)).String(),
		PayerPhone: "01712345678",
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

// payment is a completed cash-out matching deposit d, paid a minute in.
func (f *fixture) payment(d *engine.Deposit, txID string) engine.ProviderTransaction {
	return engine.ProviderTransaction{
		Channel: d.Channel, TransactionID: txID, Type: engine.TransactionCashOut, Status: engine.TransactionCompleted,
		Amount: d.Amount, Currency: "BDT", PayerPhone: d.PayerPhone, RecipientPhone: d.RecipientPhone,
		CompletedAt: d.CreatedAt.Add(time.Minute).Truncate(time.Second),
	}
}

func (f *fixture) submit(d *engine.Deposit, txID string) (*engine.Verification, error) {
	return f.eng.SubmitTransactionID(f.ctx, engine.VerifyParams{OrganizationID: d.OrganizationID, DepositID: d.ID, TransactionID: txID})
}

func (f *fixture) mustSubmit(d *engine.Deposit, txID string) *engine.Verification {
	f.t.Helper()
	v, err := f.submit(d, txID)
	if err != nil {
		f.t.Fatalf("submit %s: %v", txID, err)
	}
	return v
}

// process runs the verification worker once.
func (f *fixture) process() int {
	f.t.Helper()
	n, err := f.eng.ProcessAttempts(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) expire() int {
	f.t.Helper()
	n, err := f.eng.ExpireDeposits(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) get(d *engine.Deposit) *engine.Deposit {
	f.t.Helper()
	got, err := f.eng.GetDeposit(f.ctx, d.OrganizationID, d.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

func (f *fixture) balances(orgID string) map[string]decimal.Decimal {
	f.t.Helper()
	var b map[string]decimal.Decimal
	err := f.store.ReadTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		b, err = tx.AccountBalances(ctx, orgID)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// ledgerDifferences compares the organization's balance rows with the sums
// of its entries, in one snapshot.
func (f *fixture) ledgerDifferences(orgID string) []engine.LedgerDifference {
	f.t.Helper()
	var d []engine.LedgerDifference
	err := f.store.ReadTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
		b, err := tx.AccountBalances(ctx, orgID)
		if err != nil {
			return err
		}
		sums, err := tx.SumEntries(ctx, orgID)
		d = engine.DiffBalances(orgID, b, sums)
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return d
}

func (f *fixture) events(resourceID string) []*engine.Event {
	f.t.Helper()
	var evs []*engine.Event
	err := f.store.ReadTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		evs, err = tx.ListEvents(ctx, engine.ListEventsParams{ResourceID: resourceID})
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

func ptr[T any](v T) *T { return &v }

// wantState checks a deposit's status, verification state, attempts used,
// failure code and whether next_action is present.
func wantState(t *testing.T, f *fixture, d *engine.Deposit, status, verification string, used int, failure string, actionable bool) {
	t.Helper()
	got := f.get(d)
	if got.Status != status || got.VerificationState != verification || got.AttemptsUsed != used || got.FailureCode != failure {
		t.Fatalf("deposit is %s/%s used %d failure %q; want %s/%s used %d failure %q",
			got.Status, got.VerificationState, got.AttemptsUsed, got.FailureCode, status, verification, used, failure)
	}
	view := engine.DepositView(got, f.clock.Now(), "/api").(engine.H2HDeposit)
	if (view.NextAction != nil) != actionable {
		t.Fatalf("next_action present = %v, want %v", view.NextAction != nil, actionable)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := engine.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %s, want %s", err, got, code)
	}
}
