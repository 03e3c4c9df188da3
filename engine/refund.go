package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Refunds (the contract's extension): a merchant gives a payer money back
// for a deposit that succeeded, in full or in parts. Creating a refund
// holds its amount from the available balance, in the transaction that
// reserves it on the deposit; the engine's worker then asks the deposit's
// provider to send it (Refunder), as it sends payouts, and settles the
// hold when the provider says the refund succeeded, or releases it when
// it failed.

// Refund statuses.
const (
	RefundProcessing = "processing"
	RefundSucceeded  = "succeeded"
	RefundFailed     = "failed"
)

// RefundFailureDeclined is the failure_code of a refund its provider
// refused; the provider's own words stay in FailureReason, for operators.
const RefundFailureDeclined = "provider_declined"

// maxRefundReasonLength bounds a refund's reason, in characters.
const maxRefundReasonLength = 500

// Refund gives money of a succeeded deposit back to its payer.
type Refund struct {
	ID             string
	OrganizationID string
	DepositID      string
	MerchantID     string
	Amount         decimal.Decimal
	// AmountOmitted says the request gave no amount (all that was still
	// refundable): a replay matches it only without an amount either.
	AmountOmitted bool
	// Reason is the merchant's, "" for none.
	Reason   string
	Metadata []byte
	Status   string
	// FailureCode is RefundFailureDeclined once failed, "" otherwise;
	// FailureReason is the provider's explanation (operators only).
	FailureCode   string
	FailureReason string
	// DepositH2H says the deposit is H2H: reading the refund takes the
	// signature, as reading the deposit does.
	DepositH2H bool

	// Step is where the provider's refund stands (PayoutToSend, PayoutSent,
	// PayoutSettled, as for a payout); ProviderReference is its ID there.
	Step              string
	ProviderReference string
	// Tries, NextRunAt and the lease schedule the worker, as for payouts.
	Tries       int
	NextRunAt   time.Time
	LeaseOwner  string
	LeasedUntil time.Time

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Refunder is the capability of a Provider that can refund its deposits'
// payers. The engine finds it by a type assertion on Config.Provider: a
// provider without it refuses every refund with 503 method_unavailable.
// Calls may go over the network, so the engine never makes them inside a
// Store transaction.
//
// The refund's ID is the idempotency key: a provider must treat a second
// SendRefund with the same key as the first (answering with the refund
// that one made), so that a send repeated after a timeout, by this worker
// or one that took over, never refunds twice.
type Refunder interface {
	// CheckRefund returns ErrMethodUnavailable if the provider cannot
	// accept this refund now (the create is refused with 503). It is
	// called before the create's transaction, and should be quick.
	CheckRefund(ctx context.Context, req RefundRequest) error
	// SendRefund sends the refund. An error (a timeout,
	// ErrProviderUnavailable) says nothing of whether it was made; the
	// engine sends again with the same key, with backoff.
	SendRefund(ctx context.Context, req RefundRequest) (*ProviderRefund, error)
	// GetRefund returns the refund sent with req.IdempotencyKey, or
	// ErrRefundNotFound if the provider never received it (the engine
	// then sends it).
	GetRefund(ctx context.Context, req RefundRequest) (*ProviderRefund, error)
}

// ErrRefundNotFound is returned by Refunder.GetRefund for a key never sent.
var ErrRefundNotFound = errors.New("refund not found")

// RefundRequest is a refund as a provider needs it: the refund and the
// deposit it gives back, whose payment it names.
type RefundRequest struct {
	// IdempotencyKey is the refund's ID.
	IdempotencyKey string
	OrganizationID string
	Amount         decimal.Decimal
	Reason         string
	// The deposit: its ID, method and channel, the payer's phone (empty
	// for a redirect deposit that did not ask it), the transaction ID
	// that paid it and its amount.
	DepositID             string
	PaymentMethod         string
	Channel               string
	PayerPhone            string
	ProviderTransactionID string
	DepositAmount         decimal.Decimal
}

// ProviderRefund is a provider's refund as it reports it. Status is
// PayoutPending, PayoutSucceeded or PayoutFailed.
type ProviderRefund struct {
	IdempotencyKey string
	Reference      string
	Status         string
	// Reason explains a failed refund.
	Reason string
}

func newRefundRequest(d *Deposit, r *Refund) RefundRequest {
	return RefundRequest{
		IdempotencyKey: r.ID, OrganizationID: r.OrganizationID, Amount: r.Amount, Reason: r.Reason,
		DepositID: d.ID, PaymentMethod: d.PaymentMethod, Channel: d.Channel, PayerPhone: d.PayerPhone,
		ProviderTransactionID: d.ProviderTransactionID, DepositAmount: d.Amount,
	}
}

// RefundView is a refund as its endpoints and events show it.
type RefundView struct {
	ID          string          `json:"id"`
	DepositID   string          `json:"deposit_id"`
	Amount      string          `json:"amount"`
	Status      string          `json:"status"`
	MerchantID  string          `json:"merchant_id"`
	Reason      *string         `json:"reason"`
	Metadata    json.RawMessage `json:"metadata"`
	FailureCode *string         `json:"failure_code"`
	CreatedAt   string          `json:"created_at"`
}

// NewRefundView returns the wire shape of r.
func NewRefundView(r *Refund) RefundView {
	return RefundView{
		ID: r.ID, DepositID: r.DepositID, Amount: FormatAmount(r.Amount), Status: r.Status,
		MerchantID: r.MerchantID, Reason: nullable(r.Reason), Metadata: r.Metadata,
		FailureCode: nullable(r.FailureCode), CreatedAt: FormatTime(r.CreatedAt),
	}
}

// CreateRefundParams is a create-refund request as the transport decoded
// it: JSON types checked, values not.
type CreateRefundParams struct {
	OrganizationID string
	DepositID      string
	// Amount is the requested amount; AmountGiven is false when the
	// request had none (or null): all that is still refundable.
	Amount      string
	AmountGiven bool
	MerchantID  string
	Reason      string
	Metadata    []byte // raw JSON object, nil when absent
	// Audit records the create in the audit log, with the context's actor
	// (WithActor), in the refund's transaction: an operator's refund (the
	// console, the admin command), not an API client's.
	Audit bool
}

// AuditRefundCreate is the audit action of an operator's refund.
const AuditRefundCreate = "refund.create"

// Validate checks the request's own values (400): the transport calls it
// before it looks for the deposit, as the contract orders the answers.
func (p CreateRefundParams) Validate() error {
	_, err := p.validate()
	return err
}

func (p CreateRefundParams) validate() (*Refund, error) {
	r := &Refund{OrganizationID: p.OrganizationID, DepositID: p.DepositID, AmountOmitted: !p.AmountGiven}
	if p.AmountGiven {
		var err error
		if r.Amount, err = ParseAmount("amount", p.Amount); err != nil {
			return nil, err
		}
		if !r.Amount.IsPositive() {
			return nil, Invalid("amount", "must be greater than zero")
		}
	}
	// The contract bounds a refund's merchant_id in characters, not bytes.
	switch n := utf8.RuneCountInString(p.MerchantID); {
	case n == 0:
		return nil, Invalid("merchant_id", "must be at least 1 character")
	case n > maxMerchantIDLength:
		return nil, Invalid("merchant_id", "must be at most 255 characters")
	}
	if err := checkText("merchant_id", p.MerchantID); err != nil {
		return nil, err
	}
	r.MerchantID = p.MerchantID
	if utf8.RuneCountInString(p.Reason) > maxRefundReasonLength {
		return nil, Invalid("reason", "must be at most 500 characters")
	}
	if err := checkText("reason", p.Reason); err != nil {
		return nil, err
	}
	r.Reason = p.Reason
	var err error
	if r.Metadata, err = normalizeMetadata(p.Metadata); err != nil {
		return nil, err
	}
	return r, nil
}

// sameRequest reports whether a create asks for what r was created with:
// the same deposit and requested amount (an omitted amount matches only an
// omitted one). Reason and metadata are not compared.
func (r *Refund) sameRequest(asked *Refund) bool {
	if r.DepositID != asked.DepositID || r.AmountOmitted != asked.AmountOmitted {
		return false
	}
	return r.AmountOmitted || r.Amount.Equal(asked.Amount)
}

// CreateRefund accepts a refund of a succeeded deposit. Under the
// deposit's lock, then the organization's, it checks (in the contract's
// order) that the deposit is refundable, the merchant_id (returning the
// refund it already names, created false, or merchant_id_conflict), that
// the amount fits in what the deposit's refunds have not reserved, that
// the available balance covers it, and that the provider can refund;
// then it writes the refund, the deposit's reservation, refund.created
// and the hold, in one transaction.
func (e *Engine) CreateRefund(ctx context.Context, p CreateRefundParams) (*Refund, bool, error) {
	r, err := p.validate()
	if err != nil {
		return nil, false, err
	}
	// The provider is asked before the transaction (it may be a network
	// call), about the deposit as it is now; its answer counts only if
	// every other check passes.
	var d0 *Deposit
	err = e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		d0, err = tx.GetDeposit(ctx, p.OrganizationID, p.DepositID)
		return notFound(err, "deposit")
	})
	if err != nil {
		return nil, false, err
	}
	unavailable, err := e.refundUnavailable(ctx, d0, r)
	if err != nil {
		return nil, false, err
	}
	var out *Refund
	created := false
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		out, created = nil, false
		d, err := tx.LockDeposit(ctx, p.DepositID)
		if errors.Is(err, ErrNotFound) || (err == nil && d.OrganizationID != p.OrganizationID) {
			return Errorf(CodeNotFound, "deposit not found")
		} else if err != nil {
			return err
		}
		if d.Status != StatusSucceeded {
			return Errorf(CodeDepositNotRefundable, "deposit: its status is %s; only a succeeded deposit can be refunded", d.Status)
		}
		// Every refund of the organization is created under its lock: the
		// merchant_id read below and the balance checked stay true until
		// the commit.
		if _, err := tx.LockOrganization(ctx, p.OrganizationID); err != nil {
			return notFound(err, "organization")
		}
		if prev, err := tx.GetRefundByMerchantID(ctx, p.OrganizationID, r.MerchantID); err == nil {
			if !prev.sameRequest(r) {
				return Errorf(CodeMerchantIDConflict, "merchant_id: %s was used for a refund with another deposit or amount", r.MerchantID)
			}
			out = prev
			return nil
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		remaining := d.Amount.Sub(d.RefundReserved)
		amount := r.Amount
		if r.AmountOmitted {
			amount = remaining
		}
		if !amount.IsPositive() || amount.GreaterThan(remaining) {
			return Errorf(CodeRefundExceedsDeposit, "amount: the deposit has %s left to refund", FormatAmount(remaining))
		}
		balances, err := tx.AccountBalances(ctx, p.OrganizationID)
		if err != nil {
			return err
		}
		if available := balances[AccountAvailable]; available.LessThan(amount) {
			return Errorf(CodeInsufficientBalance, "amount: the available balance %s does not cover %s",
				FormatAmount(available), FormatAmount(amount))
		}
		if unavailable {
			return Errorf(CodeMethodUnavailable, "payment_method: refunds of %s deposits are temporarily unavailable", d.PaymentMethod)
		}
		now := e.now()
		nr := *r
		nr.ID = NewID(PrefixRefund, now)
		nr.Amount, nr.Status, nr.Step = amount, RefundProcessing, PayoutToSend
		nr.DepositH2H = d.CheckoutMode == CheckoutH2H
		nr.NextRunAt, nr.CreatedAt, nr.UpdatedAt = now, now, now
		if err := tx.CreateRefund(ctx, &nr); err != nil {
			return err
		}
		d.RefundReserved = d.RefundReserved.Add(amount)
		d.UpdatedAt = now
		if err := tx.UpdateDepositRefunds(ctx, d); err != nil {
			return err
		}
		if err := e.writeEvent(ctx, tx, nr.OrganizationID, EventRefundCreated, nr.ID, NewRefundView(&nr), now); err != nil {
			return err
		}
		out, created = &nr, true
		if p.Audit {
			err := e.audit(ctx, tx, AuditRefundCreate, nr.OrganizationID, nr.ID, map[string]string{
				"deposit_id": nr.DepositID, "amount": FormatAmount(amount), "merchant_id": nr.MerchantID, "reason": nr.Reason,
			})
			if err != nil {
				return err
			}
		}
		return e.writeJournal(ctx, tx, &Journal{
			OrganizationID: nr.OrganizationID, Kind: JournalRefundHold, Reference: nr.ID, Memo: "refund " + nr.MerchantID,
			Entries: []Entry{{AccountAvailable, amount.Neg()}, {AccountHeld, amount}},
		}, now)
	})
	if err != nil {
		return nil, false, err
	}
	if created {
		e.wakeWorkers()
	}
	return out, created, nil
}

