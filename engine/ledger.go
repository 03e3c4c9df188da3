package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Ledger accounts. Each organization has its own; the external and fee
// accounts are the other side of money entering and leaving it, so every
// journal sums to zero.
const (
	// AccountAvailable is what the organization can withdraw.
	AccountAvailable = "available"
	// AccountHeld is reserved for withdrawals and refunds in flight.
	AccountHeld = "held"
	// AccountExternal is the money networks' side: deposits come from it
	// and payouts go to it. Its balance is the negative of what they moved.
	AccountExternal = "external"
	// AccountFees is what payd earned from the organization.
	AccountFees = "fees"
	// AccountAdjustments is the other side of manual adjustments.
	AccountAdjustments = "adjustments"
)

// Journal kinds: every way money moves.
const (
	JournalDepositCredit     = "deposit_credit"     // external -> available (+ fees)
	JournalWithdrawalHold    = "withdrawal_hold"    // available -> held
	JournalWithdrawalSettle  = "withdrawal_settle"  // held -> external (+ fees)
	JournalWithdrawalRelease = "withdrawal_release" // held -> available
	JournalAdjustment        = "adjustment"         // adjustments <-> available
	// JournalLatePayment credits, by an operator, a payment proven after its
	// deposit closed unpaid (CreditLatePayment): external -> available (+ fees).
	JournalLatePayment = "late_payment"
	// Refunds hold, settle and release as withdrawals do; the deposit fee
	// is not returned.
	JournalRefundHold    = "refund_hold"    // available -> held
	JournalRefundSettle  = "refund_settle"  // held -> external
	JournalRefundRelease = "refund_release" // held -> available
)

// Journal is one balanced movement of money in an organization's ledger:
// its entries sum to zero.
type Journal struct {
	ID             string
	OrganizationID string
	Kind           string
	// Reference is the resource the movement is for (a deposit ID).
	Reference string
	Memo      string
	// Actor is who made a manual adjustment; empty for the engine's own.
	Actor     string
	Entries   []Entry
	CreatedAt time.Time
}

// checkBalanced refuses a journal whose entries do not sum to zero or whose
// amounts are not whole poisha: a ledger bug must fail the transaction, not
// be written.
func (j *Journal) checkBalanced() error {
	sum := decimal.Zero
	for _, e := range j.Entries {
		if !e.Amount.Equal(e.Amount.Round(2)) {
			return fmt.Errorf("journal %s: entry %s %s is not whole poisha", j.ID, e.Account, e.Amount)
		}
		sum = sum.Add(e.Amount)
	}
	if len(j.Entries) < 2 || !sum.IsZero() {
		return fmt.Errorf("journal %s: %d entries sum to %s, not zero", j.ID, len(j.Entries), sum)
	}
	return nil
}

// Entry is one leg of a journal: a signed amount on an account.
type Entry struct {
	Account string
	Amount  decimal.Decimal
}

// depositCreditJournal credits a succeeded deposit: the organization gets
// the amount minus the deposit fee.
func depositCreditJournal(org *Organization, d *Deposit) *Journal {
	fee := org.DepositFeeOf(d.PaymentMethod, d.Amount)
	j := &Journal{
		OrganizationID: d.OrganizationID, Kind: JournalDepositCredit, Reference: d.ID,
		Memo: "deposit " + d.MerchantID,
		Entries: []Entry{
			{AccountExternal, d.Amount.Neg()},
			{AccountAvailable, d.Amount.Sub(fee)},
		},
	}
	if fee.IsPositive() {
		j.Entries = append(j.Entries, Entry{AccountFees, fee})
	}
	return j
}

// DepositFeeOf is the fee of a deposit of amount by method at o's rates:
// never more than the amount, so a deposit never costs its payee.
func (o *Organization) DepositFeeOf(method string, amount decimal.Decimal) decimal.Decimal {
	return decimal.Min(o.DepositFee(method).Of(amount), amount)
}

// Totals returns what the journal adds to each account's balance, one
// entry per account, in account order: the order in which stores update
// balance rows, so that two journals never lock them in opposite orders.
func (j *Journal) Totals() []Entry {
	var out []Entry
	for _, e := range j.Entries {
		i, found := slices.BinarySearchFunc(out, e.Account, func(t Entry, account string) int { return strings.Compare(t.Account, account) })
		if found {
			out[i].Amount = out[i].Amount.Add(e.Amount)
		} else {
			out = slices.Insert(out, i, e)
		}
	}
	return out
}

// LedgerDifference is an account whose maintained balance is not what its
// entries add up to.
type LedgerDifference struct {
	OrganizationID string
	Account        string
	Balance        decimal.Decimal // the balance row; zero if there is none
	Entries        decimal.Decimal // the sum of the account's entries
}

// DiffBalances compares an organization's maintained balances with the
// sums of its entries (Tx.AccountBalances with Tx.SumEntries) and returns
// each account on which they differ, in account order. A missing account
// counts as zero on either side.
func DiffBalances(orgID string, balances, sums map[string]decimal.Decimal) []LedgerDifference {
	accounts := map[string]bool{}
	for a := range balances {
		accounts[a] = true
	}
	for a := range sums {
		accounts[a] = true
	}
	var out []LedgerDifference
	for _, a := range slices.Sorted(maps.Keys(accounts)) {
		if !balances[a].Equal(sums[a]) {
			out = append(out, LedgerDifference{OrganizationID: orgID, Account: a, Balance: balances[a], Entries: sums[a]})
		}
	}
	return out
}

// LedgerCheck is what VerifyLedger found.
type LedgerCheck struct {
	Organizations int // organizations checked
	Accounts      int // accounts checked, over all of them
	Differences   []LedgerDifference
}

