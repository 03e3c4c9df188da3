package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Verification attempt statuses. processing and delayed are running: a
// deposit has at most one running attempt, and while it has one its status
// is processing.
const (
	AttemptProcessing = "processing"
	AttemptDelayed    = "delayed"
	AttemptSucceeded  = "succeeded"
	AttemptFailed     = "failed"
)

// Failure codes of a verification attempt (verification.failure_code).
const (
	FailureTransactionNotFound = "transaction_not_found"
	FailureChannelMismatch     = "channel_mismatch"
	FailureRecipientMismatch   = "recipient_mismatch"
	FailurePayerMismatch       = "payer_mismatch"
	FailureAmountMismatch      = "amount_mismatch"
	FailurePaymentNotCompleted = "payment_not_completed"
	FailureOutsideWindow       = "outside_payment_window"
	FailureProviderUnavailable = "provider_unavailable"
	// FailureTransactionIDUsed fails an attempt whose payment succeeded
	// another deposit, of another organization, while it was being checked:
	// across organizations only a success holds an ID, and the store's
	// constraint lets one success through (MarkTransactionSucceeded). An ID
	// used already is refused at submission (409 transaction_id_used)
	// instead, before any attempt exists to fail.
	FailureTransactionIDUsed = "transaction_id_used"
)