// refundUnavailable asks the provider whether it can refund d now: a
// provider that is no Refunder never can.
func (e *Engine) refundUnavailable(ctx context.Context, d *Deposit, r *Refund) (bool, error) {
	refunder, ok := e.provider.(Refunder)
	if !ok {
		return true, nil
	}
	err := refunder.CheckRefund(ctx, newRefundRequest(d, r))
	if errors.Is(err, ErrMethodUnavailable) {
		return true, nil
	}
	return false, err
}

// GetRefund returns a refund of the organization, or not_found.
func (e *Engine) GetRefund(ctx context.Context, orgID, id string) (*Refund, error) {
	var r *Refund
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		r, err = tx.GetRefund(ctx, orgID, id)
		return notFound(err, "refund")
	})
	return r, err
}

// ListRefunds returns a page of the organization's refunds, newest first,
// all or one deposit's (DepositID). The page is signed when the
// organization takes H2H deposits or shows a refund of one.
func (e *Engine) ListRefunds(ctx context.Context, p ListParams) (*Page[*Refund], error) {
	if err := checkFilters(p, false); err != nil {
		return nil, err
	}
	if p.Status != "" || p.PaymentMethod != "" || p.MerchantID != "" || p.ProviderTransactionID != "" || p.Account != "" {
		return nil, Invalid("filter", "refunds are filtered by deposit_id and created only")
	}
	return listPage(ctx, e, p, "refund",
		func(ctx context.Context, tx Tx, id string) (PageCursor, error) {
			r, err := tx.GetRefund(ctx, p.OrganizationID, id)
			if err != nil {
				return PageCursor{}, err
			}
			return PageCursor{r.CreatedAt, r.ID}, nil
		}, Tx.ListRefundsPage,
		func(_ context.Context, _ Tx, r *Refund) (bool, error) { return r.DepositH2H, nil })
}

