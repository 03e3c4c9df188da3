package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// bankAccount is a bank account number as the contract allows it.
var bankAccount = regexp.MustCompile(`^[0-9]{8,20}$`)

// CreateWithdrawalParams is a create-withdrawal request as the transport
// decoded it: JSON types checked, values not.
type CreateWithdrawalParams struct {
	OrganizationID string
	Amount         string
	Phone          string
	PaymentMethod  string
	MerchantID     string
	Metadata       []byte // raw JSON object, nil when absent
}

func (p CreateWithdrawalParams) validate() (*Withdrawal, error) {
	w := &Withdrawal{OrganizationID: p.OrganizationID}
	var err error
	if w.Amount, err = ParseAmount("amount", p.Amount); err != nil {
		return nil, err
	}
	method, _ := LookupMethod(p.PaymentMethod)
	if !method.Payout.Offered() {
		return nil, Invalid("payment_method", "must be "+OneOf(PayoutMethods()))
	}
	w.PaymentMethod = p.PaymentMethod
	if err := method.Payout.check("amount", w.Amount, p.PaymentMethod); err != nil {
		return nil, err
	}
	if method.PayoutToBankAccount {
		if !bankAccount.MatchString(p.Phone) {
			return nil, Invalid("phone", "must be a bank account number of 8 to 20 digits for bank")
		}
		w.Account = p.Phone
	} else if w.Account, err = NormalizePhone("phone", p.Phone); err != nil {
		return nil, err
	}
	if err := checkMerchantID(p.MerchantID); err != nil {
		return nil, err
	}
	w.MerchantID = p.MerchantID
	if w.Metadata, err = normalizeMetadata(p.Metadata); err != nil {
		return nil, err
	}
	return w, nil
}

// CreateWithdrawal accepts a payout: under the organization's lock it
// checks that the available balance covers amount plus commission, holds
// that total, and writes withdraw.created, all in one transaction. Any
// reuse of a merchant_id is merchant_id_exists and creates nothing.
func (e *Engine) CreateWithdrawal(ctx context.Context, p CreateWithdrawalParams) (*Withdrawal, error) {
	w, err := p.validate()
	if err != nil {
		return nil, err
	}
	org, err := e.GetOrganization(ctx, p.OrganizationID)
	if err != nil {
		return nil, err
	}
	if !org.WithdrawalsEnabled {
		return nil, Errorf(CodeForbidden, "withdrawals are not enabled for this organization")
	}
	if err := e.provider.CheckPayoutMethod(ctx, w.PaymentMethod); errors.Is(err, ErrMethodUnavailable) {
		return nil, Errorf(CodeMethodUnavailable, "payment_method: payouts by %s are temporarily unavailable", w.PaymentMethod)
	} else if err != nil {
		return nil, err
	}
	err = e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		org, err := tx.LockOrganization(ctx, p.OrganizationID)
		if err != nil {
			return err
		}
		now := e.now()
		w.ID = NewID(PrefixWithdrawal, now)
		w.Commission = org.WithdrawCommission(w.PaymentMethod).Of(w.Amount)
		w.Status, w.PayoutStep = WithdrawalProcessing, PayoutToSend
		w.NextRunAt, w.CreatedAt, w.UpdatedAt = now, now, now
		// The insert comes first so that a reused merchant_id is always
		// merchant_id_exists, whatever the balance; an insufficient balance
		// then rolls the insert back.
		if err := tx.CreateWithdrawal(ctx, w); errors.Is(err, ErrDuplicate) {
			return errMerchantIDExists(w.MerchantID)
		} else if err != nil {
			return err
		}
		balances, err := tx.AccountBalances(ctx, org.ID)
		if err != nil {
			return err
		}
		if available := balances[AccountAvailable]; available.LessThan(w.Total()) {
			return Errorf(CodeInsufficientBalance, "amount: the available balance %s does not cover %s plus %s commission",
				FormatAmount(available), FormatAmount(w.Amount), FormatAmount(w.Commission))
		}
		if err := e.writeJournal(ctx, tx, &Journal{
			OrganizationID: org.ID, Kind: JournalWithdrawalHold, Reference: w.ID, Memo: "withdrawal " + w.MerchantID,
			Entries: []Entry{{AccountAvailable, w.Total().Neg()}, {AccountHeld, w.Total()}},
		}, now); err != nil {
			return err
		}
		return e.writeEvent(ctx, tx, org.ID, EventWithdrawCreated, w.ID, NewWithdrawalView(w), now)
	})
	if err != nil {
		return nil, err
	}
	e.wakeWorkers()
	return w, nil
}