// Attempt is one transaction ID submitted for a deposit, checked against
// the provider by a background worker. Within an organization a
// transaction ID belongs to at most one attempt per channel, ever; other
// organizations may submit it too (one that squats an ID blocks only
// itself). One payment succeeds at most one deposit anywhere: the store's
// constraints (CreateAttempt, MarkTransactionSucceeded) enforce both.
type Attempt struct {
	ID             string
	DepositID      string
	OrganizationID string
	Channel        string
	// TransactionID is trimmed and upper-cased.
	TransactionID string
	// PayerPhone is the number the payer typed with the ID on a wallet
	// checkout (SubmitWalletCheckout), for a deposit that has no payer
	// phone of its own; empty otherwise.
	PayerPhone  string
	Status      string
	FailureCode string // empty unless failed
	// Tries counts provider lookups made; NextRunAt is when the next is due.
	Tries     int
	NextRunAt time.Time
	// LeaseOwner and LeasedUntil mark an attempt a worker is checking, so
	// that no other worker checks it at the same time; a lease that has run
	// out (its worker died) lets another worker take the attempt over.
	LeaseOwner  string
	LeasedUntil time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Running reports whether the attempt is still to be resolved.
func (a *Attempt) Running() bool {
	return a.Status == AttemptProcessing || a.Status == AttemptDelayed
}

// VerifyParams is a transaction ID submitted for a deposit.
type VerifyParams struct {
	OrganizationID string
	DepositID      string
	TransactionID  string // as sent; normalized here
}

// Verification is the answer to a submitted transaction ID: the attempt it
// created or, for a repeat, the attempt it already had, and the deposit.
type Verification struct {
	Attempt *Attempt
	Deposit *Deposit
}

// errTransactionIDTaken leaves a transaction whose attempt insert, or a late
// credit's mark of a succeeded ID, hit the unique constraint.
var errTransactionIDTaken = errors.New("transaction id taken")

// SubmitTransactionID queues verification of a transaction ID for a
// display_instructions deposit. The same normalized ID again returns the
// attempt it already has and consumes nothing. The check itself runs later,
// in ProcessAttempts.
func (e *Engine) SubmitTransactionID(ctx context.Context, p VerifyParams) (*Verification, error) {
	txID, err := NormalizeTransactionID("provider_transaction_id", p.TransactionID)
	if err != nil {
		return nil, err
	}
	var v *Verification
	// Submissions share transactions (group commit, see txBatcher),
	// ordered by the deposit they lock.
	// A refused submission (another organization's deposit, an ID used,
	// no attempt left) has written nothing and leaves the batch to the
	// others (refuse).
	apiWrite := e.apiWrites.begin()
	defer apiWrite() // also if the transaction panics
	place := e.handoff.reserve(e.leaseEnd())
	defer e.handoff.abandon(place) // if the transaction panics
	err = e.submits.inTx(ctx, p.DepositID, func(ctx context.Context, tx Tx, _ *sharedTx) error {
		d, err := tx.LockDeposit(ctx, p.DepositID)
		if errors.Is(err, ErrNotFound) || err == nil && d.OrganizationID != p.OrganizationID {
			return refuse(Errorf(CodeNotFound, "deposit not found"))
		} else if err != nil {
			return err
		}
		if d.Action == ActionRedirect {
			return refuse(Errorf(CodeRedirectAction, "deposit: its next_action is a redirect, which is never verified by transaction ID"))
		}
		v, err = e.queueAttempt(ctx, tx, d, txID, "", place)
		if e := (*Error)(nil); errors.As(err, &e) {
			return refuse(err) // queueAttempt answers with an *Error only before it writes
		}
		return err
	})
	apiWrite()
	e.queued(err, place)
	if errors.Is(err, errTransactionIDTaken) {
		// A concurrent submission for another deposit of the organization
		// won the constraint (a repeat for this deposit is found under the
		// deposit's lock).
		return nil, errTransactionIDUsed(txID)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// leaseEnd is when a lease taken now ends.
func (e *Engine) leaseEnd() time.Time {
	return e.now().Add(e.cfg.LeaseDuration).Truncate(time.Microsecond)
}

// queued ends a submission whose transaction is over (err its outcome):
// the attempt it created goes to this engine's worker if it was leased to
// it (place, from handoff.reserve), else the worker is woken to claim it.
func (e *Engine) queued(err error, place *ticket) {
	if !e.handoff.settle(place, err) && err == nil {
		e.wakeAttempts()
	}
}

// errTransactionIDUsed is the answer for an ID submitted for another
// deposit of the organization, or that succeeded a deposit anywhere; it
// does not say which, nor where.
func errTransactionIDUsed(txID string) error {
	return Errorf(CodeTransactionIDUsed, "provider_transaction_id: %s was already used for another deposit", txID)
}

// queueAttempt applies the rules of a submission to a locked deposit.
// payerPhone is the normalized number typed with the ID on a wallet
// checkout, "" otherwise. With a place in the hand-off (see handoff), a
// new attempt is leased to this engine and noted in it. It refuses with
// an *Error only before it writes anything (SubmitTransactionID relies on
// it).
func (e *Engine) queueAttempt(ctx context.Context, tx Tx, d *Deposit, txID, payerPhone string, place *ticket) (*Verification, error) {
	if place != nil {
		place.attempt = nil // a transaction run again starts afresh
	}
	// The ID is held by another deposit of the organization, or by one of
	// any organization it succeeded; another organization's submission
	// that has not succeeded holds nothing here. A success committed after
	// this read is stopped by the constraint at this attempt's own success
	// (applyVerdict).
	existing, err := tx.GetAttemptByTransactionID(ctx, d.OrganizationID, d.Channel, txID)
	switch {
	case err == nil && existing.DepositID == d.ID:
		return &Verification{Attempt: existing, Deposit: d}, nil
	case err == nil:
		return nil, errTransactionIDUsed(txID)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	now := e.now()
	switch {
	case d.Status == StatusFailed && d.AttemptsUsed >= MaxAttempts:
		return nil, Errorf(CodeAttemptLimitReached, "deposit: all %d transaction IDs were used", MaxAttempts)
	case d.IsTerminal():
		return nil, Errorf(CodeDepositTerminal, "deposit: it is %s", d.Status)
	case !now.Before(d.ExpiresAt):
		return nil, Errorf(CodeDepositTerminal, "deposit: its payment window closed at %s", FormatTime(d.ExpiresAt))
	case d.Status == StatusProcessing:
		return nil, Errorf(CodeAttemptInProgress, "deposit: another transaction ID is being verified")
	case d.AttemptsUsed >= MaxAttempts:
		return nil, Errorf(CodeAttemptLimitReached, "deposit: all %d transaction IDs were used", MaxAttempts)
	}
	a := &Attempt{
		ID: NewID(PrefixAttempt, now), DepositID: d.ID, OrganizationID: d.OrganizationID,
		Channel: d.Channel, TransactionID: txID, PayerPhone: payerPhone, Status: AttemptProcessing,
		NextRunAt: now, CreatedAt: now, UpdatedAt: now,
	}
	if place != nil {
		a.LeaseOwner, a.LeasedUntil = e.workerID, place.leasedUntil
	}
	d.Status, d.VerificationState = StatusProcessing, VerificationProcessing
	d.AttemptsUsed++
	d.UpdatedAt = now
	// The two writes in one round trip where the store pipelines. A
	// taken ID is then known only once both ran: its error ends the
	// transaction, which rolls the deposit's update back with it. They
	// are made now, not left to the batch's flush: a submission for the
	// same deposit later in the batch must find them (its attempt in
	// progress, or the same ID's attempt).
	write := func(tx Tx) error {
		if err := tx.CreateAttempt(ctx, a); err != nil {
			return err
		}
		return tx.UpdateDeposit(ctx, d)
	}
	if p, ok := tx.(Pipeliner); ok {
		err = p.Pipeline(ctx, write)
	} else {
		err = write(tx)
	}
	if errors.Is(err, ErrDuplicate) {
		return nil, errTransactionIDTaken
	} else if err != nil {
		return nil, err
	}
	e.hints.put(a.ID, lookupHint{operation: d.Operation, recipientPhone: d.RecipientPhone, payerPhone: payerOf(d, a)})
	if place != nil {
		place.attempt = a
	}
	return &Verification{Attempt: a, Deposit: d}, nil
}

// GetAttempt returns an attempt of the organization, or not_found.
func (e *Engine) GetAttempt(ctx context.Context, orgID, id string) (*Attempt, error) {
	var a *Attempt
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		a, err = tx.GetAttempt(ctx, id)
		if err == nil && a.OrganizationID != orgID {
			err = ErrNotFound
		}
		return notFound(err, "attempt")
	})
	return a, err
}

// ListAttempts returns the attempts of a deposit of the organization.
func (e *Engine) ListAttempts(ctx context.Context, orgID, depositID string) ([]*Attempt, error) {
	var as []*Attempt
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetDeposit(ctx, orgID, depositID); err != nil {
			return notFound(err, "deposit")
		}
		var err error
		as, err = tx.ListAttempts(ctx, depositID)
		return err
	})
	return as, err
}