// ProcessRefunds claims the refunds that are due and moves each one step:
// send it to the provider, or ask for its status. It returns how many it
// claimed.
func (e *Engine) ProcessRefunds(ctx context.Context) (int, error) {
	now := e.now()
	var claimed []*Refund
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		claimed, err = tx.ClaimDueRefunds(ctx, ClaimParams{
			Now: now, Owner: e.workerID, LeasedUntil: now.Add(e.cfg.LeaseDuration), Limit: e.cfg.ClaimBatch,
		})
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(claimed), e.forEachClaimed(len(claimed), func(i int) error {
		if err := e.advanceRefund(ctx, claimed[i]); err != nil {
			return fmt.Errorf("refund %s: %w", claimed[i].ID, err)
		}
		return nil
	})
}

// advanceRefund calls the provider outside any transaction, then records
// what it said if this worker still holds the refund's lease, as
// advancePayout does.
func (e *Engine) advanceRefund(ctx context.Context, r *Refund) error {
	e.yieldToAPI(ctx)
	var d *Deposit
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		d, err = tx.GetDeposit(ctx, r.OrganizationID, r.DepositID)
		return err
	})
	if err != nil {
		return err
	}
	var pr *ProviderRefund
	callErr := ErrProviderUnavailable // a provider that can no longer refund: try later
	if refunder, ok := e.provider.(Refunder); ok {
		callCtx, cancel := context.WithTimeout(ctx, e.cfg.LookupTimeout)
		if r.Step == PayoutToSend {
			pr, callErr = refunder.SendRefund(callCtx, newRefundRequest(d, r))
		} else {
			pr, callErr = refunder.GetRefund(callCtx, newRefundRequest(d, r))
		}
		cancel()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		cur := *r
		now := e.now()
		cur.Tries++
		cur.LeaseOwner, cur.LeasedUntil = "", time.Time{}
		cur.UpdatedAt = now
		switch {
		case errors.Is(callErr, ErrRefundNotFound):
			cur.Step, cur.NextRunAt = PayoutToSend, now
		case callErr != nil || pr == nil:
			cur.NextRunAt = now.Add(payoutBackoff(cur.Tries))
		case pr.Status == PayoutSucceeded:
			cur.ProviderReference = pr.Reference
			return e.finishRefund(ctx, tx, &cur, r.LeasedUntil, RefundSucceeded, "", now)
		case pr.Status == PayoutFailed:
			cur.ProviderReference = pr.Reference
			return e.finishRefund(ctx, tx, &cur, r.LeasedUntil, RefundFailed, pr.Reason, now)
		default: // pending: ask again later
			cur.Step, cur.ProviderReference = PayoutSent, pr.Reference
			cur.NextRunAt = now.Add(e.cfg.PayoutPollInterval)
		}
		return tx.UpdateLeasedRefund(ctx, &cur, e.workerID, r.LeasedUntil)
	})
	if errors.Is(err, ErrLeaseLost) {
		return nil // another worker took it over after our lease ran out
	}
	return err
}