// VerifyLedger recomputes every organization's balances from its entries,
// each organization in one snapshot, and reports every account whose
// balance row differs. It reads every entry: an operator's check, never a
// request's.
func (e *Engine) VerifyLedger(ctx context.Context) (*LedgerCheck, error) {
	var orgs []*Organization
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		orgs, err = tx.ListOrganizations(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	check := &LedgerCheck{Organizations: len(orgs)}
	for _, org := range orgs {
		var balances, sums map[string]decimal.Decimal
		err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
			var err error
			if balances, err = tx.AccountBalances(ctx, org.ID); err != nil {
				return err
			}
			sums, err = tx.SumEntries(ctx, org.ID)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("organization %s: %w", org.ID, err)
		}
		check.Accounts += max(len(balances), len(sums))
		check.Differences = append(check.Differences, DiffBalances(org.ID, balances, sums)...)
	}
	return check, nil
}

// Balance is an organization's money as its ledger entries add up (read
// from the balance rows kept with them).
type Balance struct {
	Available decimal.Decimal
	Held      decimal.Decimal
}

// GetBalance reads the organization's balance rows: the same cost at any
// ledger size.
func (e *Engine) GetBalance(ctx context.Context, orgID string) (*Balance, error) {
	var b Balance
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		sums, err := tx.AccountBalances(ctx, orgID)
		b.Available, b.Held = sums[AccountAvailable], sums[AccountHeld]
		return err
	})
	return &b, err
}

// AdjustParams is a manual balance adjustment by an operator.
type AdjustParams struct {
	OrganizationID string
	// Amount is signed: "250.00" credits, "-250.00" debits.
	Amount string
	Reason string
	Actor  string
	// JournalID, when set, is the adjustment's journal ID (NewID of
	// PrefixJournal), chosen when its form was shown: the same form sent
	// twice is one adjustment, the second refused as a conflict.
	JournalID string
}

// AdjustBalance credits or debits an organization's available balance by
// hand, with the reason and the actor in the journal. A debit may not take
// the available balance below zero.
func (e *Engine) AdjustBalance(ctx context.Context, p AdjustParams) (*Journal, error) {
	amount, err := ParseAmount("amount", strings.TrimPrefix(p.Amount, "-"))
	if err != nil {
		return nil, err
	}
	if amount.IsZero() {
		return nil, Invalid("amount", "must not be zero")
	}
	if strings.HasPrefix(p.Amount, "-") {
		amount = amount.Neg()
	}
	reason, actor := strings.TrimSpace(p.Reason), strings.TrimSpace(p.Actor)
	if actor == "" && ActorFrom(ctx) != unknownActor {
		actor = ActorFrom(ctx) // the actor of the context (WithActor) by default
	}
	if reason == "" || len(reason) > 500 {
		return nil, Invalid("reason", "must be 1 to 500 characters")
	}
	if actor == "" || len(actor) > 100 {
		return nil, Invalid("actor", "must be 1 to 100 characters")
	}
	if p.JournalID != "" && !validJournalID(p.JournalID) {
		return nil, Invalid("journal_id", "must be a journal ID")
	}
	for _, t := range [][2]string{{"reason", reason}, {"actor", actor}} {
		if err := checkText(t[0], t[1]); err != nil {
			return nil, err
		}
	}
	var j *Journal
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.LockOrganization(ctx, p.OrganizationID); err != nil {
			return notFound(err, "organization")
		}
		balances, err := tx.AccountBalances(ctx, p.OrganizationID)
		if err != nil {
			return err
		}
		if balances[AccountAvailable].Add(amount).IsNegative() {
			return Errorf(CodeInsufficientBalance, "amount: the available balance %s cannot be debited by %s",
				FormatAmount(balances[AccountAvailable]), FormatAmount(amount.Neg()))
		}
		j = &Journal{
			ID: p.JournalID, OrganizationID: p.OrganizationID, Kind: JournalAdjustment, Memo: reason, Actor: actor,
			Entries: []Entry{{AccountAdjustments, amount.Neg()}, {AccountAvailable, amount}},
		}
		if err := e.writeJournal(ctx, tx, j, e.now()); errors.Is(err, ErrDuplicate) {
			return Errorf(CodeConflict, "journal_id: this adjustment is already made")
		} else if err != nil {
			return err
		}
		return e.audit(WithActor(ctx, actor), tx, AuditBalanceAdjust, p.OrganizationID, j.ID, map[string]string{
			"amount": FormatAmount(amount), "reason": reason,
		})
	})
	return j, err
}

// validJournalID reports whether id is one NewID(PrefixJournal) makes.
func validJournalID(id string) bool {
	rest, ok := strings.CutPrefix(id, PrefixJournal)
	if !ok || len(rest) != 26 {
		return false
	}
	for _, c := range []byte(rest) {
		if !strings.ContainsRune(crockford, rune(c)) {
			return false
		}
	}
	return true
}

// ListJournals returns an organization's ledger, oldest first.
func (e *Engine) ListJournals(ctx context.Context, orgID string) ([]*Journal, error) {
	var js []*Journal
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		js, err = tx.ListJournals(ctx, orgID)
		return err
	})
	return js, err
}

// writeJournal checks that j balances and writes it.
func (e *Engine) writeJournal(ctx context.Context, tx Tx, j *Journal, now time.Time) error {
	if j.ID == "" {
		j.ID = NewID(PrefixJournal, now)
	}
	j.CreatedAt = now
	if err := j.checkBalanced(); err != nil {
		return err
	}
	return tx.CreateJournal(ctx, j)
}