// verdict is what a provider's report means for an attempt.
type verdict struct {
	status string // AttemptSucceeded, AttemptFailed, or AttemptDelayed (try again)
	code   string // failure code; for a retry, the code if the bound is reached
	reason string // for logs and the operator
	// until, for a retry, is when it gives up; zero means the deposit's
	// deadline plus Config.VerificationGrace.
	until time.Time
}

// judge matches a provider's report against a deposit: every check of the
// interface (ID, channel and operation, recipient, payer, completed status,
// exact amount, window), in that order. It never adjusts the amount. An ID
// the provider does not show fails, unless notFoundUntil is set (a
// LateLearner's grace): it is retried until then. payer is the number the
// payment must come from (payerOf); "" checks none, except for money sent
// to a personal wallet, which only its sender's number proves.
func judge(d *Deposit, payer, txID string, t *ProviderTransaction, lookupErr error, notFoundUntil time.Time) verdict {
	switch {
	case errors.Is(lookupErr, ErrTransactionNotFound) && !notFoundUntil.IsZero():
		return verdict{AttemptDelayed, FailureTransactionNotFound, "the provider does not show the transaction yet", notFoundUntil}
	case errors.Is(lookupErr, ErrTransactionNotFound):
		return verdict{status: AttemptFailed, code: FailureTransactionNotFound, reason: "the provider does not show the transaction"}
	case lookupErr != nil:
		return verdict{status: AttemptDelayed, code: FailureProviderUnavailable, reason: "lookup failed: " + lookupErr.Error()}
	case !strings.EqualFold(t.TransactionID, txID):
		return verdict{status: AttemptFailed, code: FailureTransactionNotFound, reason: "the provider answered for another transaction ID"}
	case t.Channel != d.Channel:
		return verdict{status: AttemptFailed, code: FailureChannelMismatch, reason: "paid on " + t.Channel}
	case t.Type != "" && t.Type != expectedTransactionType(d):
		return verdict{status: AttemptFailed, code: FailureChannelMismatch, reason: "paid by " + t.Type + ", not " + expectedTransactionType(d)}
	case d.RecipientPhone != "" && t.RecipientPhone != d.RecipientPhone:
		return verdict{status: AttemptFailed, code: FailureRecipientMismatch, reason: "paid to another wallet"}
	case payer == "" && d.Operation == OperationSendMoney:
		return verdict{status: AttemptFailed, code: FailurePayerMismatch, reason: "no payer number to match the sender's"}
	case payer != "" && t.PayerPhone != payer:
		return verdict{status: AttemptFailed, code: FailurePayerMismatch, reason: "paid from another number"}
	case t.Status == TransactionPending:
		return verdict{status: AttemptDelayed, code: FailurePaymentNotCompleted, reason: "the payment is not completed yet"}
	case t.Status != TransactionCompleted:
		return verdict{status: AttemptFailed, code: FailurePaymentNotCompleted, reason: "the payment is " + t.Status}
	case t.Currency != "" && t.Currency != Currency || !t.Amount.Equal(d.Amount):
		return verdict{status: AttemptFailed, code: FailureAmountMismatch, reason: "paid " + FormatAmount(t.Amount) + " " + t.Currency}
	}
	precision := t.TimePrecision
	if precision <= 0 {
		precision = time.Second
	}
	if t.CompletedAt.Before(d.CreatedAt.Truncate(precision)) || t.CompletedAt.After(d.ExpiresAt) {
		return verdict{status: AttemptFailed, code: FailureOutsideWindow, reason: "completed at " + FormatTime(t.CompletedAt)}
	}
	return verdict{status: AttemptSucceeded}
}

