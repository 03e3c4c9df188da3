package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/payd-engine/payd/engine"
)

// refundingProvider is the fake provider with engine.Refunder: its own
// book of refunds, by idempotency key.
type refundingProvider struct {
	*fakeProvider
	mu      sync.Mutex
	refunds map[string]*engine.ProviderRefund
	sends   int
	// lostAnswers makes that many sends record the refund and then fail,
	// as a timeout after the provider refunded.
	lostAnswers int
	// outcome is what a pending refund becomes when next read.
	outcome string
}

func (p *refundingProvider) CheckRefund(context.Context, engine.RefundRequest) error { return nil }

func (p *refundingProvider) SendRefund(_ context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sends++
	r, ok := p.refunds[req.IdempotencyKey]
	if !ok {
		r = &engine.ProviderRefund{IdempotencyKey: req.IdempotencyKey, Reference: "ref-" + req.IdempotencyKey, Status: engine.PayoutPending}
		p.refunds[req.IdempotencyKey] = r
	}
	if p.lostAnswers > 0 {
		p.lostAnswers--
		return nil, context.DeadlineExceeded
	}
	c := *r
	return &c, nil
}

func (p *refundingProvider) GetRefund(_ context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.refunds[req.IdempotencyKey]
	if !ok {
		return nil, engine.ErrRefundNotFound
	}
	if r.Status == engine.PayoutPending && p.outcome != "" {
		r.Status = p.outcome
		if r.Status == engine.PayoutFailed {
			r.Reason = "wallet closed"
		}
	}
	c := *r
	return &c, nil
}

// refundEngine is an engine over f's store whose provider refunds.
func (f *fixture) refundEngine(concurrency int) (*engine.Engine, *refundingProvider) {
	f.t.Helper()
	p := &refundingProvider{fakeProvider: f.provider, refunds: map[string]*engine.ProviderRefund{}}
	eng, err := engine.New(engine.Config{Store: f.store, Provider: p, Clock: f.clock, Keyring: f.keyring, WorkerConcurrency: concurrency})
	if err != nil {
		f.t.Fatal(err)
	}
	return eng, p
}

// paid is a succeeded H2H deposit of amount, with a fee of 1.5% + 2.
func (f *fixture) paid(amount, txID string) *engine.Deposit {
	f.t.Helper()
	d := f.deposit(f.org.ID, "bkash_agent", amount)
	f.provider.pay(f.payment(d, txID))
	f.mustSubmit(d, txID)
	f.process()
	if got := f.get(d); got.Status != engine.StatusSucceeded {
		f.t.Fatalf("deposit %s", got.Status)
	}
	return d
}

func refund(eng *engine.Engine, d *engine.Deposit, amount, merchantID string) (*engine.Refund, bool, error) {
	return eng.CreateRefund(context.Background(), engine.CreateRefundParams{
		OrganizationID: d.OrganizationID, DepositID: d.ID, Amount: amount, AmountGiven: amount != "", MerchantID: merchantID,
	})
}

// TestRefundWithoutRefunder: a provider that cannot refund makes every
// refund 503 method_unavailable, never a 500, and holds nothing.
func TestRefundWithoutRefunder(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	d := f.paid("1000", "NOREFUND1")
	before := f.balances(f.org.ID)
	_, _, err := refund(f.eng, d, "100", "r1")
	wantCode(t, err, engine.CodeMethodUnavailable)
	if after := f.balances(f.org.ID); !after[engine.AccountAvailable].Equal(before[engine.AccountAvailable]) || !after[engine.AccountHeld].IsZero() {
		t.Fatalf("balances %v after a refused refund, were %v", after, before)
	}
}

