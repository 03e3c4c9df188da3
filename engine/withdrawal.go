package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Withdrawal statuses.
const (
	WithdrawalProcessing = "processing"
	WithdrawalSucceeded  = "succeeded"
	WithdrawalFailed     = "failed"
)

// Payout steps of a processing withdrawal: whether the payout is still to be
// sent to the provider or was sent and awaits its final status.
const (
	PayoutToSend  = "to_send"
	PayoutSent    = "sent"
	PayoutSettled = "settled"
)

// Withdrawal is a payout from an organization's balance to a wallet or a
// bank account. Creating it holds amount plus commission; the payout's
// outcome settles or releases the hold.
type Withdrawal struct {
	ID             string
	OrganizationID string
	MerchantID     string
	Amount         decimal.Decimal
	Commission     decimal.Decimal
	PaymentMethod  string
	// Account is the recipient: a normalized mobile number, or a bank
	// account number for bank (the "phone" field on the wire).
	Account  string
	Metadata []byte
	Status   string

	// PayoutStep is where the payout stands (PayoutToSend, PayoutSent,
	// PayoutSettled); ProviderReference is the provider's ID for it.
	PayoutStep        string
	ProviderReference string
	// FailureReason says why a failed payout failed (operators only).
	FailureReason string
	// Tries, NextRunAt and the lease schedule the payout worker, as for
	// verification attempts.
	Tries       int
	NextRunAt   time.Time
	LeaseOwner  string
	LeasedUntil time.Time

	CreatedAt time.Time
	UpdatedAt time.Time
}

// WithdrawalGate is what a batch of an organization's withdrawal creates
// reads under its lock (Tx.LockWithdrawalGate).
type WithdrawalGate struct {
	Organization *Organization
	// Taken holds the merchant_ids asked for that the organization's
	// withdrawals have; Balances and Endpoints are as AccountBalances and
	// ListWebhookEndpoints (enabled only) give them.
	Taken     map[string]bool
	Balances  map[string]decimal.Decimal
	Endpoints []*WebhookEndpoint
}

// ReadWithdrawalGate is Tx.LockWithdrawalGate made of tx's other methods,
// one after another: for a store that cannot send them in one round trip
// (SQLite, in process) or a Postgres transaction that is not pipelined.
func ReadWithdrawalGate(ctx context.Context, tx Tx, organizationID string, merchantIDs []string) (*WithdrawalGate, error) {
	org, err := tx.LockOrganization(ctx, organizationID)
	if err != nil {
		return nil, err
	}
	g := &WithdrawalGate{Organization: org}
	if g.Taken, err = tx.TakenWithdrawalMerchantIDs(ctx, organizationID, merchantIDs); err != nil {
		return nil, err
	}
	if g.Balances, err = tx.AccountBalances(ctx, organizationID); err != nil {
		return nil, err
	}
	if g.Endpoints, err = tx.ListWebhookEndpoints(ctx, organizationID, true); err != nil {
		return nil, err
	}
	return g, nil
}

// Total is what the withdrawal takes from the balance: amount plus
// commission.
func (w *Withdrawal) Total() decimal.Decimal { return w.Amount.Add(w.Commission) }

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
	// The organization is read under its lock, in the transaction
	// (insertWithdrawal), which refuses a withdrawal of an organization
	// that does not exist or has withdrawals off: no read before it. A
	// refusal of the method is checked first, without the organization,
	// and answered as before one: after not_found and forbidden.
	if err := e.provider.CheckPayoutMethod(ctx, w.PaymentMethod); err != nil {
		if err := e.readWithdrawalsEnabled(ctx, p.OrganizationID); err != nil {
			return nil, err
		}
		if errors.Is(err, ErrMethodUnavailable) {
			return nil, Errorf(CodeMethodUnavailable, "payment_method: payouts by %s are temporarily unavailable", w.PaymentMethod)
		}
		return nil, err
	}
	// Creates of withdrawals share transactions (group commit, see
	// txBatcher), ordered by the organization they lock: its lock, its
	// balances and the batch's merchant_ids are then taken and read once
	// per transaction, the balance checked in memory
	// (sharedTx.accountBalances), which the holds queued before it in the
	// transaction have lowered, and the writes queued to the end of the
	// transaction, where Postgres sends them in one round trip.
	apiWrite := e.apiWrites.begin()
	defer apiWrite() // also if the transaction panics
	err = e.withdraws.inTxHinted(ctx, p.OrganizationID, w.MerchantID, e.insertWithdrawal(w))
	apiWrite()
	if err != nil {
		return nil, err
	}
	e.wakeWorkers()
	return w, nil
}