// expectedTransactionType is how the payer of a deposit must have paid.
func expectedTransactionType(d *Deposit) string {
	switch d.Operation {
	case OperationCashOut:
		return TransactionCashOut
	case OperationSendMoney:
		return TransactionSendMoney
	}
	return TransactionPayment
}

// payerOf is the number a deposit's payment must come from: the deposit's
// payer phone (H2H), else the one typed with the attempt's ID on a wallet
// checkout; "" for none. a may be nil.
func payerOf(d *Deposit, a *Attempt) string {
	if d.PayerPhone != "" || a == nil {
		return d.PayerPhone
	}
	return a.PayerPhone
}

// ProcessAttempts claims the attempts that are due, checks each against the
// provider and records the outcome. It returns how many it claimed. Provider
// calls happen outside any transaction; the lease keeps other workers off an
// attempt meanwhile, and the outcome is written only if this worker still
// holds the lease and the attempt is still running, so nothing is applied
// twice.
func (e *Engine) ProcessAttempts(ctx context.Context) (int, error) {
	claimed, err := e.claimAttempts(ctx, e.cfg.ClaimBatch)
	if err != nil {
		return 0, err
	}
	return len(claimed), e.forEachClaimed(len(claimed), func(i int) error {
		return e.checkClaimedAttempt(ctx, claimed[i])
	})
}

// claimAttempts leases up to limit due attempts to this engine.
func (e *Engine) claimAttempts(ctx context.Context, limit int) ([]*Attempt, error) {
	now := e.now()
	var claimed []*Attempt
	// A claim shares the transaction of the verdicts being recorded
	// meanwhile (group commit, see txBatcher), ahead of them: it locks only
	// attempts nobody holds (SKIP LOCKED), so it waits for none of theirs.
	err := e.finishes.inTx(ctx, "", func(ctx context.Context, tx Tx, _ *sharedTx) error {
		var err error
		claimed, err = tx.ClaimDueAttempts(ctx, ClaimParams{
			Now: now, Owner: e.workerID, LeasedUntil: now.Add(e.cfg.LeaseDuration), Limit: limit,
		})
		return err
	})
	return claimed, err
}

// checkClaimedAttempt is checkAttempt with the attempt named in its error:
// its lease runs out and it is retried, and the others go on.
func (e *Engine) checkClaimedAttempt(ctx context.Context, a *Attempt) error {
	if err := e.checkAttempt(ctx, a); err != nil {
		return fmt.Errorf("attempt %s: %w", a.ID, err)
	}
	return nil
}

