package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"pgregory.net/rapid"

	"github.com/payd-engine/payd/engine"
)

// ledgerModel is what the balances must be, computed independently of the
// engine from the outcomes the test itself decided.
type ledgerModel struct {
	available, held decimal.Decimal
	// pending are the totals held by withdrawals not yet settled.
	pending map[string]decimal.Decimal
}

// fee is percent of amount plus fixed, rounded to the poisha half up: the
// contract's rule, written again here rather than called.
func fee(amount decimal.Decimal, percent, fixed string) decimal.Decimal {
	return amount.Mul(dec(percent)).Div(decimal.NewFromInt(100)).Add(dec(fixed)).Round(2)
}

// TestLedgerProperties runs random sequences of deposits, withdrawals,
// payout outcomes and adjustments against the engine over each store, and
// after every step checks that the balance rows are what the entries sum
// to, that all entries sum to zero, that available and held equal the
// model's, and that nothing is negative.
func TestLedgerProperties(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		// One database for all the checks: each check has an organization
		// of its own, and so a ledger of its own.
		f := newFixture(t)
		seq := 0 // transaction IDs are unique across checks, as across a wallet
		rapid.Check(t, func(rt *rapid.T) {
			org, err := f.eng.CreateOrganization(f.ctx, engine.OrganizationSettings{
				Name: ptr("Prop"), H2HEnabled: ptr(true), WithdrawalsEnabled: ptr(true),
				DepositFeePercent: ptr(dec("1.5")), DepositFeeFixed: ptr(dec("2")),
				WithdrawCommissionPercent: ptr(dec("1")), WithdrawCommissionFixed: ptr(dec("5")),
			})
			if err != nil {
				rt.Fatal(err)
			}
			id := org.Organization.ID
			f.addWallet(id, "bkash", "cash_out", "01833333333")
			m := &ledgerModel{pending: map[string]decimal.Decimal{}}
			amount := func(label string, lo, hi int64) decimal.Decimal {
				return decimal.New(rapid.Int64Range(lo*100, hi*100).Draw(rt, label), -2)
			}

			rt.Repeat(map[string]func(*rapid.T){
				"deposit": func(rt *rapid.T) {
					a := amount("deposit", 100, 25000)
					pays := rapid.Bool().Draw(rt, "pays exactly")
					d := f.deposit(id, "bkash_agent", a.String())
					seq++
					p := f.payment(d, fmt.Sprintf("PROP%d", seq))
					if !pays {
						p.Amount = p.Amount.Add(decimal.New(1, -2))
					}
					f.provider.pay(p)
					f.mustSubmit(d, p.TransactionID)
					f.process()
					if pays {
						m.available = m.available.Add(a.Sub(fee(a, "1.5", "2")))
					}
				},
				"withdraw": func(rt *rapid.T) {
					a := amount("withdrawal", 100, 25000)
					seq++
					w, err := f.withdraw(id, "bkash", "01712345678", a.String(), fmt.Sprintf("w%d", seq))
					total := a.Add(fee(a, "1", "5"))
					if m.available.LessThan(total) {
						if engine.ErrorCode(err) != engine.CodeInsufficientBalance {
							rt.Fatalf("withdrawal of %s with %s available: %v", total, m.available, err)
						}
						return
					}
					if err != nil {
						rt.Fatalf("withdrawal of %s with %s available: %v", total, m.available, err)
					}
					m.available, m.held = m.available.Sub(total), m.held.Add(total)
					m.pending[w.ID] = total
				},
				"payouts settle": func(rt *rapid.T) {
					succeed := rapid.Bool().Draw(rt, "payouts succeed")
					outcome := engine.PayoutFailed
					if succeed {
						outcome = engine.PayoutSucceeded
					}
					f.provider.set(func(p *fakeProvider) { p.payoutOutcome = outcome })
					f.payouts() // sends what is new
					f.clock.Add(5 * time.Second)
					f.payouts() // polls what was sent
					for wid, total := range m.pending {
						m.held = m.held.Sub(total)
						if !succeed {
							m.available = m.available.Add(total)
						}
						delete(m.pending, wid)
					}
					f.provider.set(func(p *fakeProvider) { p.payoutOutcome = "" })
				},
				"adjust": func(rt *rapid.T) {
					a := amount("adjustment", 1, 5000)
					if rapid.Bool().Draw(rt, "debit") {
						a = a.Neg()
					}
					_, err := f.eng.AdjustBalance(f.ctx, engine.AdjustParams{OrganizationID: id, Amount: a.StringFixed(2), Reason: "prop", Actor: "rapid"})
					if m.available.Add(a).IsNegative() {
						if engine.ErrorCode(err) != engine.CodeInsufficientBalance {
							rt.Fatalf("debit of %s with %s available: %v", a, m.available, err)
						}
						return
					}
					if err != nil {
						rt.Fatal(err)
					}
					m.available = m.available.Add(a)
				},
				"": func(rt *rapid.T) {
					if d := f.ledgerDifferences(id); len(d) > 0 {
						rt.Fatalf("balance rows differ from the entries: %+v", d)
					}
					sums := f.balances(id)
					total := decimal.Zero
					for _, v := range sums {
						total = total.Add(v)
					}
					if !total.IsZero() {
						rt.Fatalf("entries sum to %s: %v", total, sums)
					}
					b, err := f.eng.GetBalance(f.ctx, id)
					if err != nil {
						rt.Fatal(err)
					}
					if !b.Available.Equal(m.available) || !b.Held.Equal(m.held) {
						rt.Fatalf("balance %s/%s, model %s/%s", b.Available, b.Held, m.available, m.held)
					}
					if b.Available.IsNegative() || b.Held.IsNegative() {
						rt.Fatalf("negative balance %s/%s", b.Available, b.Held)
					}
				},
			})
		})
	})
}