// readWithdrawalsEnabled returns not_found for an organization that does
// not exist, forbidden for one that has withdrawals off, else nil.
func (e *Engine) readWithdrawalsEnabled(ctx context.Context, orgID string) error {
	var org *Organization
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		org, err = tx.GetOrganization(ctx, orgID)
		return notFound(err, "organization")
	})
	if err != nil {
		return err
	}
	return withdrawalsEnabled(org)
}

func withdrawalsEnabled(org *Organization) error {
	if !org.WithdrawalsEnabled {
		return Errorf(CodeForbidden, "withdrawals are not enabled for this organization")
	}
	return nil
}

// insertWithdrawal is the transaction function that creates w, validated,
// under its organization's lock: the organization's checks, the
// merchant_id and balance checks, the withdrawal, withdraw.created and the
// hold.
func (e *Engine) insertWithdrawal(w *Withdrawal) batchFunc {
	return func(ctx context.Context, tx Tx, shared *sharedTx) error {
		// The lock and the batch's reads under it, at once.
		err := shared.withdrawalGate(ctx, tx, w.OrganizationID)
		if errors.Is(err, ErrNotFound) {
			return refuse(notFound(err, "organization"))
		} else if err != nil {
			return err
		}
		org, err := shared.organization(ctx, tx, w.OrganizationID, true)
		if errors.Is(err, ErrNotFound) {
			return refuse(notFound(err, "organization"))
		} else if err != nil {
			return err
		}
		// Refused under the lock: a change of the setting commits before
		// or after the whole create.
		if err := withdrawalsEnabled(org); err != nil {
			return refuse(err)
		}
		now := e.now()
		w.ID = NewID(PrefixWithdrawal, now)
		w.Commission = org.WithdrawCommission(w.PaymentMethod).Of(w.Amount)
		w.Status, w.PayoutStep = WithdrawalProcessing, PayoutToSend
		w.NextRunAt, w.CreatedAt, w.UpdatedAt = now, now, now
		// Both refusals come before any write, so that a refused create
		// leaves a shared transaction to the others (refuse), and a reused
		// merchant_id is merchant_id_exists whatever the balance. The
		// lookup holds until the commit: every withdrawal of the
		// organization is created under its lock.
		if taken, err := shared.withdrawalMerchantIDTaken(ctx, tx, org.ID, w.MerchantID); err != nil {
			return err
		} else if taken {
			return refuse(errMerchantIDExists(w.MerchantID))
		}
		balances, err := shared.accountBalances(ctx, tx, org.ID)
		if err != nil {
			return err
		}
		if available := balances[AccountAvailable]; available.LessThan(w.Total()) {
			return refuse(Errorf(CodeInsufficientBalance, "amount: the available balance %s does not cover %s plus %s commission",
				FormatAmount(available), FormatAmount(w.Amount), FormatAmount(w.Commission)))
		}
		// Read now, so that the queued event's deliveries find them.
		if _, err := shared.webhookEndpoints(ctx, tx, org.ID); err != nil {
			return err
		}
		shared.takeWithdrawalMerchantID(org.ID, w.MerchantID)
		// The lookup above makes a duplicate impossible; should one come
		// anyway, UNIQUE (organization_id, merchant_id) refuses it and the
		// transaction fails, keeping nothing.
		shared.write(func(ctx context.Context, tx Tx) error {
			if err := tx.CreateWithdrawal(ctx, w); err != nil {
				return err
			}
			return e.writeEvent(ctx, tx, org.ID, EventWithdrawCreated, w.ID, NewWithdrawalView(w), now)
		})
		// The hold last: the balance rows stay locked from here to the
		// commit (queued to the end of a shared transaction).
		return shared.journal(ctx, tx, &Journal{
			OrganizationID: org.ID, Kind: JournalWithdrawalHold, Reference: w.ID, Memo: "withdrawal " + w.MerchantID,
			Entries: []Entry{{AccountAvailable, w.Total().Neg()}, {AccountHeld, w.Total()}},
		}, now)
	}
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

// GetWithdrawalByMerchantID returns the organization's withdrawal created
// with merchantID, or not_found. A client whose create was answered
// 409 merchant_id_exists after a retry (its first request was applied but
// the answer lost) finds its withdrawal this way.
func (e *Engine) GetWithdrawalByMerchantID(ctx context.Context, orgID, merchantID string) (*Withdrawal, error) {
	if merchantID == "" {
		return nil, Invalid("merchant_id", "is required")
	}
	if len(merchantID) > maxMerchantIDLength || checkText("merchant_id", merchantID) != nil {
		// No withdrawal can have been created with it.
		return nil, Errorf(CodeNotFound, "withdrawal not found")
	}
	var w *Withdrawal
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		w, err = tx.GetWithdrawalByMerchantID(ctx, orgID, merchantID)
		return notFound(err, "withdrawal")
	})
	return w, err
}