func errMerchantIDExists(id string) error {
	return Errorf(CodeMerchantIDExists, "merchant_id: %s was already used for a withdrawal", id)
}

// GetWithdrawal returns a withdrawal of the organization, or not_found.
func (e *Engine) GetWithdrawal(ctx context.Context, orgID, id string) (*Withdrawal, error) {
	var w *Withdrawal
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		w, err = tx.GetWithdrawal(ctx, orgID, id)
		return notFound(err, "withdrawal")
	})
	return w, err
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
	for _, t := range [][2]string{{"reason", reason}, {"actor", actor}} {
		if err := checkText(t[0], t[1]); err != nil {
			return nil, err
		}
	}
	var j *Journal
	err = e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
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
			OrganizationID: p.OrganizationID, Kind: JournalAdjustment, Memo: reason, Actor: actor,
			Entries: []Entry{{AccountAdjustments, amount.Neg()}, {AccountAvailable, amount}},
		}
		if err := e.writeJournal(ctx, tx, j, e.now()); err != nil {
			return err
		}
		return e.audit(WithActor(ctx, actor), tx, AuditBalanceAdjust, p.OrganizationID, j.ID, map[string]string{
			"amount": FormatAmount(amount), "reason": reason,
		})
	})
	return j, err
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

// writeEvent writes an event to the outbox, and a delivery of it for every
// enabled webhook endpoint, in the caller's transaction.
func (e *Engine) writeEvent(ctx context.Context, tx Tx, orgID, typ, resourceID string, data any, now time.Time) error {
	ev, err := newEvent(orgID, typ, resourceID, data, now)
	if err != nil {
		return err
	}
	if err := tx.CreateEvent(ctx, ev); err != nil {
		return err
	}
	n, err := fanOut(ctx, tx, ev, now)
	if n > 0 {
		e.deliveriesQueued.Store(true)
	}
	return err
}