// runAttempts is Run's verification. WorkerConcurrency goroutines check
// claimed attempts one after another, each taking the next from a local
// queue as soon as it is done, so that one slow lookup or transaction
// holds up no others. The queue holds up to ClaimBatch claimed attempts and
// is refilled when half empty (at once when idle and woken by a
// submission), so that claims, a write transaction each, are shared by
// many attempts under load. It returns when ctx ends and the checks under
// way are over; attempts still queued then are left to the lease hand-back.
func (e *Engine) runAttempts(ctx context.Context) {
	queue := make(chan *Attempt, max(e.cfg.ClaimBatch, e.cfg.WorkerConcurrency))
	handed := e.handoff.open(cap(queue))
	defer e.handoff.close()
	taken := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(queue)
	for range e.cfg.WorkerConcurrency {
		wg.Go(func() {
			for {
				var a *Attempt
				select {
				case claimed, ok := <-queue:
					if !ok {
						return
					}
					a = claimed
					select {
					case taken <- struct{}{}:
					default:
					}
				case a = <-handed:
					e.handoff.taken()
					// Its submission's transaction reached the database:
					// an outage the workers saw is over.
					e.noteWorked(ctx, a.CreatedAt)
				}
				if ctx.Err() != nil {
					continue
				}
				if err := e.checkClaimedAttempt(ctx, a); err != nil {
					e.logBackgroundError(ctx, "verification", err)
				}
				if e.deliveriesQueued.Swap(false) {
					e.wakeWorkers() // post the event of its verdict now
				}
			}
		})
	}
	// more: due attempts may be waiting. A claim that finds fewer than it
	// asked for clears it; a wake-up or the poll interval sets it.
	more := true
	for {
		if room := cap(queue) - len(queue); more && (room >= cap(queue)/2 || len(queue) == 0) {
			began := e.now()
			claimed, err := e.claimAttempts(ctx, room)
			if err != nil {
				e.logBackgroundError(ctx, "verification", err)
			} else {
				e.noteWorked(ctx, began)
			}
			more = err == nil && len(claimed) == room
			for _, a := range claimed {
				queue <- a // never blocks: there was room, and only this goroutine fills it
			}
			if more {
				continue
			}
		}
		timer := e.clock.Timer(e.cfg.PollInterval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-taken:
		case <-e.attemptsWake:
			more = true
		case <-timer.C:
			more = true
		}
		timer.Stop()
	}
}

func (e *Engine) checkAttempt(ctx context.Context, a *Attempt) error {
	hint, ok := e.hints.take(a.ID)
	if !ok {
		var d *Deposit
		err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
			var err error
			d, err = tx.GetDeposit(ctx, a.OrganizationID, a.DepositID)
			return err
		})
		if err != nil {
			return err
		}
		hint = lookupHint{operation: d.Operation, recipientPhone: d.RecipientPhone, payerPhone: payerOf(d, a)}
	}
	lookupCtx, cancel := context.WithTimeout(ctx, e.cfg.LookupTimeout)
	t, lookupErr := e.provider.LookupTransaction(lookupCtx, LookupRequest{
		OrganizationID: a.OrganizationID, Channel: a.Channel, Operation: hint.operation, TransactionID: a.TransactionID,
		RecipientPhone: hint.recipientPhone, PayerPhone: hint.payerPhone,
	})
	cancel()
	if ctx.Err() != nil {
		return ctx.Err() // shutting down: the lease runs out and another worker retries
	}
	if lookupErr == nil && t == nil {
		lookupErr = ErrTransactionNotFound
	}
	// Verdicts share transactions (group commit, see txBatcher), ordered by
	// the deposit they lock first; their credits are written last.
	return e.finishes.inTx(ctx, a.DepositID, func(ctx context.Context, tx Tx, shared *sharedTx) error {
		// The deposit, then the attempt: every change of an attempt takes
		// the locks in this order, so a worker whose lease ran out and the
		// worker that took over cannot both finish it.
		d, cur, err := tx.LockDepositAndAttempt(ctx, a.DepositID, a.ID)
		if err != nil {
			return err
		}
		if !cur.Running() || cur.LeaseOwner != e.workerID || !cur.LeasedUntil.Equal(a.LeasedUntil) {
			return nil // another worker took it over after our lease ran out
		}
		return e.applyVerdict(ctx, deferredWrites{tx, shared}, d, cur, judge(d, payerOf(d, cur), cur.TransactionID, t, lookupErr, e.notFoundUntil(cur)))
	})
}