// finishRefund records a refund's outcome in the caller's transaction, if
// this worker still holds the lease that ends leasedUntil: the refund's
// status and event, the deposit's totals (and its refunded status and
// event once its succeeded refunds reach its amount), and the journal
// that settles or releases the hold.
func (e *Engine) finishRefund(ctx context.Context, tx Tx, r *Refund, leasedUntil time.Time, status, reason string, now time.Time) error {
	// The deposit first, as CreateRefund locks it: two refunds of one
	// deposit finishing at once write its totals one after the other.
	d, err := tx.LockDeposit(ctx, r.DepositID)
	if err != nil {
		return err
	}
	r.Status, r.Step, r.FailureReason = status, PayoutSettled, reason
	if status == RefundFailed {
		r.FailureCode = RefundFailureDeclined
	}
	// The status change first: without the lease it fails the
	// transaction before anything else is written.
	if err := tx.UpdateLeasedRefund(ctx, r, e.workerID, leasedUntil); err != nil {
		return err
	}
	j := &Journal{OrganizationID: r.OrganizationID, Reference: r.ID, Memo: "refund " + r.MerchantID}
	event := EventRefundSucceeded
	if status == RefundSucceeded {
		j.Kind = JournalRefundSettle
		j.Entries = []Entry{{AccountHeld, r.Amount.Neg()}, {AccountExternal, r.Amount}}
		d.RefundedAmount = d.RefundedAmount.Add(r.Amount)
	} else {
		j.Kind, event = JournalRefundRelease, EventRefundFailed
		j.Entries = []Entry{{AccountHeld, r.Amount.Neg()}, {AccountAvailable, r.Amount}}
		d.RefundReserved = d.RefundReserved.Sub(r.Amount)
	}
	refunded := status == RefundSucceeded && d.Status == StatusSucceeded && d.RefundedAmount.GreaterThanOrEqual(d.Amount)
	if refunded {
		d.Status = StatusRefunded
		if d.CheckoutMode == CheckoutH2H {
			d.VerificationState = StatusRefunded
		}
	}
	d.UpdatedAt = now
	if err := tx.UpdateDepositRefunds(ctx, d); err != nil {
		return err
	}
	note(ctx, func(o Observer) {
		if ro, ok := o.(RefundObserver); ok {
			ro.RefundFinished(status)
		}
	})
	if err := e.writeEvent(ctx, tx, r.OrganizationID, event, r.ID, NewRefundView(r), now); err != nil {
		return err
	}
	if refunded {
		if err := e.writeEvent(ctx, tx, d.OrganizationID, EventDepositRefunded, d.ID, DepositView(d, now, e.cfg.APIPrefix), now); err != nil {
			return err
		}
	}
	return e.writeJournal(ctx, tx, j, now)
}

// PollRefundNow makes a processing refund due now, for when its outcome is
// known to have changed (a sandbox settlement).
func (e *Engine) PollRefundNow(ctx context.Context, orgID, id string) error {
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		r, err := tx.GetRefund(ctx, orgID, id)
		if err != nil {
			return notFound(err, "refund")
		}
		if r.Status != RefundProcessing {
			return nil
		}
		r.NextRunAt = e.now()
		return tx.UpdateRefund(ctx, r)
	})
	if err == nil {
		e.wakeWorkers()
	}
	return err
}

// ExportRefunds is ExportDeposits for refunds: the organization's refunds
// in the created range, oldest first, a page at a time.
func (e *Engine) ExportRefunds(ctx context.Context, p ListParams, fn func(*Refund) error) error {
	return export(ctx, e, p, Tx.ListRefundsPage, func(r *Refund) PageCursor { return PageCursor{r.CreatedAt, r.ID} }, fn)
}
