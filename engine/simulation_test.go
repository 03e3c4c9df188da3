package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
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

// Deterministic simulation: one engine over a store that fails at random
// (before a transaction, inside one at any write, and as a serialization
// failure that runs the transaction's function twice) and a provider that
// times out, answers late and stale, and pays then times out, driven by a
// seeded random walk of merchant requests, worker runs, clock jumps and
// process crashes under a mock clock. After every step the invariants are
// checked against the real store. Everything runs on one goroutine and every
// row is created at its own millisecond, so a seed replays exactly: a failure
// prints the flag that reproduces it.
var (
	simSeed  = flag.Uint64("sim.seed", 0, "run TestSimulation for this seed only (a failure prints its seed)")
	simSeeds = flag.Int("sim.seeds", 0, "how many seeds TestSimulation runs when -sim.seed is not given (default 12, 4 under -race)")
	simSteps = flag.Int("sim.steps", 250, "random steps per seed in TestSimulation")
)

// defaultSimSeeds is how many seeds a plain go test runs.
func defaultSimSeeds() int {
	switch {
	case *simSeeds > 0:
		return *simSeeds
	case raceEnabled:
		return 4
	}
	return 12
}

func TestSimulation(t *testing.T) {
	seeds := make([]uint64, 0, defaultSimSeeds())
	if *simSeed != 0 {
		seeds = append(seeds, *simSeed)
	} else {
		base := uint64(time.Now().UnixNano())
		for i := range defaultSimSeeds() {
			seeds = append(seeds, base+uint64(i))
		}
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		for i, seed := range seeds {
			if kind == "postgres" && i >= max(1, len(seeds)/4) {
				break // a database each: a quarter of the seeds
			}
			t.Run(fmt.Sprintf("%s/seed=%d", kind, seed), func(t *testing.T) {
				t.Parallel()
				sim := newSimulation(t, seed, kind)
				sim.run(*simSteps)
				t.Logf("seed %d: %s", seed, sim.summary())
			})
		}
	}
}

// A seed replays the same run: same steps, same outcomes, same state.
func TestSimulationIsDeterministic(t *testing.T) {
	seed := *simSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	steps := 120
	if raceEnabled {
		steps = 50
	}
	var traces [2]string
	for i := range traces {
		sim := newSimulation(t, seed, "sqlite")
		sim.run(steps)
		traces[i] = sim.trace.String()
	}
	if traces[0] != traces[1] {
		a, b := strings.Split(traces[0], "\n"), strings.Split(traces[1], "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("seed %d diverged at step line %d:\n  %s\n  %s", seed, i, a[i], b[i])
			}
		}
		t.Fatalf("seed %d: traces of %d and %d lines", seed, len(a), len(b))
	}
}

// errInjected is every failure the simulation makes up.
var errInjected = errors.New("injected failure")

// simStore is an engine.Store that fails at random.
type simStore struct {
	inner engine.Store
	rng   *rand.Rand
	on    bool // faults enabled
	// counts of what it did
	failedBefore, retried, failedAfterRun, failedInside int
}

var errSimRollback = errors.New("simulated serialization failure: roll back")

func (s *simStore) chance(p float64) bool { return s.on && s.rng.Float64() < p }

func (s *simStore) InTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	switch {
	case s.chance(0.03):
		// The database stayed busy through the store's own retries.
		s.failedBefore++
		return fmt.Errorf("%w: database busy", errInjected)
	case s.chance(0.04):
		// A serialization failure after fn ran: the store rolls back and
		// runs fn again, as InTx's contract allows.
		s.retried++
		err := s.inner.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			if err := fn(ctx, &simTx{tx, s}); err != nil {
				return err
			}
			return errSimRollback
		})
		if !errors.Is(err, errSimRollback) {
			return err
		}
	case s.chance(0.02):
		// The same, with the store's retries exhausted.
		s.failedAfterRun++
		err := s.inner.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			if err := fn(ctx, &simTx{tx, s}); err != nil {
				return err
			}
			return errSimRollback
		})
		if !errors.Is(err, errSimRollback) {
			return err
		}
		return fmt.Errorf("%w: could not serialize", errInjected)
	}
	return s.inner.InTx(ctx, func(ctx context.Context, tx engine.Tx) error { return fn(ctx, &simTx{tx, s}) })
}

func (s *simStore) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	if s.chance(0.02) {
		s.failedBefore++
		return fmt.Errorf("%w: read failed", errInjected)
	}
	return s.inner.ReadTx(ctx, fn)
}

func (s *simStore) Close() error { return s.inner.Close() }

// simTx fails a write now and then, mid-transaction.
type simTx struct {
	engine.Tx
	s *simStore
}

func (t *simTx) fail() error {
	if t.s.chance(0.01) {
		t.s.failedInside++
		return fmt.Errorf("%w: statement failed", errInjected)
	}
	return nil
}

func (t *simTx) CreateDeposit(ctx context.Context, d *engine.Deposit) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.CreateDeposit(ctx, d)
}

func (t *simTx) UpdateDeposit(ctx context.Context, d *engine.Deposit) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.UpdateDeposit(ctx, d)
}

func (t *simTx) LockDeposit(ctx context.Context, id string) (*engine.Deposit, error) {
	if err := t.fail(); err != nil {
		return nil, err
	}
	return t.Tx.LockDeposit(ctx, id)
}

func (t *simTx) CreateAttempt(ctx context.Context, a *engine.Attempt) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.CreateAttempt(ctx, a)
}

func (t *simTx) MarkTransactionSucceeded(ctx context.Context, a *engine.Attempt) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.MarkTransactionSucceeded(ctx, a)
}

func (t *simTx) UpdateAttempt(ctx context.Context, a *engine.Attempt) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.UpdateAttempt(ctx, a)
}

func (t *simTx) ClaimDueAttempts(ctx context.Context, p engine.ClaimParams) ([]*engine.Attempt, error) {
	if err := t.fail(); err != nil {
		return nil, err
	}
	return t.Tx.ClaimDueAttempts(ctx, p)
}

func (t *simTx) CreateJournal(ctx context.Context, j *engine.Journal) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.CreateJournal(ctx, j)
}