// deferredWrites is a verdict's Tx: its updates of deposits and attempts
// and its events with their deliveries, whose answers it does not need,
// are queued to the transaction's flush (sharedTx.write), where a store
// that pipelines sends them with the journals in one round trip instead of
// one each. What a verdict reads after them is other rows: the rows they
// change are locked by then, and never read again in the transaction.
//
// In a batch, the mark of a succeeded transaction ID is queued too: an ID
// marked already (another organization's deposit succeeded with it first)
// then fails the batch's transaction, and each verdict runs again alone,
// where the mark is made at once and its answer turns the verdict into a
// failure (applyVerdict). That is rare: a payment claimed by two
// organizations.
type deferredWrites struct {
	Tx
	shared *sharedTx
}

func (t deferredWrites) MarkTransactionSucceeded(ctx context.Context, a *Attempt) error {
	if t.shared.alone {
		return t.Tx.MarkTransactionSucceeded(ctx, a)
	}
	row := *a
	t.shared.write(func(ctx context.Context, tx Tx) error { return tx.MarkTransactionSucceeded(ctx, &row) })
	return nil
}

func (t deferredWrites) UpdateAttempt(_ context.Context, a *Attempt) error {
	row := *a
	t.shared.write(func(ctx context.Context, tx Tx) error { return tx.UpdateAttempt(ctx, &row) })
	return nil
}

func (t deferredWrites) UpdateDeposit(_ context.Context, d *Deposit) error {
	row := *d
	t.shared.write(func(ctx context.Context, tx Tx) error { return tx.UpdateDeposit(ctx, &row) })
	return nil
}

func (t deferredWrites) CreateEvent(_ context.Context, ev *Event) error {
	t.shared.write(func(ctx context.Context, tx Tx) error { return tx.CreateEvent(ctx, ev) })
	return nil
}

func (t deferredWrites) CreateDelivery(_ context.Context, d *Delivery) error {
	t.shared.write(func(ctx context.Context, tx Tx) error { return tx.CreateDelivery(ctx, d) })
	return nil
}

// notFoundUntil is how long an ID the provider does not show is looked up
// again: NotFoundGrace after its submission for a LateLearner; zero (not
// found is final) for any other provider.
func (e *Engine) notFoundUntil(a *Attempt) time.Time {
	if l, ok := e.provider.(LateLearner); ok {
		if grace := l.NotFoundGrace(); grace > 0 {
			return a.CreatedAt.Add(grace)
		}
	}
	return time.Time{}
}

// applyVerdict records an attempt's outcome and moves its deposit, with the
// ledger credit and the event, in the caller's transaction.
func (e *Engine) applyVerdict(ctx context.Context, tx Tx, d *Deposit, a *Attempt, v verdict) error {
	now := e.now()
	a.Tries++
	a.LeaseOwner, a.LeasedUntil = "", time.Time{}
	a.UpdatedAt = now
	if v.status == AttemptDelayed {
		until := v.until
		if until.IsZero() {
			until = d.ExpiresAt.Add(e.cfg.VerificationGrace)
		}
		if now.Before(until) {
			a.Status = AttemptDelayed
			a.NextRunAt = now.Add(retryBackoff(a.Tries))
			if !v.until.IsZero() && a.NextRunAt.After(v.until) {
				a.NextRunAt = v.until // a short grace ends on time, not a backoff later
			}
			return tx.UpdateAttempt(ctx, a)
		}
		v.status = AttemptFailed // retried past the bound: give up with the code
	}
	if v.status == AttemptSucceeded {
		// The constraint lets one success per payment through, in any
		// organization: another organization's deposit that succeeded with
		// the ID first (both submitted it) wins, and this attempt fails.
		if err := tx.MarkTransactionSucceeded(ctx, a); errors.Is(err, ErrDuplicate) {
			v = verdict{status: AttemptFailed, code: FailureTransactionIDUsed, reason: "the payment succeeded another deposit"}
		} else if err != nil {
			return err
		}
	}
	a.Status = v.status
	if v.status == AttemptFailed {
		a.FailureCode = v.code
	}
	if err := tx.UpdateAttempt(ctx, a); err != nil {
		return err
	}
	result, code := a.Status, ""
	if result == AttemptFailed {
		code = v.code
	}
	note(ctx, func(o Observer) { o.VerificationResolved(result, code) })
	d.UpdatedAt = now
	if v.status == AttemptSucceeded {
		return e.succeedDeposit(ctx, tx, d, a.TransactionID, now)
	}
	d.FailureCode = v.code
	if d.AttemptsUsed >= MaxAttempts || !now.Before(d.ExpiresAt) {
		return e.finishDeposit(ctx, tx, d, StatusFailed, VerificationFailed, EventDepositFailed, now)
	}
	d.Status = StatusPending
	if d.Action == ActionDisplayInstructions {
		d.VerificationState = VerificationAwaitingReference
	} else {
		d.VerificationState = VerificationProcessing
	}
	return tx.UpdateDeposit(ctx, d)
}

