package model

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/shopspring/decimal"
	"pgregory.net/rapid"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

// payoutPoll is the engine's PayoutPollInterval in this test; the model
// needs it to know when a pending payout is asked about again.
const payoutPoll = 5 * time.Second

// defaultSteps is the average length of an action sequence unless
// -rapid.steps says otherwise: shorter than rapid's 30, so that the default
// 100 checks take well under a minute with -race on SQLite. Fail files
// replay the draws they recorded, so seeds kept under testdata/rapid/
// assume this value; a soak with other steps simply skips them.
const defaultSteps = "20"

func TestMain(m *testing.M) {
	flag.Parse()
	stepsSet := false
	flag.Visit(func(f *flag.Flag) { stepsSet = stepsSet || f.Name == "rapid.steps" })
	if !stepsSet {
		if err := flag.Set("rapid.steps", defaultSteps); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// TestModel drives the engine and the model with the same random actions
// and compares them after every step. Each store kind gets one database;
// each rapid check gets organizations of its own in it.
func TestModel(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, kind)
			rapid.Check(t, h.check)
			h.logCoverage(t)
		})
	}
}

// TestModelRefunds is TestModel with refunds among the actions: created
// (parts, all that is left, too much, replays, another organization's),
// settled or failed by the provider, refused while it is down; their own
// invariants (a deposit's refunds never exceed it, its totals are its
// refunds' sums) and the ledger's hold after every step.
func TestModelRefunds(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, kind)
			h.refunds = true
			rapid.Check(t, h.check)
			h.logCoverage(t)
		})
	}
}

// harness is the engine under test: a real store, a mock clock and the fake
// provider, shared by every check of one store kind.
type harness struct {
	ctx   context.Context
	store engine.Store
	clock *clock.Mock
	fake  *fakeProvider
	eng   *engine.Engine
	// notFoundGrace is the fake provider's NotFoundGrace.
	notFoundGrace time.Duration
	// seq numbers the checks; transaction IDs carry it, since they are
	// unique per channel across every organization of the database.
	seq int
	// refunds adds the refund actions (TestModelRefunds): TestModel
	// draws as it did before refunds, so that its recorded seeds replay.
	refunds bool
	// seen counts the outcomes the checks reached (answers by operation,
	// deposit states, failure codes), logged with -v to judge coverage.
	seen map[string]int
}

// logCoverage logs how often each outcome was reached.
func (h *harness) logCoverage(t *testing.T) {
	keys := make([]string, 0, len(h.seen))
	for k := range h.seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-60s %d", k, h.seen[k])
	}
	t.Logf("outcomes reached over %d checks:%s", h.seq, b.String())
}