// ProcessPayouts claims the withdrawals whose payout is due and moves each
// one step: send it, or ask for its status. It returns how many it claimed.
func (e *Engine) ProcessPayouts(ctx context.Context) (int, error) {
	now := e.now()
	var claimed []*Withdrawal
	// A claim shares the transaction of the payout steps being recorded
	// meanwhile (group commit), ahead of them, as claimAttempts does.
	err := e.payouts.inTx(ctx, "", func(ctx context.Context, tx Tx, _ *sharedTx) error {
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
	e.yieldToAPI(ctx)
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
	// Payout steps share transactions (group commit, see txBatcher),
	// ordered by the withdrawal. The lease is the lock: while this worker
	// holds it no one else moves the withdrawal, so the step is written
	// from the claimed row, on condition that the lease is still held
	// (UpdateLeasedWithdrawal), with no read first. A lease lost fails
	// the transaction, so nothing of the step is kept, journal included.
	err := e.payouts.inTx(ctx, w.OrganizationID+" "+w.ID, func(ctx context.Context, tx Tx, shared *sharedTx) error {
		cur := *w
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
			return e.finishWithdrawal(ctx, tx, &cur, w.LeasedUntil, WithdrawalSucceeded, "", now)
		case p.Status == PayoutFailed:
			cur.ProviderReference = p.Reference
			return e.finishWithdrawal(ctx, tx, &cur, w.LeasedUntil, WithdrawalFailed, p.Reason, now)
		default: // pending: ask again later
			cur.PayoutStep, cur.ProviderReference = PayoutSent, p.Reference
			cur.NextRunAt = now.Add(e.cfg.PayoutPollInterval)
		}
		shared.write(func(ctx context.Context, tx Tx) error {
			return tx.UpdateLeasedWithdrawal(ctx, &cur, e.workerID, w.LeasedUntil)
		})
		return nil
	})
	if errors.Is(err, ErrLeaseLost) {
		return nil // another worker took it over after our lease ran out
	}
	return err
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
// writes the event, with the status change, in the caller's transaction,
// if this worker still holds the lease that ends leasedUntil.
func (e *Engine) finishWithdrawal(ctx context.Context, tx Tx, w *Withdrawal, leasedUntil time.Time, status, reason string, now time.Time) error {
	w.Status, w.PayoutStep, w.FailureReason = status, PayoutSettled, reason
	note(ctx, func(o Observer) { o.WithdrawalFinished(status) })
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
	shared := sharedFrom(ctx)
	// Read now, so that the queued event's deliveries find them.
	if _, err := shared.webhookEndpoints(ctx, tx, w.OrganizationID); err != nil {
		return err
	}
	// The status change first: without the lease it fails the
	// transaction before the journal and the event are written.
	shared.write(func(ctx context.Context, tx Tx) error {
		if err := tx.UpdateLeasedWithdrawal(ctx, w, e.workerID, leasedUntil); err != nil {
			return err
		}
		return e.writeEvent(ctx, tx, w.OrganizationID, event, w.ID, NewWithdrawalView(w), now)
	})
	return shared.journal(ctx, tx, j, now)
}

// PollPayoutNow makes a processing withdrawal's payout due now, for when
// its outcome is known to have changed (a sandbox settlement).
func (e *Engine) PollPayoutNow(ctx context.Context, orgID, id string) error {
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
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