func (t *simTx) AccountBalances(ctx context.Context, orgID string) (map[string]decimal.Decimal, error) {
	if err := t.fail(); err != nil {
		return nil, err
	}
	return t.Tx.AccountBalances(ctx, orgID)
}

func (t *simTx) CreateWithdrawal(ctx context.Context, w *engine.Withdrawal) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.CreateWithdrawal(ctx, w)
}

func (t *simTx) UpdateWithdrawal(ctx context.Context, w *engine.Withdrawal) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.UpdateWithdrawal(ctx, w)
}

func (t *simTx) UpdateLeasedWithdrawal(ctx context.Context, w *engine.Withdrawal, owner string, leasedUntil time.Time) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.UpdateLeasedWithdrawal(ctx, w, owner, leasedUntil)
}

func (t *simTx) LockWithdrawal(ctx context.Context, orgID, id string) (*engine.Withdrawal, error) {
	if err := t.fail(); err != nil {
		return nil, err
	}
	return t.Tx.LockWithdrawal(ctx, orgID, id)
}

func (t *simTx) ClaimDuePayouts(ctx context.Context, p engine.ClaimParams) ([]*engine.Withdrawal, error) {
	if err := t.fail(); err != nil {
		return nil, err
	}
	return t.Tx.ClaimDuePayouts(ctx, p)
}

func (t *simTx) CreateEvent(ctx context.Context, e *engine.Event) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.CreateEvent(ctx, e)
}

func (t *simTx) CreateRefund(ctx context.Context, r *engine.Refund) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.CreateRefund(ctx, r)
}

func (t *simTx) UpdateLeasedRefund(ctx context.Context, r *engine.Refund, owner string, leasedUntil time.Time) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.UpdateLeasedRefund(ctx, r, owner, leasedUntil)
}

func (t *simTx) UpdateDepositRefunds(ctx context.Context, d *engine.Deposit) error {
	if err := t.fail(); err != nil {
		return err
	}
	return t.Tx.UpdateDepositRefunds(ctx, d)
}

func (t *simTx) ClaimDueRefunds(ctx context.Context, p engine.ClaimParams) ([]*engine.Refund, error) {
	if err := t.fail(); err != nil {
		return nil, err
	}
	return t.Tx.ClaimDueRefunds(ctx, p)
}

// simPayout is a payout as the provider's own book has it.
type simPayout struct {
	engine.Payout
	settleAt time.Time
	outcome  string
}

// simProvider is the money network: the truth about payments and payouts,
// told with timeouts, lag and stale answers.
type simProvider struct {
	paydmock.Provider // its functions are the methods below
	clock             *clock.Mock
	rng               *rand.Rand
	on                bool // faults enabled
	payments          map[string]*engine.ProviderTransaction
	visible           map[string]time.Time // when a payment shows in lookups
	payouts           map[string]*simPayout
	// refunds are its refunds, kept as payouts to the payer by refund ID.
	refunds  map[string]*simPayout
	lastSeen *engine.ProviderTransaction // for late answers of another lookup
	// crash, when set, is called once, after the next provider call has
	// had its effect: the process dies with the answer in flight.
	crash func()
	// stall, when set, is called once, before the next provider call
	// answers: the call hangs past its lease while another process works.
	stall    func()
	stalling bool
	// counts
	timeouts, stale, paidThenTimedOut int
	problems                          []string
}

func (p *simProvider) chance(prob float64) bool { return p.on && p.rng.Float64() < prob }

func (p *simProvider) stallIfAsked() {
	if p.stall != nil && !p.stalling {
		stall := p.stall
		p.stall, p.stalling = nil, true
		stall()
		p.stalling = false
	}
}

func (p *simProvider) dieIfAsked() bool {
	if p.crash != nil {
		p.crash()
		p.crash = nil
		return true
	}
	return false
}

var errProviderTimeout = fmt.Errorf("provider: %w", context.DeadlineExceeded)

func (p *simProvider) startCheckout(context.Context, engine.CheckoutRequest) (*engine.Checkout, error) {
	return nil, engine.ErrMethodUnavailable // the simulation uses instructions deposits only
}

func (p *simProvider) checkPayoutMethod(context.Context, string) error { return nil }

func (p *simProvider) lookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	defer p.stallIfAsked()
	if ctx.Err() != nil { // a dead process asks nothing
		return nil, ctx.Err()
	}
	defer p.dieIfAsked()
	switch {
	case p.chance(0.10):
		p.timeouts++
		return nil, errProviderTimeout
	case p.chance(0.04):
		return nil, engine.ErrProviderUnavailable
	case p.chance(0.03) && p.lastSeen != nil:
		// A late answer to an earlier lookup, for another transaction.
		p.stale++
		c := *p.lastSeen
		return &c, nil
	}
	t, ok := p.payments[req.TransactionID]
	if !ok || p.clock.Now().Before(p.visible[req.TransactionID]) {
		return nil, engine.ErrTransactionNotFound
	}
	p.lastSeen = t
	c := *t
	return &c, nil
}

func (p *simProvider) sendPayout(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	return p.send(ctx, p.payouts, req)
}

func (p *simProvider) getPayout(ctx context.Context, key string) (*engine.Payout, error) {
	return p.get(ctx, p.payouts, key)
}

// The provider refunds as it pays out, with the same faults, in a book of
// its own.

func (p *simProvider) CheckRefund(context.Context, engine.RefundRequest) error { return nil }

func (p *simProvider) SendRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	po, err := p.send(ctx, p.refunds, engine.PayoutRequest{IdempotencyKey: req.IdempotencyKey, OrganizationID: req.OrganizationID,
		Method: req.Channel, Account: req.PayerPhone, Amount: req.Amount})
	return simRefund(po, err)
}

func (p *simProvider) GetRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	return simRefund(p.get(ctx, p.refunds, req.IdempotencyKey))
}

func simRefund(po *engine.Payout, err error) (*engine.ProviderRefund, error) {
	if errors.Is(err, engine.ErrPayoutNotFound) {
		return nil, engine.ErrRefundNotFound
	}
	if err != nil {
		return nil, err
	}
	return &engine.ProviderRefund{IdempotencyKey: po.IdempotencyKey, Reference: po.Reference, Status: po.Status, Reason: po.Reason}, nil
}