// ProcessPayouts claims the withdrawals whose payout is due and moves each
// one step: send it, or ask for its status. It returns how many it claimed.
func (e *Engine) ProcessPayouts(ctx context.Context) (int, error) {
	now := e.now()
	var claimed []*Withdrawal
	err := e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		claimed, err = tx.ClaimDuePayouts(ctx, ClaimParams{
			Now: now, Owner: e.workerID, LeasedUntil: now.Add(e.cfg.LeaseDuration), Limit: e.cfg.ClaimBatch,
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(claimed), e.forEachClaimed(len(claimed), func(i int) error {
		if err := e.advancePayout(ctx, claimed[i]); err != nil {
			return fmt.Errorf("withdrawal %s: %w", claimed[i].ID, err)
		}
		return nil
	})
}

// advancePayout calls the provider outside any transaction, then records
// what it said if this worker still holds the withdrawal's lease. The
// idempotency key is the withdrawal's ID, so a send repeated after a
// timeout (by this worker or one that took over) pays nothing twice.
func (e *Engine) advancePayout(ctx context.Context, w *Withdrawal) error {
	callCtx, cancel := context.WithTimeout(ctx, e.cfg.LookupTimeout)
	var p *Payout
	var callErr error
	if w.PayoutStep == PayoutToSend {
		p, callErr = e.provider.SendPayout(callCtx, PayoutRequest{
			IdempotencyKey: w.ID, OrganizationID: w.OrganizationID, Method: w.PaymentMethod, Account: w.Account, Amount: w.Amount,
		})
	} else {
		p, callErr = e.provider.GetPayout(callCtx, w.ID)
	}
	cancel()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		cur, err := tx.LockWithdrawal(ctx, w.OrganizationID, w.ID)
		if err != nil {
			return err
		}
		if cur.Status != WithdrawalProcessing || cur.LeaseOwner != e.workerID || !cur.LeasedUntil.Equal(w.LeasedUntil) {
			return nil // another worker took it over after our lease ran out
		}
		now := e.now()
		cur.Tries++
		cur.LeaseOwner, cur.LeasedUntil = "", time.Time{}
		cur.UpdatedAt = now
		switch {
		case errors.Is(callErr, ErrPayoutNotFound):
			// Asked for a status, but the provider never got the payout:
			// send it (again, with the same key).
			cur.PayoutStep, cur.NextRunAt = PayoutToSend, now
		case callErr != nil || p == nil:
			cur.NextRunAt = now.Add(payoutBackoff(cur.Tries))
		case p.Status == PayoutSucceeded:
			cur.ProviderReference = p.Reference
			return e.finishWithdrawal(ctx, tx, cur, WithdrawalSucceeded, "", now)
		case p.Status == PayoutFailed:
			cur.ProviderReference = p.Reference
			return e.finishWithdrawal(ctx, tx, cur, WithdrawalFailed, p.Reason, now)
		default: // pending: ask again later
			cur.PayoutStep, cur.ProviderReference = PayoutSent, p.Reference
			cur.NextRunAt = now.Add(e.cfg.PayoutPollInterval)
		}
		return tx.UpdateWithdrawal(ctx, cur)
	})
}

// payoutBackoff is the wait after a failed provider call: 5 s doubling to
// at most 5 minutes. A payout is never given up by the engine: only the
// provider can say it failed, since a timeout may hide a payout made.
func payoutBackoff(tries int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < tries && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

// finishWithdrawal settles (succeeded) or releases (failed) the hold and
// writes the event, with the status change, in the caller's transaction.
func (e *Engine) finishWithdrawal(ctx context.Context, tx Tx, w *Withdrawal, status, reason string, now time.Time) error {
	w.Status, w.PayoutStep, w.FailureReason = status, PayoutSettled, reason
	if err := tx.UpdateWithdrawal(ctx, w); err != nil {
		return err
	}
	j := &Journal{OrganizationID: w.OrganizationID, Reference: w.ID, Memo: "withdrawal " + w.MerchantID}
	event := EventWithdrawSucceeded
	if status == WithdrawalSucceeded {
		j.Kind = JournalWithdrawalSettle
		j.Entries = []Entry{{AccountHeld, w.Total().Neg()}, {AccountExternal, w.Amount}}
		if w.Commission.IsPositive() {
			j.Entries = append(j.Entries, Entry{AccountFees, w.Commission})
		}
	} else {
		j.Kind, event = JournalWithdrawalRelease, EventWithdrawFailed
		j.Entries = []Entry{{AccountHeld, w.Total().Neg()}, {AccountAvailable, w.Total()}}
	}
	if err := e.writeJournal(ctx, tx, j, now); err != nil {
		return err
	}
	return e.writeEvent(ctx, tx, w.OrganizationID, event, w.ID, NewWithdrawalView(w), now)
}

// PollPayoutNow makes a processing withdrawal's payout due now, for when
// its outcome is known to have changed (a sandbox settlement).
func (e *Engine) PollPayoutNow(ctx context.Context, orgID, id string) error {
	err := e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		w, err := tx.LockWithdrawal(ctx, orgID, id)
		if err != nil {
			return notFound(err, "withdrawal")
		}
		if w.Status != WithdrawalProcessing {
			return nil
		}
		w.NextRunAt = e.now()
		return tx.UpdateWithdrawal(ctx, w)
	})
	if err == nil {
		e.wakeWorkers()
	}
	return err
}
