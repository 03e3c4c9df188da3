package engine

import (
	"context"
	"errors"
	"time"
)

// AuditLatePaymentCredit is the audit action of CreditLatePayment.
const AuditLatePaymentCredit = "deposit.credit_late_payment"

// CreditLatePaymentParams names a payment the provider proves, by its
// transaction ID, and the deposit of the organization it paid.
type CreditLatePaymentParams struct {
	OrganizationID string
	DepositID      string
	TransactionID  string // as given; normalized here
}

// LateCredit is what CreditLatePayment did.
type LateCredit struct {
	// Deposit as it is now: succeeded if it was still open, else unchanged.
	Deposit *Deposit
	// Attempt is the deposit's attempt of the transaction ID, now
	// succeeded (created for an ID the payer never submitted).
	Attempt *Attempt
	// Journal is the credit: deposit_credit for an open deposit,
	// late_payment for a closed one.
	Journal *Journal
}

// CreditLatePayment is an operator crediting a payment the provider proved
// after the deposit's attempt failed and the deposit was not reopened by
// RecheckTransaction: the deposit closed (failed, expired, cancelled), or it
// was checking another ID when the proof came, or the payer never submitted
// the right ID. The provider is asked now, outside any transaction: only a
// payment it shows (for an SMS inbox, an accepted SMS, whose balance chain
// a forgery cannot continue) is credited, and only if it matches the deposit
// by every rule of verification (judge: channel and operation, recipient,
// payer, completed, exact amount, inside the window).
//
// In one transaction, under the deposit's lock: the transaction ID
// succeeds this deposit, marked so in every organization (its failed
// attempt succeeds; a new succeeded attempt if the payer never submitted
// it, which uses none of the payer's attempts), and
//   - an open deposit (pending) succeeds as if verified: deposit_credit
//     journal, deposit.succeeded event;
//   - a closed deposit keeps its terminal status (its client was told and
//     stopped polling): the organization is credited the amount less the
//     deposit fee with a late_payment journal, and the payer's order is
//     the merchant's to settle (fulfil or refund) from the audit log;
//
// with an audit entry naming the actor. It is refused for a deposit that
// succeeded or was already credited (once per deposit), one checking an ID
// (attempt_in_progress), an ID submitted for another deposit of the
// organization or that succeeded a deposit anywhere (transaction_id_used;
// another organization's submission that did not succeed is no obstacle),
// a payment the provider does not show (not_found) or that does not match
// (conflict, with the failure code).
func (e *Engine) CreditLatePayment(ctx context.Context, p CreditLatePaymentParams) (*LateCredit, error) {
	txID, err := NormalizeTransactionID("provider_transaction_id", p.TransactionID)
	if err != nil {
		return nil, err
	}
	var d *Deposit
	var submitted *Attempt // the payer's own attempt with the ID, if any
	err = e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if d, err = tx.GetDeposit(ctx, p.OrganizationID, p.DepositID); err != nil {
			return notFound(err, "deposit")
		}
		a, err := tx.GetAttemptByTransactionID(ctx, d.OrganizationID, d.Channel, txID)
		if err == nil && a.DepositID == d.ID {
			submitted = a
		} else if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	lookupCtx, cancel := context.WithTimeout(ctx, e.cfg.LookupTimeout)
	t, lookupErr := e.provider.LookupTransaction(lookupCtx, LookupRequest{
		OrganizationID: d.OrganizationID, Channel: d.Channel, Operation: d.Operation, TransactionID: txID, RecipientPhone: d.RecipientPhone,
		PayerPhone: payerOf(d, submitted),
	})
	cancel()
	switch {
	case errors.Is(lookupErr, ErrTransactionNotFound) || lookupErr == nil && t == nil:
		return nil, Errorf(CodeNotFound, "provider_transaction_id: the provider does not show %s on %s (an SMS proves a payment only once accepted)", txID, d.Channel)
	case lookupErr != nil:
		return nil, Errorf(CodeVerificationUnavailable, "provider_transaction_id: the provider cannot be asked now: %v", lookupErr)
	}
	var c *LateCredit
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		c, err = e.creditLatePayment(ctx, tx, d.ID, txID, t)
		return err
	})
	if errors.Is(err, errTransactionIDTaken) {
		return nil, errTransactionIDUsed(txID)
	}
	if err != nil {
		return nil, err
	}
	e.wakeWorkers() // post the deposit.succeeded event, if any
	return c, nil
}