func (p *simProvider) send(ctx context.Context, book map[string]*simPayout, req engine.PayoutRequest) (*engine.Payout, error) {
	defer p.stallIfAsked()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	defer p.dieIfAsked()
	if p.chance(0.08) { // lost before it reached the provider
		p.timeouts++
		return nil, errProviderTimeout
	}
	po, ok := book[req.IdempotencyKey]
	if !ok {
		now := p.clock.Now()
		po = &simPayout{
			Payout: engine.Payout{IdempotencyKey: req.IdempotencyKey, Reference: "ref-" + req.IdempotencyKey, Method: req.Method,
				Account: req.Account, Amount: req.Amount, Status: engine.PayoutPending, CreatedAt: now},
			settleAt: now.Add(time.Duration(p.rng.IntN(120)) * time.Second),
			outcome:  engine.PayoutSucceeded,
		}
		if p.rng.IntN(5) == 0 {
			po.outcome = engine.PayoutFailed
		}
		book[req.IdempotencyKey] = po
	} else if !po.Amount.Equal(req.Amount) || po.Account != req.Account || po.Method != req.Method {
		p.problems = append(p.problems, fmt.Sprintf("payout %s sent again with other terms: %s %s %s, first %s %s %s",
			req.IdempotencyKey, req.Method, req.Account, req.Amount, po.Method, po.Account, po.Amount))
	}
	if p.chance(0.10) { // paid, and the answer lost
		p.paidThenTimedOut++
		return nil, errProviderTimeout
	}
	return p.current(po), nil
}

func (p *simProvider) get(ctx context.Context, book map[string]*simPayout, key string) (*engine.Payout, error) {
	defer p.stallIfAsked()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	defer p.dieIfAsked()
	po, ok := book[key]
	switch {
	case p.chance(0.10):
		p.timeouts++
		return nil, errProviderTimeout
	case ok && p.chance(0.05):
		// A stale replica: the payout as first recorded, still pending.
		p.stale++
		c := po.Payout
		c.Status = engine.PayoutPending
		return &c, nil
	case ok && p.chance(0.03) && p.clock.Now().Sub(po.CreatedAt) < 30*time.Second:
		// Not visible yet on the replica that answered.
		p.stale++
		return nil, engine.ErrPayoutNotFound
	case !ok:
		return nil, engine.ErrPayoutNotFound
	}
	return p.current(po), nil
}

// current settles a payout once its time has come and returns a copy.
func (p *simProvider) current(po *simPayout) *engine.Payout {
	if po.Status == engine.PayoutPending && !p.clock.Now().Before(po.settleAt) {
		po.Status = po.outcome
		if po.outcome == engine.PayoutFailed {
			po.Reason = "rejected by the recipient's wallet"
		}
		po.CompletedAt = p.clock.Now()
	}
	c := po.Payout
	return &c
}

// simDeposit and simWithdrawal are what the driver knows of its requests.
type simDeposit struct {
	d    *engine.Deposit
	txID string // the payer's payment, "" if not paid (yet)
}

type simWithdrawal struct {
	id, merchantID string
}

type simRefundReq struct {
	id, merchantID string
}

// simulation is one seeded run.
type simulation struct {
	t        *testing.T
	seed     uint64
	ctx      context.Context
	clock    *clock.Mock
	inner    engine.Store // the real store, for setup and checks
	store    *simStore
	provider *simProvider
	keyring  *engine.Keyring
	eng      *engine.Engine // the faulty engine, replaced on a crash
	rng      *rand.Rand     // the driver's choices
	org      string
	wallets  []string

	deposits    []*simDeposit
	withdrawals []*simWithdrawal
	refunds     []*simRefundReq
	// terminal remembers every terminal status seen, by resource ID.
	terminal map[string]string
	// last is the previous snapshot: between full reads, resources in a
	// terminal status are taken from it rather than read again.
	last   *simState
	trace  strings.Builder
	step   int
	counts map[string]int
}