// RecheckTransaction is how a provider that has just learned of a payment
// (a LateLearner: an SMS inbox when the receiving phone's message arrives)
// has the organization's attempt of its transaction ID looked up again
// now:
//   - an attempt waiting (delayed) is made due at once;
//   - an attempt that failed transaction_not_found, its grace over, is
//     reopened (processing, due now, no further attempt used) while its
//     deposit is open: pending, before its deadline, no other ID being
//     checked. The late payment then succeeds the deposit if it matches.
//
// Anything else is left alone: an ID nobody (or another organization)
// submitted, an attempt being checked or finished otherwise, a deposit that
// is closed or checking another ID. Such a payment is the operator's to
// credit (CreditLatePayment).
func (e *Engine) RecheckTransaction(ctx context.Context, orgID, channel, transactionID string) error {
	due := false
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		a, err := tx.GetAttemptByTransactionID(ctx, orgID, channel, transactionID)
		if errors.Is(err, ErrNotFound) || err == nil && a.OrganizationID != orgID {
			return nil
		}
		if err != nil {
			return err
		}
		// The deposit, then the attempt: the lock order of checkAttempt.
		d, a, err := tx.LockDepositAndAttempt(ctx, a.DepositID, a.ID)
		if err != nil {
			return err
		}
		now := e.now()
		switch {
		case a.Status == AttemptDelayed:
			if !a.LeasedUntil.IsZero() && now.Before(a.LeasedUntil) || !now.Before(a.NextRunAt) {
				return nil
			}
		case a.Status == AttemptFailed && a.FailureCode == FailureTransactionNotFound &&
			d.Status == StatusPending && now.Before(d.ExpiresAt):
			a.Status, a.FailureCode = AttemptProcessing, ""
			a.LeaseOwner, a.LeasedUntil = "", time.Time{}
			d.Status, d.VerificationState, d.UpdatedAt = StatusProcessing, VerificationProcessing, now
			if err := tx.UpdateDeposit(ctx, d); err != nil {
				return err
			}
		default:
			return nil
		}
		a.NextRunAt, a.UpdatedAt = now, now
		due = true
		return tx.UpdateAttempt(ctx, a)
	})
	if due {
		e.wakeAttempts()
	}
	return err
}

// retryBackoff is the wait before the next lookup of a delayed attempt:
// 5 s doubling to at most a minute.
func retryBackoff(tries int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < tries && d < time.Minute; i++ {
		d *= 2
	}
	return min(d, time.Minute)
}

// lookupHint is what a verification lookup needs of its deposit besides
// the attempt: fields written at the deposit's create and never changed, so
// one remembered from the submission is as good as one read at the check.
type lookupHint struct {
	operation, recipientPhone, payerPhone string
}

// lookupHints holds the hints of the attempts this process queued, so
// that its worker checks them without reading their deposits again; an
// attempt claimed elsewhere, or after a restart, reads its deposit. A
// submission that rolls back leaves a hint no attempt claims: the map is
// emptied when full.
type lookupHints struct {
	mu sync.Mutex
	m  map[string]lookupHint
}

const maxLookupHints = 4096

func (h *lookupHints) put(attemptID string, hint lookupHint) {
	h.mu.Lock()
	if h.m == nil || len(h.m) >= maxLookupHints {
		h.m = make(map[string]lookupHint, 64)
	}
	h.m[attemptID] = hint
	h.mu.Unlock()
}

// take returns and forgets an attempt's hint.
func (h *lookupHints) take(attemptID string) (lookupHint, bool) {
	h.mu.Lock()
	hint, ok := h.m[attemptID]
	if ok {
		delete(h.m, attemptID)
	}
	h.mu.Unlock()
	return hint, ok
}