func (e *Engine) creditLatePayment(ctx context.Context, tx Tx, depositID, txID string, t *ProviderTransaction) (*LateCredit, error) {
	d, err := tx.LockDeposit(ctx, depositID)
	if err != nil {
		return nil, err
	}
	switch d.Status {
	case StatusSucceeded:
		return nil, Errorf(CodeDepositTerminal, "deposit: it succeeded with %s", d.ProviderTransactionID)
	case StatusProcessing:
		return nil, Errorf(CodeAttemptInProgress, "deposit: another transaction ID is being verified; credit it once that is resolved")
	}
	attempts, err := tx.ListAttempts(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	var a *Attempt
	for _, o := range attempts {
		if o.Status == AttemptSucceeded {
			return nil, Errorf(CodeDepositTerminal, "deposit: a late payment (%s) was already credited to it", o.TransactionID)
		}
		if o.TransactionID == txID {
			a = o
		}
	}
	// Another deposit's attempt of the ID in the organization, or one that
	// succeeded with it anywhere (none of this deposit's did), holds it.
	if a == nil {
		_, err = tx.GetAttemptByTransactionID(ctx, d.OrganizationID, d.Channel, txID)
	} else {
		_, err = tx.GetSucceededAttempt(ctx, d.Channel, txID)
	}
	switch {
	case err == nil:
		return nil, errTransactionIDUsed(txID)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	v := judge(d, payerOf(d, a), txID, t, nil, time.Time{})
	if v.status != AttemptSucceeded {
		return nil, Errorf(CodeConflict, "provider_transaction_id: the payment does not pay this deposit: %s (%s)", v.code, v.reason)
	}
	now := e.now()
	if a == nil {
		a = &Attempt{
			ID: NewID(PrefixAttempt, now), DepositID: d.ID, OrganizationID: d.OrganizationID,
			Channel: d.Channel, TransactionID: txID, Status: AttemptSucceeded,
			NextRunAt: now, CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.CreateAttempt(ctx, a); errors.Is(err, ErrDuplicate) {
			return nil, errTransactionIDTaken
		} else if err != nil {
			return nil, err
		}
	} else {
		a.Status, a.FailureCode, a.UpdatedAt = AttemptSucceeded, "", now
		if err := tx.UpdateAttempt(ctx, a); err != nil {
			return nil, err
		}
	}
	// The read above answers; the constraint decides a race with a success
	// in another organization.
	if err := tx.MarkTransactionSucceeded(ctx, a); errors.Is(err, ErrDuplicate) {
		return nil, errTransactionIDTaken
	} else if err != nil {
		return nil, err
	}
	org, err := tx.GetOrganization(ctx, d.OrganizationID)
	if err != nil {
		return nil, err
	}
	j := depositCreditJournal(org, d)
	j.Actor = ActorFrom(ctx)
	before := d.Status
	if d.IsTerminal() {
		j.Kind, j.Memo = JournalLatePayment, "late payment "+txID+" of deposit "+d.MerchantID
		if err := e.writeJournal(ctx, tx, j, now); err != nil {
			return nil, err
		}
		if err := e.linkPaid(ctx, tx, d, now); err != nil { // a link's checkout paid after it closed pays the link
			return nil, err
		}
	} else {
		if err := e.writeJournal(ctx, tx, j, now); err != nil {
			return nil, err
		}
		d.FailureCode, d.ProviderTransactionID, d.UpdatedAt = "", txID, now
		if err := e.finishDeposit(ctx, tx, d, StatusSucceeded, VerificationSucceeded, EventDepositSucceeded, now); err != nil {
			return nil, err
		}
	}
	err = e.audit(ctx, tx, AuditLatePaymentCredit, d.OrganizationID, d.ID, map[string]string{
		"provider_transaction_id": txID, "amount": FormatAmount(t.Amount), "payer": t.PayerPhone,
		"completed_at": FormatTime(t.CompletedAt), "deposit_status": before, "journal": j.ID, "journal_kind": j.Kind,
	})
	if err != nil {
		return nil, err
	}
	return &LateCredit{Deposit: d, Attempt: a, Journal: j}, nil
}