func newSimulation(t *testing.T, seed uint64, kind string) *simulation {
	t.Helper()
	ctx := context.Background()
	var inner engine.Store
	var err error
	if kind == "postgres" {
		inner, err = postgres.Open(ctx, pgtest.URL(t))
	} else {
		inner, err = sqlite.Open(ctx, filepath.Join(simDir(t), "sim.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	s := &simulation{
		t: t, seed: seed, ctx: ctx, clock: clock.NewMock(), inner: inner,
		rng:      rand.New(rand.NewPCG(seed, 1)),
		terminal: map[string]string{}, counts: map[string]int{},
	}
	s.clock.Set(t0)
	s.store = &simStore{inner: inner, rng: rand.New(rand.NewPCG(seed, 2))}
	s.provider = &simProvider{
		clock: s.clock, rng: rand.New(rand.NewPCG(seed, 3)),
		payments: map[string]*engine.ProviderTransaction{}, visible: map[string]time.Time{}, payouts: map[string]*simPayout{},
		refunds: map[string]*simPayout{},
	}
	sp := s.provider
	sp.StartCheckoutFunc, sp.LookupTransactionFunc, sp.CheckPayoutMethodFunc = sp.startCheckout, sp.lookupTransaction, sp.checkPayoutMethod
	sp.SendPayoutFunc, sp.GetPayoutFunc = sp.sendPayout, sp.getPayout
	if s.keyring, err = engine.NewKeyring(make([]byte, engine.MasterKeySize)); err != nil {
		t.Fatal(err)
	}
	// Setup, without faults.
	s.restart()
	creds, err := s.eng.CreateOrganization(ctx, engine.OrganizationSettings{
		Name: ptr("Sim"), H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true),
		DepositFeePercent: ptr(dec("1.5")), WithdrawCommissionPercent: ptr(dec("1")), WithdrawCommissionFixed: ptr(dec("5")),
	})
	if err != nil {
		t.Fatal(err)
	}
	s.org = creds.Organization.ID
	for i := range 2 {
		s.tick()
		w, err := s.eng.AddWallet(ctx, engine.AddWalletParams{OrganizationID: s.org, Channel: "bkash", Operation: "cash_out", Phone: fmt.Sprintf("0181111111%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		s.wallets = append(s.wallets, w.Phone)
	}
	s.tick()
	if _, err := s.eng.AdjustBalance(ctx, engine.AdjustParams{OrganizationID: s.org, Amount: "5000", Reason: "float", Actor: "sim"}); err != nil {
		t.Fatal(err)
	}
	s.store.on, s.provider.on = true, true
	return s
}

// simDir is a directory for a simulation's database: in memory (tmpfs)
// where there is one, since durability is not what the simulation checks
// and a synced write per transaction would dominate its time.
func simDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "payd-sim-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// restart is a new process: a new engine (and worker ID) over the store.
// Leases the old one held run out by themselves.
func (s *simulation) restart() {
	var err error
	s.eng, err = engine.New(engine.Config{
		Store: s.store, Provider: s.provider, Clock: s.clock, Keyring: s.keyring,
		LeaseDuration: time.Minute, ClaimBatch: 3, VerificationGrace: 5 * time.Minute,
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// tick moves the clock a millisecond, so every row has an ID and times of
// its own and the store's orders never fall back on random ID bits.
func (s *simulation) tick() { s.clock.Add(time.Millisecond) }

func (s *simulation) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d, step %d: %s\nreproduce: go test ./engine -run 'TestSimulation$' -sim.seed=%d -sim.steps=%d\ntrace tail:\n%s",
		s.seed, s.step, fmt.Sprintf(format, args...), s.seed, *simSteps, tail(s.trace.String(), 15))
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// expect accepts no error, a contract error, or an injected one (which the
// engine may wrap); anything else is a bug.
func (s *simulation) expect(what string, err error) string {
	s.t.Helper()
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, errInjected):
		return "injected"
	case errors.Is(err, context.Canceled):
		return "crashed"
	}
	var e *engine.Error
	if errors.As(err, &e) && e.Code != engine.CodeInternal {
		return e.Code
	}
	s.fatalf("%s: unexpected error %v", what, err)
	return ""
}

func (s *simulation) run(steps int) {
	type action struct {
		weight int
		name   string
		do     func() string
	}
	actions := []action{
		{12, "deposit", s.createDeposit},
		{10, "pay", s.pay},
		{14, "submit", s.submit},
		{10, "withdraw", s.createWithdrawal},
		{14, "attempts", func() string {
			n, err := s.eng.ProcessAttempts(s.ctx)
			return fmt.Sprintf("%d %s", n, s.expect("ProcessAttempts", err))
		}},
		{14, "payouts", func() string {
			n, err := s.eng.ProcessPayouts(s.ctx)
			return fmt.Sprintf("%d %s", n, s.expect("ProcessPayouts", err))
		}},
		{6, "refund", s.createRefund},
		{10, "refunds", func() string {
			n, err := s.eng.ProcessRefunds(s.ctx)
			return fmt.Sprintf("%d %s", n, s.expect("ProcessRefunds", err))
		}},
		{5, "expire", func() string {
			n, err := s.eng.ExpireDeposits(s.ctx)
			return fmt.Sprintf("%d %s", n, s.expect("ExpireDeposits", err))
		}},
		{10, "wait", func() string {
			d := time.Duration(1+s.rng.IntN(10_000)) * time.Millisecond
			s.clock.Add(d)
			return d.String()
		}},
		{4, "jump", func() string {
			d := time.Duration(30+s.rng.IntN(600)) * time.Second
			s.clock.Add(d)
			return d.String()
		}},
		{2, "restart", func() string { s.restart(); return "" }},
		{3, "crash", s.crashMidCall},
		{3, "stall", s.stallMidCall},
	}
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	for s.step = 1; s.step <= steps; s.step++ {
		s.tick()
		r := s.rng.IntN(total)
		var a action
		for _, a = range actions {
			if r < a.weight {
				break
			}
			r -= a.weight
		}
		s.counts[a.name]++
		out := a.do()
		st := s.readSome(s.step%10 == 0)
		fmt.Fprintf(&s.trace, "%d %s %s | %s\n", s.step, a.name, out, s.describe(st))
		s.check(st)
	}
	// Then the faults stop and time runs on: everything must resolve.
	s.store.on, s.provider.on = false, false
	for i := 0; i < 200 && !s.settled(); i++ {
		s.clock.Add(30 * time.Second)
		for _, run := range []func(context.Context) (int, error){s.eng.ProcessAttempts, s.eng.ProcessPayouts, s.eng.ProcessRefunds, s.eng.ExpireDeposits} {
			if _, err := run(s.ctx); err != nil {
				s.fatalf("after the faults: %v", err)
			}
		}
		s.check(s.readSome(false))
	}
	s.check(s.read())
	if !s.settled() {
		s.fatalf("work left unresolved after the faults stopped: %s", s.describe(s.read()))
	}
	if len(s.provider.problems) > 0 {
		s.fatalf("provider saw: %v", s.provider.problems)
	}
}

// createDeposit asks for an instructions deposit. A failed request must
// leave nothing behind.
func (s *simulation) createDeposit() string {
	mid := fmt.Sprintf("dep-%d", len(s.deposits)+s.step*1000)
	amount := fmt.Sprintf("%d.%02d", 100+s.rng.IntN(1900), s.rng.IntN(100))
	d, _, err := s.eng.CreateDeposit(s.ctx, engine.CreateDepositParams{
		OrganizationID: s.org, CheckoutMode: "h2h", Amount: amount, PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/r", MerchantID: mid, PayerPhone: "01712345678",
	})
	out := s.expect("CreateDeposit", err)
	if err != nil {
		if _, err := s.getDepositByMerchantID(mid); !errors.Is(err, engine.ErrNotFound) {
			s.fatalf("CreateDeposit failed (%s) but deposit %s exists (%v)", out, mid, err)
		}
		return out
	}
	s.deposits = append(s.deposits, &simDeposit{d: d})
	return fmt.Sprintf("%s #%d %s", out, len(s.deposits)-1, amount)
}

func (s *simulation) getDepositByMerchantID(mid string) (*engine.Deposit, error) {
	var d *engine.Deposit
	err := s.inner.ReadTx(s.ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		d, err = tx.GetDepositByMerchantID(ctx, s.org, mid)
		return err
	})
	return d, err
}

// pay makes the payer pay a deposit: usually exactly, sometimes the wrong
// amount; the provider shows it after a lag.
func (s *simulation) pay() string {
	if len(s.deposits) == 0 {
		return "none"
	}
	// Payers pay soon after they ask: one of the latest deposits.
	i := max(0, len(s.deposits)-1-s.rng.IntN(4))
	sd := s.deposits[i]
	if sd.txID != "" {
		return fmt.Sprintf("#%d paid already", i)
	}
	sd.txID = fmt.Sprintf("SIM%04dX%d", i, s.step)
	amount := sd.d.Amount
	kind := "exact"
	if s.rng.IntN(8) == 0 {
		amount, kind = amount.Add(decimal.NewFromInt(1)), "wrong amount"
	}
	s.provider.payments[sd.txID] = &engine.ProviderTransaction{
		Channel: "bkash", TransactionID: sd.txID, Type: engine.TransactionCashOut, Status: engine.TransactionCompleted,
		Amount: amount, Currency: "BDT", PayerPhone: sd.d.PayerPhone, RecipientPhone: sd.d.RecipientPhone,
		CompletedAt: s.clock.Now().UTC().Truncate(time.Second),
	}
	s.provider.visible[sd.txID] = s.clock.Now().Add(time.Duration(s.rng.IntN(60)) * time.Second)
	return fmt.Sprintf("#%d %s", i, kind)
}

// submit sends a transaction ID for a deposit: its payment's, a made-up
// one, or another deposit's. A failed submission changes nothing.
func (s *simulation) submit() string {
	if len(s.deposits) == 0 {
		return "none"
	}
	// Mostly a payer who paid, submitting soon after.
	i := s.rng.IntN(len(s.deposits))
	for try := 0; try < 4 && s.rng.IntN(10) < 7; try++ {
		if j := max(0, len(s.deposits)-1-s.rng.IntN(6)); s.deposits[j].txID != "" {
			i = j
			break
		}
	}
	sd := s.deposits[i]
	txID, kind := sd.txID, "own"
	switch r := s.rng.IntN(10); {
	case txID == "" || r < 1:
		txID, kind = fmt.Sprintf("BOGUS%d", s.step), "made-up"
	case r < 2:
		if other := s.deposits[s.rng.IntN(len(s.deposits))]; other.txID != "" {
			txID, kind = other.txID, "another's"
		}
	case r < 3:
		txID, kind = strings.ToLower(txID), "own, lower case"
	}
	before := s.depositNow(sd.d.ID)
	_, err := s.eng.SubmitTransactionID(s.ctx, engine.VerifyParams{OrganizationID: s.org, DepositID: sd.d.ID, TransactionID: txID})
	out := s.expect("SubmitTransactionID", err)
	if after := s.depositNow(sd.d.ID); err != nil && (after.AttemptsUsed != before.AttemptsUsed || after.Status != before.Status) {
		s.fatalf("a refused submission (%s) changed deposit #%d: %s/%d -> %s/%d", out, i, before.Status, before.AttemptsUsed, after.Status, after.AttemptsUsed)
	}
	return fmt.Sprintf("#%d %s %s", i, kind, out)
}

// createWithdrawal asks for a payout; now and then it reuses a
// merchant_id or asks for more than the balance. A failed request leaves
// nothing behind.
func (s *simulation) createWithdrawal() string {
	mid := fmt.Sprintf("wd-%d", s.step)
	reused := len(s.withdrawals) > 0 && s.rng.IntN(10) == 0
	if reused {
		mid = s.withdrawals[s.rng.IntN(len(s.withdrawals))].merchantID
	}
	amount := fmt.Sprintf("%d", 100+s.rng.IntN(900))
	if s.rng.IntN(10) == 0 {
		amount = "24000"
	}
	w, err := s.eng.CreateWithdrawal(s.ctx, engine.CreateWithdrawalParams{
		OrganizationID: s.org, Amount: amount, Phone: fmt.Sprintf("0171%07d", s.rng.IntN(10_000_000)), PaymentMethod: "bkash", MerchantID: mid,
	})
	out := s.expect("CreateWithdrawal", err)
	if err != nil {
		var existing *engine.Withdrawal
		lookup := s.inner.ReadTx(s.ctx, func(ctx context.Context, tx engine.Tx) error {
			var err error
			existing, err = tx.GetWithdrawalByMerchantID(ctx, s.org, mid)
			return err
		})
		if !reused && !errors.Is(lookup, engine.ErrNotFound) {
			s.fatalf("CreateWithdrawal failed (%s) but withdrawal %s exists: %v %v", out, mid, existing, lookup)
		}
		if reused && out != engine.CodeMerchantIDExists && out != "injected" {
			s.fatalf("a reused merchant_id answered %s", out)
		}
		return out
	}
	if reused {
		s.fatalf("a reused merchant_id %s created withdrawal %s", mid, w.ID)
	}
	s.withdrawals = append(s.withdrawals, &simWithdrawal{w.ID, mid})
	return fmt.Sprintf("%s %s", out, amount)
}

// crashMidCall runs a worker whose process dies right after its next
// provider call took effect (a payout made, a lookup answered): the
// outcome is never recorded, the lease stays, and a new process goes on.
func (s *simulation) crashMidCall() string {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	s.provider.crash = cancel
	var n int
	var err error
	what := "attempts"
	switch s.rng.IntN(3) {
	case 0:
		what = "payouts"
		n, err = s.eng.ProcessPayouts(ctx)
	case 1:
		what = "refunds"
		n, err = s.eng.ProcessRefunds(ctx)
	default:
		n, err = s.eng.ProcessAttempts(ctx)
	}
	crashed := s.provider.crash == nil
	s.provider.crash = nil
	if err != nil && !errors.Is(err, context.Canceled) {
		s.expect("crashed worker", err)
	}
	s.restart()
	return fmt.Sprintf("%s %d crashed=%v", what, n, crashed)
}

// stallMidCall runs a worker whose next provider call hangs past its
// lease; meanwhile another process takes the work over and finishes it.
// When the call returns, the first worker must drop its stale outcome.
func (s *simulation) stallMidCall() string {
	other, err := engine.New(engine.Config{
		Store: s.store, Provider: s.provider, Clock: s.clock, Keyring: s.keyring,
		LeaseDuration: time.Minute, ClaimBatch: 3, VerificationGrace: 5 * time.Minute,
	})
	if err != nil {
		s.fatalf("%v", err)
	}
	took := ""
	s.provider.stall = func() {
		s.clock.Add(time.Minute + time.Second)
		na, err := other.ProcessAttempts(s.ctx)
		s.expect("other's ProcessAttempts", err)
		np, err := other.ProcessPayouts(s.ctx)
		s.expect("other's ProcessPayouts", err)
		nr, err := other.ProcessRefunds(s.ctx)
		s.expect("other's ProcessRefunds", err)
		took = fmt.Sprintf(" other took %d+%d+%d", na, np, nr)
	}
	var n int
	what := "attempts"
	switch s.rng.IntN(3) {
	case 0:
		what = "payouts"
		n, err = s.eng.ProcessPayouts(s.ctx)
	case 1:
		what = "refunds"
		n, err = s.eng.ProcessRefunds(s.ctx)
	default:
		n, err = s.eng.ProcessAttempts(s.ctx)
	}
	s.provider.stall = nil
	return fmt.Sprintf("%s %d %s%s", what, n, s.expect("stalled worker", err), took)
}

// createRefund refunds a deposit: mostly a succeeded one, of a part or
// all that is left (the amount omitted); now and then it reuses a
// merchant_id. A failed request leaves nothing behind.
func (s *simulation) createRefund() string {
	var paid []*simDeposit
	for _, sd := range s.deposits {
		if s.last != nil && s.last.deposits[sd.d.ID] != nil && s.last.deposits[sd.d.ID].Status == engine.StatusSucceeded {
			paid = append(paid, sd)
		}
	}
	if len(paid) == 0 {
		return "none paid"
	}
	sd := paid[s.rng.IntN(len(paid))]
	mid := fmt.Sprintf("rf-%d", s.step)
	reused := len(s.refunds) > 0 && s.rng.IntN(10) == 0
	if reused {
		mid = s.refunds[s.rng.IntN(len(s.refunds))].merchantID
	}
	p := engine.CreateRefundParams{OrganizationID: s.org, DepositID: sd.d.ID, MerchantID: mid}
	if s.rng.IntN(4) != 0 {
		p.Amount, p.AmountGiven = fmt.Sprintf("%d", 1+s.rng.IntN(int(sd.d.Amount.IntPart()))), true
	}
	r, created, err := s.eng.CreateRefund(s.ctx, p)
	out := s.expect("CreateRefund", err)
	if err != nil || !created {
		var existing *engine.Refund
		lookup := s.inner.ReadTx(s.ctx, func(ctx context.Context, tx engine.Tx) error {
			var err error
			existing, err = tx.GetRefundByMerchantID(ctx, s.org, mid)
			return err
		})
		if !reused && !errors.Is(lookup, engine.ErrNotFound) {
			s.fatalf("CreateRefund failed (%s) but refund %s exists: %v %v", out, mid, existing, lookup)
		}
		return out + " (none made)"
	}
	if reused {
		s.fatalf("a reused merchant_id %s created refund %s", mid, r.ID)
	}
	s.refunds = append(s.refunds, &simRefundReq{r.ID, mid})
	return fmt.Sprintf("%s %s", out, r.Amount.StringFixed(2))
}

func (s *simulation) depositNow(id string) *engine.Deposit {
	var d *engine.Deposit
	err := s.inner.ReadTx(s.ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		d, err = tx.GetDeposit(ctx, s.org, id)
		return err
	})
	if err != nil {
		s.fatalf("read deposit %s: %v", id, err)
	}
	return d
}

// simState is everything the checks read, in one snapshot.
type simState struct {
	deposits    map[string]*engine.Deposit
	attempts    map[string][]*engine.Attempt
	withdrawals map[string]*engine.Withdrawal
	refunds     map[string]*engine.Refund
	journals    []*engine.Journal
	events      []*engine.Event
	balances    map[string]decimal.Decimal
	sums        map[string]decimal.Decimal // of the entries, as SumEntries adds them
}

func (s *simulation) read() simState { return s.readSome(true) }

// readSome reads a snapshot; unless full, deposits and withdrawals whose
// status was terminal in the last one come from it (terminal statuses are
// absorbing, which the full reads every few steps check).
func (s *simulation) readSome(full bool) simState {
	st := simState{deposits: map[string]*engine.Deposit{}, attempts: map[string][]*engine.Attempt{}, withdrawals: map[string]*engine.Withdrawal{},
		refunds: map[string]*engine.Refund{}}
	err := s.inner.ReadTx(s.ctx, func(ctx context.Context, tx engine.Tx) error {
		for _, sd := range s.deposits {
			if last := s.last; !full && last != nil && last.deposits[sd.d.ID] != nil && last.deposits[sd.d.ID].IsTerminal() &&
				last.deposits[sd.d.ID].Status != engine.StatusSucceeded {
				st.deposits[sd.d.ID], st.attempts[sd.d.ID] = last.deposits[sd.d.ID], last.attempts[sd.d.ID]
				continue
			}
			d, err := tx.GetDeposit(ctx, s.org, sd.d.ID)
			if err != nil {
				return fmt.Errorf("deposit %s: %w", sd.d.ID, err)
			}
			st.deposits[d.ID] = d
			if st.attempts[d.ID], err = tx.ListAttempts(ctx, d.ID); err != nil {
				return err
			}
		}
		for _, sw := range s.withdrawals {
			if last := s.last; !full && last != nil && last.withdrawals[sw.id] != nil && last.withdrawals[sw.id].Status != engine.WithdrawalProcessing {
				st.withdrawals[sw.id] = last.withdrawals[sw.id]
				continue
			}
			w, err := tx.GetWithdrawal(ctx, s.org, sw.id)
			if err != nil {
				return fmt.Errorf("withdrawal %s: %w", sw.id, err)
			}
			st.withdrawals[w.ID] = w
		}
		for _, sr := range s.refunds {
			r, err := tx.GetRefund(ctx, s.org, sr.id)
			if err != nil {
				return fmt.Errorf("refund %s: %w", sr.id, err)
			}
			st.refunds[r.ID] = r
		}
		var err error
		if st.journals, err = tx.ListJournals(ctx, s.org); err != nil {
			return err
		}
		if st.events, err = tx.ListEvents(ctx, engine.ListEventsParams{OrganizationID: s.org}); err != nil {
			return err
		}
		if st.balances, err = tx.AccountBalances(ctx, s.org); err != nil {
			return err
		}
		st.sums, err = tx.SumEntries(ctx, s.org)
		return err
	})
	if err != nil {
		s.fatalf("read state: %v", err)
	}
	s.last = &st
	return st
}

// describe is a one-line summary for the trace, free of random IDs.
func (s *simulation) describe(st simState) string {
	count := map[string]int{}
	for _, d := range st.deposits {
		count["dep:"+d.Status]++
	}
	for _, w := range st.withdrawals {
		count["wd:"+w.Status]++
	}
	for _, r := range st.refunds {
		count["rf:"+r.Status]++
	}
	return fmt.Sprintf("dep %d/%d/%d/%d ok/refunded/failed/expired, wd %d/%d/%d processing/ok/failed, rf %d/%d/%d processing/ok/failed, available %s held %s",
		count["dep:succeeded"], count["dep:refunded"], count["dep:failed"], count["dep:expired"],
		count["wd:processing"], count["wd:succeeded"], count["wd:failed"],
		count["rf:processing"], count["rf:succeeded"], count["rf:failed"],
		st.balances[engine.AccountAvailable].StringFixed(2), st.balances[engine.AccountHeld].StringFixed(2))
}

// check holds every invariant against a snapshot of the real store.
func (s *simulation) check(st simState) {
	s.t.Helper()
	total := decimal.Zero
	for account, v := range st.balances {
		total = total.Add(v)
		if (account == engine.AccountAvailable || account == engine.AccountHeld) && v.IsNegative() {
			s.fatalf("%s balance negative: %s", account, v)
		}
	}
	if !total.IsZero() {
		s.fatalf("the ledger sums to %s", total)
	}
	// The balance rows are what the entries add up to, summed by the store
	// and again here from the journals.
	if d := engine.DiffBalances(s.org, st.balances, st.sums); len(d) > 0 {
		s.fatalf("balance rows differ from the sums of the entries: %+v", d)
	}
	fromJournals := map[string]decimal.Decimal{}
	journals := map[string]int{}
	for _, j := range st.journals {
		journals[j.Kind+" "+j.Reference]++
		sum := decimal.Zero
		for _, e := range j.Entries {
			sum = sum.Add(e.Amount)
			fromJournals[e.Account] = fromJournals[e.Account].Add(e.Amount)
		}
		if !sum.IsZero() {
			s.fatalf("journal %s %s does not balance: %s", j.Kind, j.Reference, sum)
		}
	}
	if d := engine.DiffBalances(s.org, st.balances, fromJournals); len(d) > 0 {
		s.fatalf("balance rows differ from the journals: %+v", d)
	}
	events := map[string]int{}
	for _, e := range st.events {
		if events[e.Type+" "+e.ResourceID]++; events[e.Type+" "+e.ResourceID] > 1 {
			s.fatalf("%s written twice for %s", e.Type, e.ResourceID)
		}
	}
	for i, sd := range s.deposits {
		d, as := st.deposits[sd.d.ID], st.attempts[sd.d.ID]
		credits := journals[engine.JournalDepositCredit+" "+d.ID]
		switch {
		case credits > 1:
			s.fatalf("deposit #%d credited %d times", i, credits)
		case (credits == 1) != (d.Status == engine.StatusSucceeded || d.Status == engine.StatusRefunded):
			s.fatalf("deposit #%d is %s with %d credits", i, d.Status, credits)
		case len(as) > engine.MaxAttempts || d.AttemptsUsed > engine.MaxAttempts || d.AttemptsUsed != len(as):
			s.fatalf("deposit #%d: %d attempts, %d used", i, len(as), d.AttemptsUsed)
		}
		running, succeeded := 0, 0
		for _, a := range as {
			if a.Running() {
				running++
			}
			if a.Status == engine.AttemptSucceeded {
				succeeded++
			}
			s.absorbing(a.ID, a.Status, a.Status == engine.AttemptSucceeded || a.Status == engine.AttemptFailed)
		}
		if running > 1 || succeeded > 1 || (running == 1) != (d.Status == engine.StatusProcessing) {
			s.fatalf("deposit #%d is %s with %d attempts running and %d succeeded", i, d.Status, running, succeeded)
		}
		// Succeeded is terminal but for refunds: it may become refunded.
		if prev := s.terminal[d.ID+" paid"]; prev != "" && d.Status != engine.StatusSucceeded && d.Status != engine.StatusRefunded {
			s.fatalf("deposit #%d left %s for %s", i, prev, d.Status)
		}
		if d.Status == engine.StatusSucceeded {
			s.terminal[d.ID+" paid"] = d.Status
		} else {
			s.absorbing(d.ID, d.Status, d.IsTerminal())
		}
		if d.Status == engine.StatusSucceeded || d.Status == engine.StatusRefunded {
			// Credited only for what the provider really shows, exactly.
			p := s.provider.payments[d.ProviderTransactionID]
			if p == nil || !p.Amount.Equal(d.Amount) || p.RecipientPhone != d.RecipientPhone || p.PayerPhone != d.PayerPhone {
				s.fatalf("deposit #%d succeeded on %s, which the provider shows as %+v", i, d.ProviderTransactionID, p)
			}
			if events[engine.EventDepositSucceeded+" "+d.ID] != 1 {
				s.fatalf("deposit #%d succeeded without its event", i)
			}
		}
	}
	for i, sw := range s.withdrawals {
		w := st.withdrawals[sw.id]
		holds, settles, releases := journals[engine.JournalWithdrawalHold+" "+w.ID], journals[engine.JournalWithdrawalSettle+" "+w.ID], journals[engine.JournalWithdrawalRelease+" "+w.ID]
		po := s.provider.payouts[w.ID]
		switch {
		case holds != 1:
			s.fatalf("withdrawal #%d held %d times", i, holds)
		case w.Status == engine.WithdrawalProcessing && settles+releases != 0,
			w.Status == engine.WithdrawalSucceeded && (settles != 1 || releases != 0),
			w.Status == engine.WithdrawalFailed && (settles != 0 || releases != 1):
			s.fatalf("withdrawal #%d is %s with %d settlements and %d releases", i, w.Status, settles, releases)
		case w.Status != engine.WithdrawalProcessing && (po == nil || po.Status != w.Status):
			s.fatalf("withdrawal #%d is %s but the provider's book says %+v", i, w.Status, po)
		case events[engine.EventWithdrawCreated+" "+w.ID] != 1:
			s.fatalf("withdrawal #%d has no withdraw.created event", i)
		}
		s.absorbing(w.ID, w.Status, w.Status != engine.WithdrawalProcessing)
	}
	for key := range s.provider.payouts {
		if _, ok := st.withdrawals[key]; !ok {
			s.fatalf("the provider paid out %s, which is no withdrawal", key)
		}
	}
	s.checkRefunds(st, journals, events)
}

// checkRefunds: each refund held once, settled or released once as its
// status says and as the provider's book has it, with its events; a
// deposit's totals are its refunds' sums and never exceed it; it is
// refunded exactly when its succeeded refunds reach its amount.
func (s *simulation) checkRefunds(st simState, journals, events map[string]int) {
	reserved, refunded := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	for i, sr := range s.refunds {
		r := st.refunds[sr.id]
		holds, settles, releases := journals[engine.JournalRefundHold+" "+r.ID], journals[engine.JournalRefundSettle+" "+r.ID], journals[engine.JournalRefundRelease+" "+r.ID]
		po := s.provider.refunds[r.ID]
		switch {
		case holds != 1:
			s.fatalf("refund #%d held %d times", i, holds)
		case r.Status == engine.RefundProcessing && settles+releases != 0,
			r.Status == engine.RefundSucceeded && (settles != 1 || releases != 0),
			r.Status == engine.RefundFailed && (settles != 0 || releases != 1):
			s.fatalf("refund #%d is %s with %d settlements and %d releases", i, r.Status, settles, releases)
		case r.Status != engine.RefundProcessing && (po == nil || po.Status != r.Status):
			s.fatalf("refund #%d is %s but the provider's book says %+v", i, r.Status, po)
		case events[engine.EventRefundCreated+" "+r.ID] != 1:
			s.fatalf("refund #%d has no refund.created event", i)
		case r.Status == engine.RefundSucceeded && events[engine.EventRefundSucceeded+" "+r.ID] != 1,
			r.Status == engine.RefundFailed && events[engine.EventRefundFailed+" "+r.ID] != 1:
			s.fatalf("refund #%d is %s without its event", i, r.Status)
		}
		s.absorbing(r.ID, r.Status, r.Status != engine.RefundProcessing)
		if r.Status != engine.RefundFailed {
			reserved[r.DepositID] = reserved[r.DepositID].Add(r.Amount)
		}
		if r.Status == engine.RefundSucceeded {
			refunded[r.DepositID] = refunded[r.DepositID].Add(r.Amount)
		}
	}
	for i, sd := range s.deposits {
		d := st.deposits[sd.d.ID]
		switch {
		case !d.RefundReserved.Equal(reserved[d.ID]) || !d.RefundedAmount.Equal(refunded[d.ID]):
			s.fatalf("deposit #%d: reserved %s refunded %s, its refunds add up to %s and %s", i, d.RefundReserved, d.RefundedAmount, reserved[d.ID], refunded[d.ID])
		case d.RefundReserved.GreaterThan(d.Amount):
			s.fatalf("deposit #%d of %s has %s reserved by refunds", i, d.Amount, d.RefundReserved)
		case (d.Status == engine.StatusRefunded) != (d.RefundedAmount.GreaterThanOrEqual(d.Amount) && d.RefundedAmount.IsPositive()):
			s.fatalf("deposit #%d is %s with %s of %s refunded", i, d.Status, d.RefundedAmount, d.Amount)
		case (events[engine.EventDepositRefunded+" "+d.ID] == 1) != (d.Status == engine.StatusRefunded):
			s.fatalf("deposit #%d is %s with %d deposit.refunded events", i, d.Status, events[engine.EventDepositRefunded+" "+d.ID])
		}
	}
	for key := range s.provider.refunds {
		if _, ok := st.refunds[key]; !ok {
			s.fatalf("the provider refunded %s, which is no refund", key)
		}
	}
}

// absorbing checks that a terminal status, once seen, never changes.
func (s *simulation) absorbing(id, status string, terminal bool) {
	if prev, ok := s.terminal[id]; ok && prev != status {
		s.fatalf("%s left terminal status %s for %s", id, prev, status)
	}
	if terminal {
		s.terminal[id] = status
	}
}

// settled reports whether no attempt runs and no payout is open.
func (s *simulation) settled() bool {
	st := s.readSome(false)
	for _, w := range st.withdrawals {
		if w.Status == engine.WithdrawalProcessing {
			return false
		}
	}
	for _, r := range st.refunds {
		if r.Status == engine.RefundProcessing {
			return false
		}
	}
	for _, d := range st.deposits {
		if d.Status == engine.StatusProcessing || d.Status == engine.StatusPending && !s.clock.Now().Before(d.ExpiresAt) {
			return false
		}
	}
	return true
}

func (s *simulation) summary() string {
	st := s.read()
	return fmt.Sprintf("%d steps %v; %d deposits, %d withdrawals, %d refunds; store faults: %d before, %d retried, %d after running, %d inside; provider: %d timeouts, %d stale answers, %d paid-then-timed-out; final %s",
		s.step-1, s.counts, len(st.deposits), len(st.withdrawals), len(st.refunds), s.store.failedBefore, s.store.retried, s.store.failedAfterRun,
		s.store.failedInside, s.provider.timeouts, s.provider.stale, s.provider.paidThenTimedOut, s.describe(st))
}