// TestRefundSentOnceAfterLostAnswers: the provider refunds and its answer
// is lost, twice; the engine sends again with the same key, so the
// provider's book has one refund, and the deposit is refunded once: its
// totals, its one deposit.refunded event and the ledger agree. Two
// engines work the queue at once.
func TestRefundSentOnceAfterLostAnswers(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		d := f.paid("1000", "LOST1")
		// Available: 1000 - (15 + 2) = 983, and 100 more: the balance
		// must cover the refunds, and the fee is not returned.
		if _, err := f.eng.AdjustBalance(f.ctx, engine.AdjustParams{OrganizationID: f.org.ID, Amount: "100", Reason: "float", Actor: "test"}); err != nil {
			t.Fatal(err)
		}
		eng, p := f.refundEngine(4)
		// The second engine talks to the same provider.
		other, err := engine.New(engine.Config{Store: f.store, Provider: p, Clock: f.clock, Keyring: f.keyring, WorkerConcurrency: 4})
		if err != nil {
			t.Fatal(err)
		}
		a, _, err := refund(eng, d, "600", "a")
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := refund(eng, d, "", "b") // the other 400
		if err != nil || !b.Amount.Equal(dec("400")) {
			t.Fatalf("the rest: %+v, %v", b, err)
		}
		p.mu.Lock()
		p.lostAnswers, p.outcome = 2, engine.PayoutSucceeded
		p.mu.Unlock()
		for range 20 {
			var wg sync.WaitGroup
			for _, e := range []*engine.Engine{eng, other} {
				wg.Go(func() {
					if _, err := e.ProcessRefunds(context.Background()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			f.clock.Add(10 * time.Minute)
		}
		for _, r := range []*engine.Refund{a, b} {
			got, err := eng.GetRefund(f.ctx, f.org.ID, r.ID)
			if err != nil || got.Status != engine.RefundSucceeded || got.ProviderReference != "ref-"+r.ID {
				t.Fatalf("refund %s: %+v, %v", r.ID, got, err)
			}
		}
		p.mu.Lock()
		if len(p.refunds) != 2 || p.sends < 4 {
			t.Errorf("the provider made %d refunds in %d sends, want 2 in at least 4", len(p.refunds), p.sends)
		}
		p.mu.Unlock()
		got := f.get(d)
		if got.Status != engine.StatusRefunded || got.VerificationState != engine.StatusRefunded ||
			!got.RefundedAmount.Equal(dec("1000")) || !got.RefundReserved.Equal(dec("1000")) {
			t.Fatalf("deposit %s/%s refunded %s reserved %s", got.Status, got.VerificationState, got.RefundedAmount, got.RefundReserved)
		}
		var refunded int
		for _, ev := range f.events(d.ID) {
			if ev.Type == engine.EventDepositRefunded {
				refunded++
			}
		}
		if refunded != 1 {
			t.Errorf("%d deposit.refunded events, want 1", refunded)
		}
		b2 := f.balances(f.org.ID)
		if !b2[engine.AccountAvailable].Equal(dec("83")) || !b2[engine.AccountHeld].IsZero() {
			t.Errorf("balances %v: want available 83 and held 0", b2)
		}
		if diffs := f.ledgerDifferences(f.org.ID); len(diffs) != 0 {
			t.Errorf("ledger differences %+v", diffs)
		}
	})
}

// TestRefundMerchantIDCountsCharacters: the contract bounds a refund's
// merchant_id at 255 characters, not bytes, so a Bangla reference of 200
// letters (600 bytes in UTF-8) is a valid one.
func TestRefundMerchantIDCountsCharacters(t *testing.T) {
	for _, c := range []struct {
		id string
		ok bool
	}{
		{strings.Repeat("ক", 200), true},
		{strings.Repeat("ক", 255), true},
		{strings.Repeat("ক", 256), false},
		{strings.Repeat("a", 256), false},
		{"", false},
	} {
		err := engine.CreateRefundParams{OrganizationID: "org_1", DepositID: "dep_1", MerchantID: c.id}.Validate()
		if (err == nil) != c.ok {
			t.Errorf("merchant_id of %d characters (%d bytes): %v, want ok=%v", utf8.RuneCountInString(c.id), len(c.id), err, c.ok)
		}
	}
}
