package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// linkFixture is a payment link of the fixture's organization.
type linkFixture struct {
	*fixture
	link *engine.PaymentLink
}

func (f *fixture) newLink(amount string) *linkFixture {
	f.t.Helper()
	l, err := f.eng.CreatePaymentLink(f.ctx, f.org.ID, amount, "invoice")
	if err != nil {
		f.t.Fatal(err)
	}
	return &linkFixture{fixture: f, link: l}
}

func (f *linkFixture) open(method string) (*engine.Deposit, error) {
	return f.eng.PayPaymentLink(f.ctx, engine.PayPaymentLinkParams{
		Token: f.link.Token, PaymentMethod: method, ReturnURL: "https://pay.example/pay/" + f.link.Token})
}

func (f *linkFixture) mustOpen(method string) *engine.Deposit {
	f.t.Helper()
	d, err := f.open(method)
	if err != nil {
		f.t.Fatalf("open with %s: %v", method, err)
	}
	return d
}

// deposits are every checkout the link opened, by merchant_id, and how
// many of them are still open (pending or processing).
func (f *linkFixture) deposits() (all []*engine.Deposit, open int) {
	f.t.Helper()
	err := f.store.ReadTx(f.ctx, func(ctx context.Context, tx engine.Tx) error {
		all, open = nil, 0
		l, err := tx.Console().GetPaymentLink(ctx, f.org.ID, f.link.ID)
		if err != nil {
			return err
		}
		for n := 1; n <= l.Deposits; n++ {
			d, err := tx.GetDepositByMerchantID(ctx, f.org.ID, fmt.Sprintf("%s-%d", l.ID, n))
			if errors.Is(err, engine.ErrNotFound) {
				continue // a number whose create lost a race
			}
			if err != nil {
				return err
			}
			all = append(all, d)
			if !d.IsTerminal() {
				open++
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return all, open
}

// TestPaymentLinkKeepsOneOpenDeposit: whoever holds a link's URL and
// switches method again and again keeps one checkout open, not one per
// switch: the same method is the same checkout, another method ends the
// open one (cancelled, its wallet free again) before the next opens. No
// event, no journal: a cancelled checkout moved no money.
func TestPaymentLinkKeepsOneOpenDeposit(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t).newLink("800")
		first := f.mustOpen("bkash")
		if again := f.mustOpen("bkash"); again.ID != first.ID {
			t.Fatalf("the same method opened %s, want the open %s", again.ID, first.ID)
		}
		for i, m := range []string{"nagad", "bkash", "nagad", "bkash", "nagad", "bkash"} {
			d := f.mustOpen(m)
			if d.PaymentMethod != m {
				t.Fatalf("switch %d to %s opened a %s checkout", i, m, d.PaymentMethod)
			}
			if _, open := f.deposits(); open != 1 {
				t.Fatalf("after switch %d the link has %d open deposits, want 1", i, open)
			}
		}
		all, _ := f.deposits()
		for _, d := range all[:len(all)-1] {
			if d.Status != engine.StatusCancelled {
				t.Errorf("superseded checkout %s is %s, want cancelled", d.ID, d.Status)
			}
			if evs := f.events(d.ID); len(evs) != 0 {
				t.Errorf("superseded checkout %s has %d events", d.ID, len(evs))
			}
		}
		if diff := f.ledgerDifferences(f.org.ID); len(diff) != 0 {
			t.Errorf("ledger differences: %v", diff)
		}
		for acct, b := range f.balances(f.org.ID) {
			if !b.IsZero() {
				t.Errorf("balance %s = %s after checkouts nobody paid", acct, b)
			}
		}
		// A checkout whose window passed before the worker ended it is
		// ended as an expiry would (deposit.expired), even for the same
		// method.
		last := all[len(all)-1]
		f.clock.Add(2 * time.Hour)
		next := f.mustOpen(last.PaymentMethod)
		if next.ID == last.ID {
			t.Fatal("an expired checkout was given again")
		}
		if got := f.get(last); got.Status != engine.StatusExpired {
			t.Errorf("the expired checkout is %s, want expired", got.Status)
		}
		if evs := f.events(last.ID); len(evs) != 1 || evs[0].Type != engine.EventDepositExpired {
			t.Errorf("the expired checkout's events: %v", evs)
		}
	})
}

// TestPaymentLinkOpensBoundedConcurrently: many payers (or one attacker)
// switching methods on one link at once, with real goroutines on each
// store, never leave it more than one open deposit.
func TestPaymentLinkOpensBoundedConcurrently(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t).newLink("800")
		methods := []string{"bkash", "nagad", "rocket", "upay"}
		const goroutines, rounds = 12, 4
		var wg sync.WaitGroup
		var mu sync.Mutex
		var opened int
		for g := range goroutines {
			wg.Go(func() {
				for r := range rounds {
					_, err := f.open(methods[(g+r)%len(methods)])
					switch code := engine.ErrorCode(err); {
					case err == nil:
						mu.Lock()
						opened++
						mu.Unlock()
					case code == engine.CodeConflict:
						// lost every try to others switching the link
					default:
						t.Errorf("open: %v", err)
					}
				}
			})
		}
		wg.Wait()
		all, open := f.deposits()
		t.Logf("%d opens made %d deposits", opened, len(all))
		if opened == 0 || open > 1 {
			t.Fatalf("%d opens made %d deposits of which %d are open, want at most 1 open", opened, len(all), open)
		}
	})
}