func newHarness(t *testing.T, kind string) *harness {
	ctx := context.Background()
	var store engine.Store
	var err error
	if kind == "postgres" {
		store, err = postgres.Open(ctx, pgtest.URL(t))
	} else {
		store, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{ctx: ctx, store: store, clock: clock.NewMock(), seen: map[string]int{}}
	// SQLite plays a provider whose not found is final (the sandbox),
	// Postgres one that learns of payments late (an SMS inbox's 2 minutes):
	// per store, not drawn, so the SQLite seeds replay their draws.
	if kind == "postgres" {
		h.notFoundGrace = 2 * time.Minute
	}
	h.fake = newFakeProvider(h.clock, h.notFoundGrace)
	h.clock.Set(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	h.eng, err = engine.New(engine.Config{
		Store: store, Provider: h.fake, Clock: h.clock, Keyring: keyring, PayoutPollInterval: payoutPoll,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// drain runs every worker until none has anything due.
func (h *harness) drain(rt *rapid.T) {
	for _, work := range []func(context.Context) (int, error){h.eng.ExpireDeposits, h.eng.ProcessAttempts, h.eng.ProcessPayouts, h.eng.ProcessRefunds} {
		for {
			n, err := work(h.ctx)
			if err != nil {
				rt.Fatalf("draining: %v", err)
			}
			if n == 0 {
				break
			}
		}
	}
}

func (h *harness) check(rt *rapid.T) {
	h.seq++
	// Whatever earlier checks left running is finished far in the past of
	// this one: their deposits are past every deadline and grace, their
	// payouts fail at the fake. The check starts on a whole hour, so that a
	// replay of it sees the same times of day.
	h.fake.reset()
	now := h.clock.Now()
	h.clock.Add(now.Add(2 * time.Hour).Truncate(time.Hour).Add(time.Hour).Sub(now))
	h.drain(rt)
	r := newRun(h, rt)
	rt.Repeat(r.actions())
	r.checkLedgerAPI()
}

// run is one check: two organizations, the model, and what the test
// remembers to build requests (never to decide outcomes).
type run struct {
	h  *harness
	m  *Model
	rt *rapid.T
	// orgs are the check's organizations; the first always has H2H and
	// withdrawals enabled.
	orgs   []string
	prefix string
	// t0 is when the check started.
	t0       time.Time
	txSeq    int
	requests map[string]DepositRequest // by deposit ID
	tokens   map[string]string         // checkout token by deposit ID
	// txIDs are the transaction IDs paid or submitted, oldest first;
	// paidFor lists those paid for each deposit.
	txIDs   []string
	paidFor map[string][]string
	// merchantIDs are the merchant_ids sent so far, by prefix.
	merchantIDs map[string][]string
	merchantSeq int
	// last are the engine's deposits and withdrawal statuses as the
	// previous step saw them, for the terminal-states-absorb invariant;
	// lastA the attempts' statuses, for the coverage log.
	last  map[string]engine.Deposit
	lastW map[string]string
	lastA map[string]string
	// attempts are the attempts of each deposit as last read; journals
	// and sums each organization's journals and account sums.
	attempts map[string][]*engine.Attempt
	journals map[string][]*engine.Journal
	sums     map[string]map[string]decimal.Decimal
	// listStep counts checkLists calls, which pick what to list by it.
	listStep int
}

var (
	walletKinds   = []string{"bkash/cash_out", "bkash/make_payment", "nagad/cash_out", "nagad/make_payment"}
	percentDraws  = []int64{0, 10_000, 15_000, 12_345, 250, 1_000_000}
	fixedDraws    = []int64{0, 20_000, 5, 50, 5_000}
	windowDraws   = []time.Duration{0, time.Minute, 2 * time.Minute, 5 * time.Minute}
	redirectDraws = []time.Duration{0, time.Minute, 3 * time.Minute}
)

func newRun(h *harness, rt *rapid.T) *run {
	r := &run{
		h: h, m: New(payoutPoll), rt: rt, prefix: fmt.Sprintf("K%d", h.seq), t0: h.clock.Now(),
		requests: map[string]DepositRequest{}, tokens: map[string]string{}, paidFor: map[string][]string{},
		merchantIDs: map[string][]string{},
		last:        map[string]engine.Deposit{}, lastW: map[string]string{}, lastA: map[string]string{},
		attempts: map[string][]*engine.Attempt{}, journals: map[string][]*engine.Journal{},
		sums: map[string]map[string]decimal.Decimal{},
	}
	r.m.NotFoundGrace = h.notFoundGrace
	for i := range 2 {
		o := &Org{
			H2H:                i == 0 || !rapid.Bool().Draw(rt, "second org without h2h"),
			Withdrawals:        i == 0 || !rapid.Bool().Draw(rt, "second org without withdrawals"),
			InstructionsWindow: rapid.SampledFrom(windowDraws).Draw(rt, "instructions window"),
			RedirectWindow:     rapid.SampledFrom(redirectDraws).Draw(rt, "redirect window"),
			DepositFee:         drawFee(rt, "deposit fee"),
			Commission:         drawFee(rt, "commission"),
			DepositFeeByMethod: map[string]FeeRule{},
			CommissionByMethod: map[string]FeeRule{},
			Wallets:            map[string]string{},
		}
		s := engine.OrganizationSettings{
			Name: ptr(fmt.Sprintf("Model %d/%d", h.seq, i)), H2HEnabled: ptr(o.H2H), WithdrawalsEnabled: ptr(o.Withdrawals),
			DepositFeePercent: ptr(decimal.New(o.DepositFee.Percent4, -4)), DepositFeeFixed: ptr(decimal.New(o.DepositFee.Fixed4, -4)),
			WithdrawCommissionPercent: ptr(decimal.New(o.Commission.Percent4, -4)), WithdrawCommissionFixed: ptr(decimal.New(o.Commission.Fixed4, -4)),
		}
		if o.InstructionsWindow != 0 {
			s.InstructionsWindow = ptr(o.InstructionsWindow)
		}
		if o.RedirectWindow != 0 {
			s.RedirectWindow = ptr(o.RedirectWindow)
		}
		if rapid.Bool().Draw(rt, "deposit fee override") {
			method := rapid.SampledFrom(redirectMethods).Draw(rt, "override method")
			rule := drawFee(rt, "override fee")
			o.DepositFeeByMethod[method] = rule
			s.DepositFees = map[string]*engine.FeeRule{method: engineRule(rule)}
		}
		if rapid.Bool().Draw(rt, "commission override") {
			method := rapid.SampledFrom(payoutMethodNames).Draw(rt, "override payout method")
			rule := drawFee(rt, "override commission")
			o.CommissionByMethod[method] = rule
			s.WithdrawCommissions = map[string]*engine.FeeRule{method: engineRule(rule)}
		}
		creds, err := h.eng.CreateOrganization(h.ctx, s)
		if err != nil {
			rt.Fatal(err)
		}
		o.ID = creds.Organization.ID
		for j, kind := range walletKinds {
			if (i == 0 && j == 0) || !rare(rt, "no wallet "+kind) {
				channel, operation, _ := strings.Cut(kind, "/")
				phone := fmt.Sprintf("01%d%08d", 8+i, 11000000+j)
				if _, err := h.eng.AddWallet(h.ctx, engine.AddWalletParams{
					OrganizationID: o.ID, Channel: channel, Operation: operation, Phone: phone, Name: "Agent",
				}); err != nil {
					rt.Fatal(err)
				}
				o.Wallets[kind] = phone
			}
		}
		r.m.AddOrg(o)
		r.orgs = append(r.orgs, o.ID)
		if opening := rapid.SampledFrom([]string{"50000", "0", "1000", "500000"}).Draw(rt, "opening float"); opening != "0" {
			if _, err := h.eng.AdjustBalance(h.ctx, engine.AdjustParams{OrganizationID: o.ID, Amount: opening, Reason: "opening float", Actor: "model"}); err != nil {
				rt.Fatal(err)
			}
			if code := r.m.Adjust(o.ID, opening, "opening float", "model"); code != "" {
				rt.Fatalf("model refused the opening float: %s", code)
			}
		}
	}
	return r
}

func drawFee(rt *rapid.T, label string) FeeRule {
	return FeeRule{
		Percent4: rapid.SampledFrom(percentDraws).Draw(rt, label+" percent (1e-4)"),
		Fixed4:   rapid.SampledFrom(fixedDraws).Draw(rt, label+" fixed (1e-4 BDT)"),
	}
}

func engineRule(r FeeRule) *engine.FeeRule {
	return &engine.FeeRule{Percent: decimal.New(r.Percent4, -4), Fixed: decimal.New(r.Fixed4, -4)}
}

func ptr[T any](v T) *T { return &v }

// now is the mock clock's time, which the engine reads too.
func (r *run) now() time.Time { return r.h.clock.Now().UTC() }

func (r *run) otherOrg(orgID string) string {
	if orgID == r.orgs[0] {
		return r.orgs[1]
	}
	return r.orgs[0]
}

func (r *run) newTxID() string {
	r.txSeq++
	id := fmt.Sprintf("%sTX%d", r.prefix, r.txSeq)
	r.txIDs = append(r.txIDs, id)
	return id
}

// code is the error code of err, "" for none.
func code(err error) string {
	if err == nil {
		return ""
	}
	return engine.ErrorCode(err)
}

// until runs one worker until it claims nothing more.
func (r *run) until(what string, work func(context.Context) (int, error)) {
	for {
		n, err := work(r.h.ctx)
		if err != nil {
			r.fatalf("%s: %v", what, err)
		}
		if n == 0 {
			return
		}
	}
}

// fatalf fails the check with a message that is the same on every replay
// of the run (see stable).
func (r *run) fatalf(format string, args ...any) {
	r.rt.Helper()
	r.rt.Fatal(r.stable(fmt.Sprintf(format, args...)))
}

var (
	// engineID is an identifier the engine made up.
	engineID = regexp.MustCompile(`\b(dep|wd|att|org|jnl|evt|key|wal)_[0-9a-z]{26}\b`)
	// timestamp is a time as time.Time or the contract prints it.
	timestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z| \+0000 UTC)`)
)

// stable rewrites a failure message so that it is the same on every replay
// of the run: rapid shrinks a failure only while its message repeats, and
// each replay runs in new organizations at a later time. Identifiers the
// engine made up become labels in creation order (orgA, deposit#2,
// deposit#2/attempt#1, withdrawal#1), the check's prefix leaves
// transaction IDs, and times become offsets from the check's start.
func (r *run) stable(msg string) string {
	var pairs []string
	for i, id := range r.orgs {
		pairs = append(pairs, id, "org"+string(rune('A'+i)))
	}
	for i, id := range r.m.DepositOrder {
		pairs = append(pairs, id, fmt.Sprintf("deposit#%d", i+1))
		for j, aid := range r.m.Deposits[id].Attempts {
			pairs = append(pairs, aid, fmt.Sprintf("deposit#%d/attempt#%d", i+1, j+1))
		}
	}
	for i, id := range r.m.WithdrawalOrder {
		pairs = append(pairs, id, fmt.Sprintf("withdrawal#%d", i+1))
	}
	pairs = append(pairs, r.prefix+"TX", "TX", strings.ToLower(r.prefix+"TX"), "tx")
	msg = strings.NewReplacer(pairs...).Replace(msg)
	msg = engineID.ReplaceAllString(msg, "${1}_(unknown to the model)")
	return timestamp.ReplaceAllStringFunc(msg, func(s string) string {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			if t, err = time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", s); err != nil {
				return s
			}
		}
		return "t0+" + t.Sub(r.t0).String()
	})
}

// wantCode compares the error code of an operation with the model's.
func (r *run) wantCode(op, detail string, err error, want string) {
	r.rt.Helper()
	if got := code(err); got != want {
		r.fatalf("%s %s: engine answered %q (%v), model expects %q", op, detail, got, err, want)
	}
	if want == "" {
		want = "ok"
	}
	r.h.seen[fmt.Sprintf("%-24s -> %s", op, want)]++
}

func poisha(d decimal.Decimal) int64 { return d.Shift(2).IntPart() }

func bdt(p int64) decimal.Decimal { return decimal.New(p, -2) }

func formatPoisha(p int64, style int) string {
	switch {
	case p%100 == 0 && style == 1:
		return fmt.Sprintf("%d", p/100)
	case p%10 == 0 && style == 2:
		return fmt.Sprintf("%d.%d", p/100, p%100/10)
	}
	return fmt.Sprintf("%d.%02d", p/100, p%100)
}

// ---- generators of request fields ----
//
// rapid favours small indices and shrinks towards them, so every list
// starts with the ordinary case and odd ones come later or behind rare().

var (
	h2hMethodNames    = []string{"bkash_agent", "bkash_merchant", "nagad_agent", "nagad_merchant", "bkash", "nagad"}
	redirectMethods   = []string{"bkash", "nagad", "upi", "upay", "bank", "bkash_agent", "nagad_agent", "upay_agent", "bkash_merchant", "nagad_merchant", "upay_merchant", "bangla_qr_merchant"}
	payoutMethodNames = []string{"bkash", "nagad", "upay", "bank"}
	oddAmounts        = []string{"100", "100.00", "99.99", "25000", "25000.01", "24999.99", "300000", "300000.01", "50000", "49999.99",
		"0", "1e3", "-5", "100.001", " 100", "0100", "", "abc", "500.", ".5", "1000000000000000"}
	payerPhones    = []string{"01712345678", "8801712345678", "+8801712345678", "01712345679"}
	badPhones      = []string{"0171234567", "01212345678", "+880 1712345678", ""}
	metadatas      = [][]byte{nil, []byte(`{"order":1}`), []byte(`{}`), []byte(`{ "order" : 1 }`), []byte(`{"order":1.0}`), []byte(`{"a":"x","b":2}`), []byte(`{"b":2,"a":"x"}`)}
	badMetadatas   = [][]byte{[]byte(`[1]`), []byte(`"x"`), []byte(`{"a":`)}
	redirectURLs   = []string{"https://shop.example/return", "https://shop.example/other", "ftp://shop.example/x", ""}
	bankAccounts   = []string{"12345678", "12345678901234567890", "00000000000000"}
	badAccounts    = []string{"1234567", "123456789012345678901", "1234567a"}
	malformedTxIDs = []string{"ab", " ab ", strings.Repeat("X", 65), "A B C", "   ", "TX\x01Y", "ÄBCD"}
)

// rare is true about one time in ten.
func rare(rt *rapid.T, label string) bool { return rapid.IntRange(0, 9).Draw(rt, label) == 9 }

// drawAmount is mostly a valid amount between lo and hi BDT, sometimes a
// boundary or a malformed one.
func drawAmount(rt *rapid.T, label string, lo, hi int64) string {
	if rare(rt, label+" is odd") {
		return rapid.SampledFrom(oddAmounts).Draw(rt, label)
	}
	p := rapid.Int64Range(lo*100, hi*100).Draw(rt, label+" (poisha)")
	return formatPoisha(p, rapid.IntRange(0, 2).Draw(rt, label+" spelling"))
}

// drawMerchantID is mostly a fresh merchant_id, sometimes one used before
// (a replay or a conflict), rarely a malformed one.
func (r *run) drawMerchantID(label, prefix string) string {
	rt := r.rt
	used := r.merchantIDs[prefix]
	switch {
	case rare(rt, label+" is malformed"):
		return rapid.SampledFrom([]string{"", prefix + "\nbad", strings.Repeat("m", 256)}).Draw(rt, label)
	case len(used) > 0 && rare(rt, label+" is reused"):
		return used[rapid.IntRange(0, len(used)-1).Draw(rt, label)]
	}
	r.merchantSeq++
	id := fmt.Sprintf("%s-%d", prefix, r.merchantSeq)
	r.merchantIDs[prefix] = append(used, id)
	return id
}

func drawURL(rt *rapid.T) string {
	if rare(rt, "redirect_url is odd") {
		return rapid.SampledFrom(redirectURLs).Draw(rt, "redirect_url")
	}
	return redirectURLs[0]
}

func drawPhone(rt *rapid.T, label string) string {
	if rare(rt, label+" is malformed") {
		return rapid.SampledFrom(badPhones).Draw(rt, label)
	}
	return rapid.SampledFrom(payerPhones).Draw(rt, label)
}

func drawMetadata(rt *rapid.T) []byte {
	if rare(rt, "metadata is malformed") {
		return rapid.SampledFrom(badMetadatas).Draw(rt, "metadata")
	}
	return rapid.SampledFrom(metadatas).Draw(rt, "metadata")
}

// drawOrg is mostly the first organization (H2H and withdrawals on).
func (r *run) drawOrg(label string) string {
	if rapid.IntRange(0, 3).Draw(r.rt, label) == 3 {
		return r.orgs[1]
	}
	return r.orgs[0]
}

// pickDeposit draws one of the check's deposits, skipping the action if
// there is none. The draw counts back from the newest (rapid favours small
// numbers, and the newest deposit is the likeliest to still be live); it
// is an index in creation order, so a replayed run picks the same one.
func (r *run) pickDeposit(label string) *Deposit {
	n := len(r.m.DepositOrder)
	if n == 0 {
		r.rt.Skip("no deposit yet")
	}
	return r.m.Deposits[r.m.DepositOrder[n-1-rapid.IntRange(0, n-1).Draw(r.rt, label+" (newest is 0)")]]
}

func (r *run) pickWithdrawal(label string) *Withdrawal {
	n := len(r.m.WithdrawalOrder)
	if n == 0 {
		r.rt.Skip("no withdrawal yet")
	}
	return r.m.Withdrawals[r.m.WithdrawalOrder[n-1-rapid.IntRange(0, n-1).Draw(r.rt, label+" (newest is 0)")]]
}

// ---- actions ----

func (r *run) actions() map[string]func(*rapid.T) {
	actions := map[string]func(*rapid.T){
		"create deposit":         r.createDeposit,
		"create withdrawal":      r.createWithdrawal,
		"cross-org reads":        r.crossOrg,
		"decide payout":          r.decidePayout,
		"ledger adjustment":      r.adjust,
		"pay":                    r.recordPayment,
		"payer cancels checkout": r.cancelCheckout,
		"provider toggles":       r.toggles,
		"replay deposit":         r.replayDeposit,
		"run workers":            r.runWorkers,
		"submit transaction id":  r.submit,
		"time passes":            r.advanceClock,
		"":                       r.invariants,
	}
	if r.h.refunds {
		actions["create refund"], actions["decide refund"] = r.createRefund, r.decideRefund
	}
	return actions
}

// createDeposit is an H2H or a redirect create, of any method.
func (r *run) createDeposit(rt *rapid.T) {
	req := DepositRequest{
		OrgID: r.drawOrg("org"), RedirectURL: drawURL(rt), MerchantID: r.drawMerchantID("merchant_id", "order"),
		Metadata: drawMetadata(rt),
	}
	if rapid.IntRange(0, 2).Draw(rt, "redirect checkout") < 2 {
		req.CheckoutMode = "h2h"
		req.Method = rapid.SampledFrom(h2hMethodNames).Draw(rt, "payment_method")
		if rare(rt, "payment_method is not h2h") {
			req.Method = rapid.SampledFrom([]string{"upi", "bank", "paypal"}).Draw(rt, "payment_method")
		}
		req.PayerPhone = drawPhone(rt, "payer.phone")
		req.Amount = drawAmount(rt, "amount", 100, 25_000)
	} else {
		req.CheckoutMode = rapid.SampledFrom([]string{"", "redirect"}).Draw(rt, "checkout_mode")
		if rare(rt, "checkout_mode is unknown") {
			req.CheckoutMode = "direct"
		}
		req.Method = rapid.SampledFrom(redirectMethods).Draw(rt, "payment_method")
		if rare(rt, "payment_method is unknown") {
			req.Method = "paypal"
		}
		lo, hi := int64(100), int64(25_000)
		if req.Method == "bank" {
			lo, hi = 25_000, 300_000
		}
		req.Amount = drawAmount(rt, "amount", lo, hi)
	}
	r.create(req)
}

// replayDeposit sends again the request of an existing deposit, identical,
// in an equivalent spelling, or with one immutable field changed.
func (r *run) replayDeposit(rt *rapid.T) {
	d := r.pickDeposit("deposit")
	req := r.requests[d.ID]
	switch rapid.SampledFrom([]string{"identical", "amount spelling", "phone spelling", "metadata spelling",
		"other amount", "other method", "other url", "other phone", "other metadata", "other mode"}).Draw(rt, "replay kind") {
	case "amount spelling":
		p, _ := ParseAmount(req.Amount)
		req.Amount = formatPoisha(p, rapid.IntRange(0, 2).Draw(rt, "spelling"))
	case "phone spelling":
		if req.PayerPhone != "" {
			local, _ := NormalizePhone(req.PayerPhone)
			req.PayerPhone = rapid.SampledFrom([]string{local, "880" + local[1:], "+880" + local[1:]}).Draw(rt, "spelling")
		}
	case "metadata spelling":
		switch string(req.Metadata) {
		case "":
			req.Metadata = []byte(`{}`)
		case `{"order":1}`:
			req.Metadata = []byte("{\n  \"order\": 1\n}")
		case `{"a":"x","b":2}`:
			req.Metadata = []byte(`{"b":2,"a":"x"}`)
		}
	case "other amount":
		p, _ := ParseAmount(req.Amount)
		req.Amount = formatPoisha(p+1, 0)
	case "other method":
		req.Method = rapid.SampledFrom(h2hMethodNames).Draw(rt, "other method")
	case "other url":
		req.RedirectURL = redirectURLs[1]
	case "other phone":
		req.PayerPhone = "01712345670"
	case "other metadata":
		req.Metadata = []byte(`{"order":2}`)
	case "other mode":
		if req.CheckoutMode == "h2h" {
			req.CheckoutMode, req.PayerPhone = "redirect", ""
		} else {
			req.CheckoutMode, req.PayerPhone = "h2h", payerPhones[0]
		}
	}
	r.create(req)
}

func (r *run) create(req DepositRequest) {
	d, created, err := r.h.eng.CreateDeposit(r.h.ctx, engine.CreateDepositParams{
		OrganizationID: req.OrgID, CheckoutMode: req.CheckoutMode, Amount: req.Amount, PaymentMethod: req.Method,
		RedirectURL: req.RedirectURL, MerchantID: req.MerchantID, PayerPhone: req.PayerPhone, Metadata: req.Metadata,
	})
	newID := ""
	if err == nil && created {
		newID = d.ID
	}
	want := r.m.CreateDeposit(r.now(), req, newID)
	r.wantCode("create deposit", fmt.Sprintf("%+v", req), err, want.Code)
	if err != nil {
		return
	}
	if d.ID != want.ID || created != want.Created {
		r.fatalf("create deposit: engine answered %s (created %v), model expects %s (created %v)", d.ID, created, want.ID, want.Created)
	}
	if created {
		r.requests[d.ID] = req
		r.tokens[d.ID] = d.CheckoutToken
	}
}

// crossOrg reads and verifies a resource through the other organization,
// and unknown IDs: every one must be not_found and change nothing.
func (r *run) crossOrg(rt *rapid.T) {
	switch rapid.SampledFrom([]string{"deposit", "verify", "withdrawal", "unknown"}).Draw(rt, "what") {
	case "deposit":
		d := r.pickDeposit("deposit")
		_, err := r.h.eng.GetDeposit(r.h.ctx, r.otherOrg(d.OrgID), d.ID)
		r.wantCode("cross-org get deposit", d.ID, err, CodeNotFound)
	case "verify":
		d := r.pickDeposit("deposit")
		other := r.otherOrg(d.OrgID)
		raw := r.drawTxID(d)
		v, err := r.h.eng.SubmitTransactionID(r.h.ctx, engine.VerifyParams{OrganizationID: other, DepositID: d.ID, TransactionID: raw})
		r.compareSubmit("cross-org verify", fmt.Sprintf("%q for %s", raw, d.ID), raw, v, err, func(newID string) SubmitResult {
			return r.m.SubmitTransactionID(r.now(), other, d.ID, raw, newID)
		})
	case "withdrawal":
		w := r.pickWithdrawal("withdrawal")
		_, err := r.h.eng.GetWithdrawal(r.h.ctx, r.otherOrg(w.OrgID), w.ID)
		r.wantCode("cross-org get withdrawal", w.ID, err, CodeNotFound)
	case "unknown":
		org := r.drawOrg("org")
		_, err := r.h.eng.GetDeposit(r.h.ctx, org, "dep_00000000000000000000000000")
		r.wantCode("get unknown deposit", "", err, CodeNotFound)
		_, err = r.h.eng.GetWithdrawal(r.h.ctx, org, "wd_00000000000000000000000000")
		r.wantCode("get unknown withdrawal", "", err, CodeNotFound)
	}
}

// mismatches are the ways a recorded payment can differ from its deposit.
var mismatches = []string{"none", "amount", "payer", "recipient", "after window", "failed", "channel", "type",
	"currency", "before window", "pending", "no type", "no currency", "at window start", "at window end", "minute precision"}

// recordPayment records in the fake provider the payment a payer made for
// a deposit, exactly right or wrong in one or two ways, and mostly submits
// its transaction ID, and then mostly runs the verification worker; or it
// completes a payment recorded as pending.
func (r *run) recordPayment(rt *rapid.T) {
	d := r.pickDeposit("deposit")
	if ids := r.paidFor[d.ID]; len(ids) > 0 && rare(rt, "complete a pending one") {
		p := r.m.Payments[ids[rapid.IntRange(0, len(ids)-1).Draw(rt, "payment")]]
		if p.Status == PaymentPending {
			p.Status = PaymentCompleted
			r.pay(p)
			return
		}
	}
	// A payer who got it wrong may try again at once: up to four rounds
	// reach the attempt limit. A careless payer gets every round wrong.
	careless := rapid.Bool().Draw(rt, "careless payer")
	rounds := rapid.IntRange(1, 4).Draw(rt, "rounds (careless: 5 - rounds)")
	if careless {
		rounds = 5 - rounds // rapid favours small numbers: a careless payer mostly tries four times
	}
	for range rounds {
		r.payRound(d, careless)
	}
}

func (r *run) payRound(d *Deposit, careless bool) {
	rt := r.rt
	want := TypePayment
	if d.Operation == "cash_out" {
		want = TypeCashOut
	}
	payer := d.Payer
	if payer == "" {
		payer = "01700000000"
	}
	window := d.ExpiresAt.Sub(d.CreatedAt)
	p := Payment{
		Channel: d.Channel, TxID: r.newTxID(), Type: want, Status: PaymentCompleted, Amount: d.Amount, Currency: "BDT",
		Payer: payer, Recipient: d.Recipient,
		CompletedAt: d.CreatedAt.Add(time.Duration(rapid.Int64Range(0, int64(window/time.Second)).Draw(rt, "paid after (s)")) * time.Second),
	}
	for i := range 2 {
		kind := "none"
		switch {
		case i == 0 && careless:
			kind = rapid.SampledFrom(mismatches[1:10]).Draw(rt, "mismatch") // each one fails at once
		case i == 0 && rare(rt, "mismatched"), i == 1 && rare(rt, "mismatched twice"):
			kind = rapid.SampledFrom(mismatches[1:]).Draw(rt, "mismatch")
		}
		switch kind {
		case "channel":
			p.Channel = map[bool]string{true: "nagad", false: "bkash"}[d.Channel == "bkash"]
		case "type":
			p.Type = map[bool]string{true: TypePayment, false: TypeCashOut}[want == TypeCashOut]
		case "no type":
			p.Type = ""
		case "recipient":
			p.Recipient = "01899999999"
		case "payer":
			p.Payer = "01999999999"
		case "failed":
			p.Status = PaymentFailed
		case "pending":
			p.Status = PaymentPending
		case "amount":
			p.Amount += rapid.SampledFrom([]int64{1, -1, -100}).Draw(rt, "off by (poisha)")
		case "currency":
			p.Currency = "USD"
		case "no currency":
			p.Currency = ""
		case "before window":
			p.CompletedAt = d.CreatedAt.Add(-time.Second)
		case "after window":
			p.CompletedAt = d.ExpiresAt.Add(time.Second)
		case "at window start":
			p.CompletedAt = d.CreatedAt
		case "at window end":
			p.CompletedAt = d.ExpiresAt
		case "minute precision":
			p.Precision = time.Minute
			p.CompletedAt = d.CreatedAt.Truncate(time.Minute)
		}
	}
	r.paidFor[d.ID] = append(r.paidFor[d.ID], p.TxID)
	r.pay(p)
	if rare(rt, "not submitted") {
		return
	}
	r.submitTo(d, p.TxID)
	if !rare(rt, "the verification worker does not run") {
		r.processAttempts(rt)
	}
}

func (r *run) pay(p Payment) {
	r.m.Pay(p)
	r.h.fake.pay(engine.ProviderTransaction{
		Channel: p.Channel, TransactionID: p.TxID, Type: p.Type, Status: p.Status, Amount: bdt(p.Amount),
		Currency: p.Currency, PayerPhone: p.Payer, RecipientPhone: p.Recipient, CompletedAt: p.CompletedAt,
		TimePrecision: p.Precision,
	})
}

// drawTxID is a transaction ID to submit for d: one paid for it, any known
// one (used or not), a fresh unknown one, or a malformed one, in various
// spellings.
func (r *run) drawTxID(d *Deposit) string {
	rt := r.rt
	if rare(rt, "transaction id is malformed") {
		return rapid.SampledFrom(malformedTxIDs).Draw(rt, "malformed id")
	}
	var id string
	switch rapid.SampledFrom([]string{"paid for it", "known", "fresh"}).Draw(rt, "transaction id") {
	case "paid for it":
		if ids := r.paidFor[d.ID]; len(ids) > 0 {
			id = ids[rapid.IntRange(0, len(ids)-1).Draw(rt, "paid id")]
			break
		}
		fallthrough
	case "known":
		if len(r.txIDs) > 0 {
			id = r.txIDs[rapid.IntRange(0, len(r.txIDs)-1).Draw(rt, "known id")]
			break
		}
		fallthrough
	case "fresh":
		id = r.newTxID()
	}
	switch rapid.IntRange(0, 3).Draw(rt, "spelling") {
	case 1:
		id = strings.ToLower(id)
	case 2:
		id = "  " + id + "\t"
	}
	return id
}

// submit sends a transaction ID for a deposit: through verify (H2H), or
// through the hosted checkout of a redirect action.
func (r *run) submit(rt *rapid.T) {
	d := r.pickDeposit("deposit")
	r.submitTo(d, r.drawTxID(d))
}

func (r *run) submitTo(d *Deposit, raw string) {
	rt := r.rt
	if d.Action == ActionRedirect && !rare(rt, "verify a redirect action") {
		v, err := r.h.eng.SubmitCheckoutPayment(r.h.ctx, r.tokens[d.ID], raw)
		r.compareSubmit("checkout payment", fmt.Sprintf("%q for %s", raw, d.ID), raw, v, err, func(newID string) SubmitResult {
			return r.m.SubmitCheckoutPayment(r.now(), d.ID, raw, newID)
		})
		return
	}
	if d.Action == ActionInstructions && rare(rt, "through a checkout token") {
		v, err := r.h.eng.SubmitCheckoutPayment(r.h.ctx, r.tokens[d.ID], raw)
		r.compareSubmit("checkout payment", fmt.Sprintf("%q for %s", raw, d.ID), raw, v, err, func(newID string) SubmitResult {
			return r.m.SubmitCheckoutPayment(r.now(), d.ID, raw, newID)
		})
		return
	}
	v, err := r.h.eng.SubmitTransactionID(r.h.ctx, engine.VerifyParams{OrganizationID: d.OrgID, DepositID: d.ID, TransactionID: raw})
	r.compareSubmit("verify", fmt.Sprintf("%q for %s", raw, d.ID), raw, v, err, func(newID string) SubmitResult {
		return r.m.SubmitTransactionID(r.now(), d.OrgID, d.ID, raw, newID)
	})
}

func (r *run) compareSubmit(op, what, raw string, v *engine.Verification, err error, model func(newID string) SubmitResult) {
	newID := ""
	if err == nil {
		newID = v.Attempt.ID
		if _, known := r.m.Attempts[newID]; known {
			newID = "" // a repeat: the model must say so
		}
	}
	want := model(newID)
	r.wantCode(op, what, err, want.Code)
	if err != nil {
		return
	}
	if want.Repeat != (newID == "") || v.Attempt.ID != want.AttemptID {
		r.fatalf("%s %s: engine answered attempt %s, model expects %s (repeat %v)", op, what, v.Attempt.ID, want.AttemptID, want.Repeat)
	}
	if want.Repeat {
		r.h.seen[fmt.Sprintf("%-24s -> ok (a repeat)", op)]++
	}
	txID, _ := NormalizeTxID(raw)
	if v.Attempt.TransactionID != txID {
		r.fatalf("%s %s: attempt has transaction ID %q, want %q", op, what, v.Attempt.TransactionID, txID)
	}
	if md := r.m.Deposits[v.Deposit.ID]; v.Deposit.AttemptsUsed != md.Used {
		r.fatalf("%s %s: answered with %d attempts used, model has %d", op, what, v.Deposit.AttemptsUsed, md.Used)
	}
}

func (r *run) cancelCheckout(rt *rapid.T) {
	d := r.pickDeposit("deposit")
	_, err := r.h.eng.CancelCheckout(r.h.ctx, r.tokens[d.ID])
	r.wantCode("cancel checkout", d.ID, err, r.m.CancelCheckout(r.now(), d.ID))
}

// runWorkers runs the verification worker, the expiry sweep or the payout
// worker until it has nothing due, or all three in Engine.Run's order.
func (r *run) runWorkers(rt *rapid.T) {
	workers := []string{"all", "attempts", "expiry", "payouts"}
	if r.h.refunds {
		workers = append(workers, "refunds")
	}
	switch rapid.SampledFrom(workers).Draw(rt, "workers") {
	case "all":
		r.processAttempts(rt)
		r.processPayouts(rt)
		r.processRefunds(rt)
		r.expireDeposits(rt)
	case "refunds":
		r.processRefunds(rt)
	case "attempts":
		r.processAttempts(rt)
	case "expiry":
		r.expireDeposits(rt)
	case "payouts":
		r.processPayouts(rt)
	}
}

func (r *run) processAttempts(rt *rapid.T) {
	r.until("process attempts", r.h.eng.ProcessAttempts)
	r.m.ProcessAttempts(r.now())
}

func (r *run) expireDeposits(rt *rapid.T) {
	r.until("expire deposits", r.h.eng.ExpireDeposits)
	r.m.ExpireDeposits(r.now())
}

// advanceClock moves time forward: by a fixed step, to an attempt's next
// retry, or to just before, at or after a deposit's deadline or the end of
// its grace; and then, or not, runs every worker once.
func (r *run) advanceClock(rt *rapid.T) {
	now := r.now()
	target := now
	switch kind := rapid.SampledFrom([]string{"step", "step", "step", "retry", "deadline", "grace end"}).Draw(rt, "advance to"); kind {
	case "step":
		step := rapid.SampledFrom([]time.Duration{5 * time.Second, time.Second, 30 * time.Second, time.Minute, 2 * time.Minute}).Draw(rt, "step")
		if rare(rt, "long step") {
			step = rapid.SampledFrom([]time.Duration{5 * time.Minute, 16 * time.Minute, 31 * time.Minute}).Draw(rt, "long step")
		}
		target = now.Add(step)
	case "retry": // the earliest retry still ahead
		for _, id := range r.m.DepositOrder {
			for _, aid := range r.m.Deposits[id].Attempts {
				if a := r.m.Attempts[aid]; a.Running() && a.NextRun.After(now) && (target.Equal(now) || a.NextRun.Before(target)) {
					target = a.NextRun
				}
			}
		}
	case "deadline", "grace end":
		d := r.pickDeposit("deposit")
		target = d.ExpiresAt
		if kind == "grace end" {
			target = target.Add(Grace)
		}
		target = target.Add(time.Duration(rapid.IntRange(-1, 1).Draw(rt, "offset (s)")) * time.Second)
	}
	if !target.After(now) {
		rt.Skip("not forward")
	}
	r.h.clock.Add(target.Sub(now))
	if rapid.Bool().Draw(rt, "and the workers run") {
		r.processAttempts(rt)
		r.processPayouts(rt)
		r.processRefunds(rt)
		r.expireDeposits(rt)
	}
}

// toggles starts (or ends) an outage of the provider's lookups for a
// while, or switches the availability of a payout method.
func (r *run) toggles(rt *rapid.T) {
	if r.h.refunds && rare(rt, "refunds") {
		r.m.RefundsDown = !r.m.RefundsDown
		r.h.fake.setRefundsDown(r.m.RefundsDown)
		return
	}
	if rapid.Bool().Draw(rt, "payout method") {
		method := rapid.SampledFrom(payoutMethodNames).Draw(rt, "method")
		r.m.Unavailable[method] = !r.m.Unavailable[method]
		r.h.fake.setUnavailable(method, r.m.Unavailable[method])
		return
	}
	until := r.now().Add(rapid.SampledFrom([]time.Duration{30 * time.Second, 2 * time.Minute, 20 * time.Minute, 0}).Draw(rt, "outage for"))
	r.m.DownUntil = until
	r.h.fake.setDownUntil(until)
}

func (r *run) createWithdrawal(rt *rapid.T) {
	method := rapid.SampledFrom(payoutMethodNames).Draw(rt, "payment_method")
	if rare(rt, "payment_method is unknown") {
		method = "paypal"
	}
	lo, hi := int64(100), int64(25_000)
	phone := drawPhone(rt, "phone")
	if method == "bank" {
		lo, hi = 50_000, 300_000
		phone = rapid.SampledFrom(bankAccounts).Draw(rt, "account")
		if rare(rt, "account is malformed") {
			phone = rapid.SampledFrom(badAccounts).Draw(rt, "account")
		}
	}
	req := WithdrawalRequest{
		OrgID: r.drawOrg("org"), Amount: drawAmount(rt, "amount", lo, hi), Phone: phone, Method: method,
		MerchantID: r.drawMerchantID("merchant_id", "payout"),
	}
	w, err := r.h.eng.CreateWithdrawal(r.h.ctx, engine.CreateWithdrawalParams{
		OrganizationID: req.OrgID, Amount: req.Amount, Phone: req.Phone, PaymentMethod: req.Method, MerchantID: req.MerchantID,
	})
	newID := ""
	if err == nil {
		newID = w.ID
		r.h.fake.register(w.ID)
	}
	want := r.m.CreateWithdrawal(r.now(), req, newID)
	r.wantCode("create withdrawal", fmt.Sprintf("%+v", req), err, want.Code)
	if err == nil && w.Status != engine.WithdrawalProcessing {
		r.fatalf("new withdrawal is %s", w.Status)
	}
}

func (r *run) decidePayout(rt *rapid.T) {
	w := r.pickWithdrawal("withdrawal")
	outcome := rapid.SampledFrom([]string{Succeeded, Failed}).Draw(rt, "outcome")
	r.m.DecidePayout(w.ID, outcome)
	r.h.fake.decide(w.ID, outcome)
}

func (r *run) processPayouts(rt *rapid.T) {
	r.until("process payouts", r.h.eng.ProcessPayouts)
	r.m.ProcessPayouts(r.now())
}

// createRefund refunds a deposit, mostly a succeeded one (any, or
// another organization's, at times), of a part, all that is left, or
// more; its merchant_id is at times one already used (a replay or a
// conflict).
func (r *run) createRefund(rt *rapid.T) {
	var paid []string
	for _, id := range r.m.DepositOrder {
		if d := r.m.Deposits[id]; d.Status == Succeeded || d.Status == Refunded {
			paid = append(paid, id)
		}
	}
	var d *Deposit
	if len(paid) > 0 && !rare(rt, "refund of any deposit") {
		d = r.m.Deposits[paid[len(paid)-1-rapid.IntRange(0, len(paid)-1).Draw(rt, "paid deposit (newest is 0)")]]
	} else {
		d = r.pickDeposit("deposit")
	}
	req := RefundRequest{OrgID: d.OrgID, DepositID: d.ID, MerchantID: r.drawMerchantID("refund merchant_id", "refund"), AmountGiven: true}
	if rare(rt, "refund from another organization") {
		req.OrgID = r.otherOrg(d.OrgID)
	}
	left := d.Amount - d.Reserved
	switch rapid.SampledFrom([]string{"part", "part", "all left", "omitted", "more", "odd"}).Draw(rt, "refund amount") {
	case "part":
		req.Amount = formatPoisha(rapid.Int64Range(1, max(left, 1)).Draw(rt, "part (poisha)"), 0)
	case "all left":
		req.Amount = formatPoisha(max(left, 1), 0)
	case "omitted":
		req.AmountGiven = false
	case "more":
		req.Amount = formatPoisha(left+rapid.Int64Range(1, 10_000).Draw(rt, "more (poisha)"), 0)
	case "odd":
		req.Amount = rapid.SampledFrom([]string{"0", "-5", "1.001", "abc", ""}).Draw(rt, "odd refund amount")
	}
	if len(r.m.RefundOrder) > 0 && rare(rt, "replay a refund") {
		prev := r.m.Refunds[r.m.RefundOrder[len(r.m.RefundOrder)-1-rapid.IntRange(0, len(r.m.RefundOrder)-1).Draw(rt, "refund replayed")]]
		req = RefundRequest{OrgID: prev.OrgID, DepositID: prev.DepositID, MerchantID: prev.MerchantID,
			AmountGiven: !prev.AmountOmitted, Amount: formatPoisha(prev.Amount, rapid.IntRange(0, 2).Draw(rt, "amount spelling"))}
	}
	if rare(rt, "reason is long") {
		req.Reason = strings.Repeat("ক", rapid.SampledFrom([]int{500, 501}).Draw(rt, "reason length"))
	}
	rf, created, err := r.h.eng.CreateRefund(r.h.ctx, engine.CreateRefundParams{
		OrganizationID: req.OrgID, DepositID: req.DepositID, Amount: req.Amount, AmountGiven: req.AmountGiven,
		MerchantID: req.MerchantID, Reason: req.Reason,
	})
	newID := ""
	if err == nil && created {
		newID = rf.ID
		r.h.fake.register(rf.ID)
	}
	want := r.m.CreateRefund(r.now(), req, newID)
	r.wantCode("create refund", fmt.Sprintf("%+v", req), err, want.Code)
	if err == nil && (created != want.Created || rf.ID != want.ID) {
		r.fatalf("create refund %+v: %s created %v; model %s created %v", req, rf.ID, created, want.ID, want.Created)
	}
	if err == nil && created {
		r.h.seen["refund created"]++
	}
}

func (r *run) decideRefund(rt *rapid.T) {
	n := len(r.m.RefundOrder)
	if n == 0 {
		rt.Skip("no refund yet")
	}
	rf := r.m.Refunds[r.m.RefundOrder[n-1-rapid.IntRange(0, n-1).Draw(rt, "refund (newest is 0)")]]
	outcome := rapid.SampledFrom([]string{Succeeded, Failed}).Draw(rt, "refund outcome")
	r.m.DecideRefund(rf.ID, outcome)
	r.h.fake.decide(rf.ID, outcome)
}

func (r *run) processRefunds(rt *rapid.T) {
	r.until("process refunds", r.h.eng.ProcessRefunds)
	r.m.ProcessRefunds(r.now())
}

func (r *run) adjust(rt *rapid.T) {
	org := r.drawOrg("org")
	var amount string
	switch {
	case rare(rt, "amount is odd"):
		amount = rapid.SampledFrom([]string{"0", "-0", "-", "abc", "0.001", "--5", "+5", "-0.01", "0.01"}).Draw(rt, "odd amount")
	case rapid.IntRange(0, 2).Draw(rt, "debit") == 2:
		amount = "-" + formatPoisha(rapid.Int64Range(1, 5_000_000).Draw(rt, "debit (poisha)"), 0)
	default:
		amount = formatPoisha(rapid.Int64Range(1, 40_000_000).Draw(rt, "credit (poisha)"), 0)
	}
	reason := "float"
	if rare(rt, "reason is malformed") {
		reason = rapid.SampledFrom([]string{"  ", "bad\x00reason", strings.Repeat("r", 501)}).Draw(rt, "reason")
	}
	_, err := r.h.eng.AdjustBalance(r.h.ctx, engine.AdjustParams{OrganizationID: org, Amount: amount, Reason: reason, Actor: "model"})
	r.wantCode("adjust balance", fmt.Sprintf("by %q (%q)", amount, reason), err, r.m.Adjust(org, amount, reason, "model"))
}

// ---- invariants ----

// sameSums reports whether two sets of account sums are equal.
func sameSums(a, b map[string]decimal.Decimal) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

// checkLedger checks an organization's ledger: every journal balances, so
// all its entries sum to zero; the balance is what the entries add up to,
// never negative, and the model's (fees too).
func (r *run) checkLedger(orgID string, js []*engine.Journal, available, held decimal.Decimal) {
	o := r.m.Orgs[orgID]
	sums := map[string]decimal.Decimal{}
	total := decimal.Zero
	for _, j := range js {
		jsum := decimal.Zero
		for _, e := range j.Entries {
			sums[e.Account] = sums[e.Account].Add(e.Amount)
			jsum = jsum.Add(e.Amount)
		}
		if !jsum.IsZero() {
			r.fatalf("journal %s (%s) sums to %s", j.ID, j.Kind, jsum)
		}
		total = total.Add(jsum)
	}
	if !total.IsZero() {
		r.fatalf("ledger of %s sums to %s: money was created or destroyed", orgID, total)
	}
	if !available.Equal(sums[engine.AccountAvailable]) || !held.Equal(sums[engine.AccountHeld]) {
		r.fatalf("balance %s/%s of %s is not what the journals add up to (%v)", available, held, orgID, sums)
	}
	if available.IsNegative() || held.IsNegative() {
		r.fatalf("negative balance of %s: available %s, held %s", orgID, available, held)
	}
	if !available.Equal(bdt(o.Available)) || !held.Equal(bdt(o.Held)) || !sums[engine.AccountFees].Equal(bdt(o.Fees)) {
		r.fatalf("ledger of %s: available %s, held %s, fees %s; model %s, %s, %s",
			orgID, available, held, sums[engine.AccountFees], bdt(o.Available), bdt(o.Held), bdt(o.Fees))
	}
}

// checkLedgerAPI checks the ledgers once more through the engine's own
// ListJournals and GetBalance, which the per-step snapshot bypasses.
func (r *run) checkLedgerAPI() {
	for _, orgID := range r.orgs {
		js, err := r.h.eng.ListJournals(r.h.ctx, orgID)
		if err != nil {
			r.fatalf("%v", err)
		}
		b, err := r.h.eng.GetBalance(r.h.ctx, orgID)
		if err != nil {
			r.fatalf("%v", err)
		}
		r.checkLedger(orgID, js, b.Available, b.Held)
	}
}

// snapshot is what the invariants read of the engine's store.
type snapshot struct {
	journals    map[string][]*engine.Journal
	balances    map[string]map[string]decimal.Decimal
	deposits    map[string]*engine.Deposit
	withdrawals map[string]*engine.Withdrawal
	refunds     map[string]*engine.Refund
}

// snapshot reads the check's ledgers, deposits, attempts and withdrawals in
// one read transaction of the store: the queries of the engine's
// ListJournals, GetBalance, GetDeposit, ListAttempts and GetWithdrawal
// (organization checks included), without a transaction around each, which
// would make every step several times slower (checkLedgerAPI goes through
// the engine at the end of each check). To keep steps cheap, journals are
// listed again only when an account's sum changed since the previous step,
// and the attempts of a terminal deposit whose row has not changed are kept
// from then. It fails the check if a resource the model knows is missing.
func (r *run) snapshot() snapshot {
	snap := snapshot{
		journals: map[string][]*engine.Journal{}, balances: map[string]map[string]decimal.Decimal{},
		deposits: map[string]*engine.Deposit{}, withdrawals: map[string]*engine.Withdrawal{},
		refunds: map[string]*engine.Refund{},
	}
	err := r.h.store.ReadTx(r.h.ctx, func(ctx context.Context, tx engine.Tx) error {
		for _, orgID := range r.orgs {
			var err error
			if snap.balances[orgID], err = tx.AccountBalances(ctx, orgID); err != nil {
				return err
			}
			// The balance rows are what the entries add up to, every step.
			sums, err := tx.SumEntries(ctx, orgID)
			if err != nil {
				return err
			}
			if d := engine.DiffBalances(orgID, snap.balances[orgID], sums); len(d) > 0 {
				return fmt.Errorf("balance rows differ from the entries: %+v", d)
			}
			if js, ok := r.journals[orgID]; ok && sameSums(r.sums[orgID], snap.balances[orgID]) {
				snap.journals[orgID] = js
				continue
			}
			if snap.journals[orgID], err = tx.ListJournals(ctx, orgID); err != nil {
				return err
			}
			r.journals[orgID], r.sums[orgID] = snap.journals[orgID], snap.balances[orgID]
		}
		for _, id := range r.m.DepositOrder {
			d, err := tx.GetDeposit(ctx, r.m.Deposits[id].OrgID, id)
			if err != nil {
				return fmt.Errorf("deposit %s: %w", id, err)
			}
			snap.deposits[id] = d
			if prev, ok := r.last[id]; ok && prev.IsTerminal() && prev.UpdatedAt.Equal(d.UpdatedAt) && prev.AttemptsUsed == d.AttemptsUsed {
				continue
			}
			if r.attempts[id], err = tx.ListAttempts(ctx, id); err != nil {
				return err
			}
		}
		for _, id := range r.m.WithdrawalOrder {
			w, err := tx.GetWithdrawal(ctx, r.m.Withdrawals[id].OrgID, id)
			if err != nil {
				return fmt.Errorf("withdrawal %s: %w", id, err)
			}
			snap.withdrawals[id] = w
		}
		for _, id := range r.m.RefundOrder {
			rf, err := tx.GetRefund(ctx, r.m.Refunds[id].OrgID, id)
			if err != nil {
				return fmt.Errorf("refund %s: %w", id, err)
			}
			snap.refunds[id] = rf
		}
		return nil
	})
	if err != nil {
		r.fatalf("reading the check's resources: %v", err)
	}
	return snap
}

func (r *run) invariants(rt *rapid.T) {
	now := r.now()
	snap := r.snapshot()
	r.checkLists()
	for _, orgID := range r.orgs {
		r.checkLedger(orgID, snap.journals[orgID], snap.balances[orgID][engine.AccountAvailable], snap.balances[orgID][engine.AccountHeld])
	}
	deposits, withdrawals := snap.deposits, snap.withdrawals
	// owners maps organization/channel/ID to the deposit holding it,
	// succeeded channel/ID to the deposit it succeeded.
	owners, succeeded := map[string]string{}, map[string]string{}
	for _, id := range r.m.DepositOrder {
		md, d := r.m.Deposits[id], deposits[id]
		// What holds whatever the model says: terminal states absorb, at
		// most three attempts, next_action null exactly when terminal or
		// past expires_at.
		// A succeeded deposit may still become refunded, and nothing else.
		if prev, ok := r.last[id]; ok && prev.IsTerminal() && !(prev.Status == Succeeded && d.Status == Refunded) {
			if d.Status != prev.Status || d.VerificationState != prev.VerificationState || d.AttemptsUsed != prev.AttemptsUsed ||
				d.FailureCode != prev.FailureCode || d.ProviderTransactionID != prev.ProviderTransactionID {
				r.fatalf("deposit %s left terminal state %s/%s (used %d, %q) for %s/%s (used %d, %q)", id,
					prev.Status, prev.VerificationState, prev.AttemptsUsed, prev.FailureCode,
					d.Status, d.VerificationState, d.AttemptsUsed, d.FailureCode)
			}
		}
		if d.AttemptsUsed > MaxAttempts {
			r.fatalf("deposit %s has %d attempts used", id, d.AttemptsUsed)
		}
		actionable := !d.IsTerminal() && now.Before(d.ExpiresAt)
		switch view := engine.DepositView(d, now, "/api").(type) {
		case engine.H2HDeposit:
			if (view.NextAction != nil) != actionable {
				r.fatalf("deposit %s (%s, expires %s, now %s): next_action present %v", id, d.Status, d.ExpiresAt, now, view.NextAction != nil)
			}
			if view.Verification.AttemptsUsed > MaxAttempts || view.Verification.AttemptsRemaining != md.AttemptsRemaining() {
				r.fatalf("deposit %s: attempts used %d remaining %d, model remaining %d",
					id, view.Verification.AttemptsUsed, view.Verification.AttemptsRemaining, md.AttemptsRemaining())
			}
		case engine.RedirectDepositStatus:
			if (view.RedirectURL != nil) != actionable {
				r.fatalf("deposit %s (%s, expires %s, now %s): redirect_url present %v", id, d.Status, d.ExpiresAt, now, view.RedirectURL != nil)
			}
		default:
			r.fatalf("deposit %s: view %T", id, view)
		}
		// What the model says.
		if d.Status != md.Status || d.VerificationState != md.Verification || d.AttemptsUsed != md.Used ||
			d.FailureCode != md.FailureCode || d.ProviderTransactionID != md.ProviderTxID {
			r.fatalf("deposit %s is %s/%s used %d failure %q paid by %q; model %s/%s used %d failure %q paid by %q",
				id, d.Status, d.VerificationState, d.AttemptsUsed, d.FailureCode, d.ProviderTransactionID,
				md.Status, md.Verification, md.Used, md.FailureCode, md.ProviderTxID)
		}
		if poisha(d.Amount) != md.Amount || d.PaymentMethod != md.Method || d.Action != md.Action || d.Channel != md.Channel ||
			d.RecipientPhone != md.Recipient || d.PayerPhone != md.Payer || string(d.Metadata) != md.MetadataText ||
			!d.ExpiresAt.Equal(md.ExpiresAt) {
			r.fatalf("deposit %s: %s %s %s %s to %q from %q %s expires %s; model %d %s %s %s to %q from %q %s expires %s",
				id, d.Amount, d.PaymentMethod, d.Action, d.Channel, d.RecipientPhone, d.PayerPhone, d.Metadata, d.ExpiresAt,
				md.Amount, md.Method, md.Action, md.Channel, md.Recipient, md.Payer, md.MetadataText, md.ExpiresAt)
		}
		if actionable != md.Actionable(now) {
			r.fatalf("deposit %s: next_action present %v, model %v", id, actionable, md.Actionable(now))
		}
		if prev, ok := r.last[id]; !ok || prev.Status != d.Status || prev.VerificationState != d.VerificationState || prev.FailureCode != d.FailureCode {
			r.h.seen[fmt.Sprintf("deposit %s %s/%s %s", d.Action, d.Status, d.VerificationState, d.FailureCode)]++
		}
		if prev, ok := r.last[id]; d.AttemptsUsed == MaxAttempts && (!ok || prev.AttemptsUsed < MaxAttempts) {
			r.h.seen["deposit "+d.Action+" with all 3 attempts used"]++
		}
		r.last[id] = *d
		// Its attempts are the model's; no transaction ID serves two
		// deposits of an organization, nor succeeds two anywhere.
		as := r.attempts[id]
		if len(as) != d.AttemptsUsed || len(as) != len(md.Attempts) {
			r.fatalf("deposit %s has %d attempts, attempts_used %d, model %d", id, len(as), d.AttemptsUsed, len(md.Attempts))
		}
		for _, a := range as {
			key := a.Channel + "/" + a.TransactionID
			if other, ok := owners[d.OrganizationID+"/"+key]; ok {
				r.fatalf("transaction ID %s serves deposits %s and %s", key, other, id)
			}
			owners[d.OrganizationID+"/"+key] = id
			if a.Status == Succeeded {
				if other, ok := succeeded[key]; ok {
					r.fatalf("transaction ID %s succeeded deposits %s and %s", key, other, id)
				}
				succeeded[key] = id
			}
			if r.lastA[a.ID] != a.Status+a.FailureCode {
				r.h.seen[fmt.Sprintf("attempt %s %s", a.Status, a.FailureCode)]++
				r.lastA[a.ID] = a.Status + a.FailureCode
			}
			ma, ok := r.m.Attempts[a.ID]
			if !ok || ma.DepositID != id || ma.Status != a.Status || ma.FailureCode != a.FailureCode || ma.TxID != a.TransactionID {
				r.fatalf("attempt %s of %s is %s %q for %s; model %+v", a.ID, id, a.Status, a.FailureCode, a.TransactionID, ma)
			}
			// A delayed attempt's next lookup is the model's: the retry
			// schedule, and a not-found grace that ends on time.
			if a.Status == Delayed && !a.NextRunAt.Equal(ma.NextRun) {
				r.fatalf("attempt %s of %s is next looked up at %s; model %s", a.ID, id, a.NextRunAt, ma.NextRun)
			}
		}
	}

	for _, id := range r.m.WithdrawalOrder {
		mw, w := r.m.Withdrawals[id], withdrawals[id]
		if w.Status != mw.Status || poisha(w.Amount) != mw.Amount || poisha(w.Commission) != mw.Commission {
			r.fatalf("withdrawal %s is %s (%s + %s); model %s (%s + %s)",
				id, w.Status, w.Amount, w.Commission, mw.Status, bdt(mw.Amount), bdt(mw.Commission))
		}
		if prev := r.lastW[id]; prev != "" && prev != engine.WithdrawalProcessing && w.Status != prev {
			r.fatalf("withdrawal %s left terminal state %s for %s", id, prev, w.Status)
		}
		if r.lastW[id] != w.Status {
			r.h.seen["withdrawal "+w.Status]++
		}
		r.lastW[id] = w.Status
	}
	r.refundInvariants(snap)
}

// refundInvariants: what holds of refunds whatever the model says (a
// deposit's refunds never exceed it: refunded <= reserved <= amount, and
// its totals are the sums of its refunds; a settled refund stays settled),
// then that every refund and the deposits' totals are the model's.
func (r *run) refundInvariants(snap snapshot) {
	reserved, refunded := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
	for _, id := range r.m.RefundOrder {
		mr, rf := r.m.Refunds[id], snap.refunds[id]
		if rf.Status != engine.RefundFailed {
			reserved[rf.DepositID] = reserved[rf.DepositID].Add(rf.Amount)
		}
		if rf.Status == engine.RefundSucceeded {
			refunded[rf.DepositID] = refunded[rf.DepositID].Add(rf.Amount)
		}
		if prev := r.lastW[id]; prev != "" && prev != engine.RefundProcessing && rf.Status != prev {
			r.fatalf("refund %s left settled state %s for %s", id, prev, rf.Status)
		}
		if r.lastW[id] != rf.Status {
			r.h.seen["refund "+rf.Status]++
		}
		r.lastW[id] = rf.Status
		if rf.Status != mr.Status || poisha(rf.Amount) != mr.Amount || rf.DepositID != mr.DepositID || rf.MerchantID != mr.MerchantID {
			r.fatalf("refund %s is %s %s of %s (%s); model %s %s of %s (%s)",
				id, rf.Status, rf.Amount, rf.DepositID, rf.MerchantID, mr.Status, bdt(mr.Amount), mr.DepositID, mr.MerchantID)
		}
	}
	for _, id := range r.m.DepositOrder {
		md, d := r.m.Deposits[id], snap.deposits[id]
		if d.RefundedAmount.GreaterThan(d.RefundReserved) || d.RefundReserved.GreaterThan(d.Amount) || d.RefundedAmount.IsNegative() {
			r.fatalf("deposit %s of %s: refunded %s, reserved %s", id, d.Amount, d.RefundedAmount, d.RefundReserved)
		}
		if !d.RefundReserved.Equal(reserved[id]) || !d.RefundedAmount.Equal(refunded[id]) {
			r.fatalf("deposit %s: reserved %s refunded %s, its refunds add up to %s and %s", id, d.RefundReserved, d.RefundedAmount, reserved[id], refunded[id])
		}
		if poisha(d.RefundReserved) != md.Reserved || poisha(d.RefundedAmount) != md.Refunded {
			r.fatalf("deposit %s: reserved %s refunded %s; model %s and %s", id, d.RefundReserved, d.RefundedAmount, bdt(md.Reserved), bdt(md.Refunded))
		}
	}
}