// TestPaymentLinkPaidByAnyDeposit: open with bKash, then Nagad, and pay
// the bKash one: the link is paid, whichever of its checkouts was, and
// opens no other. The switch closed the bKash checkout, so its payment is
// a late one an operator credits; the Nagad checkout still open is
// cancelled then.
func TestPaymentLinkPaidByAnyDeposit(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t).newLink("800")
		bkash := f.mustOpen("bkash")
		nagad := f.mustOpen("nagad")
		p := f.payment(bkash, "LINKBK0001")
		p.Type = ""
		f.provider.pay(p)
		if _, err := f.eng.SubmitCheckoutPayment(f.ctx, bkash.CheckoutToken, "LINKBK0001"); err == nil {
			f.process()
		} else {
			wantCode(t, err, engine.CodeDepositTerminal)
			if _, err := f.eng.CreditLatePayment(f.ctx, engine.CreditLatePaymentParams{
				OrganizationID: f.org.ID, DepositID: bkash.ID, TransactionID: "LINKBK0001"}); err != nil {
				t.Fatal(err)
			}
		}
		st, err := f.eng.GetPaymentLinkByToken(f.ctx, f.link.Token)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Paid() {
			t.Fatalf("the link is not paid though its bKash checkout was (latest %s is %s)", st.Deposit.ID, st.Deposit.Status)
		}
		for _, m := range []string{"nagad", "bkash", "rocket"} {
			d, err := f.open(m)
			if err == nil {
				t.Fatalf("the paid link opened %s (%s)", d.ID, d.Status)
			}
			wantCode(t, err, engine.CodeDepositTerminal)
		}
		if got := f.get(nagad); !got.IsTerminal() {
			t.Errorf("the paid link's Nagad checkout is still %s", got.Status)
		}
	})
}

// TestPaymentLinkSwitchWhileVerifying: a checkout whose payment is being
// verified is not left for another: switching is refused until it
// resolves, and once it succeeds the link is paid.
func TestPaymentLinkSwitchWhileVerifying(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t).newLink("800")
		bkash := f.mustOpen("bkash")
		p := f.payment(bkash, "LINKBK0002")
		p.Type = ""
		f.provider.pay(p)
		if _, err := f.eng.SubmitCheckoutPayment(f.ctx, bkash.CheckoutToken, "LINKBK0002"); err != nil {
			t.Fatal(err)
		}
		if d, err := f.open("nagad"); err == nil {
			t.Fatalf("switching while the bKash payment is verified opened %s", d.ID)
		} else {
			wantCode(t, err, engine.CodeAttemptInProgress)
		}
		f.process()
		if got := f.get(bkash); got.Status != engine.StatusSucceeded {
			t.Fatalf("the bKash checkout is %s", got.Status)
		}
		st, err := f.eng.GetPaymentLinkByToken(f.ctx, f.link.Token)
		if err != nil || !st.Paid() || st.Link.PaidDepositID != bkash.ID {
			t.Fatalf("link after its payment: %+v %v", st, err)
		}
		_, err = f.open("nagad")
		wantCode(t, err, engine.CodeDepositTerminal)
	})
}
