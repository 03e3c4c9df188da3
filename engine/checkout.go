package engine

import (
	"context"
	"errors"
)

// SubmitTransactionIDByToken queues verification of a transaction ID that
// the payer typed on the hosted checkout page of a display_instructions
// deposit, found by its unguessable checkout token. It is
// SubmitTransactionID with the deposit's own organization: the same rules,
// the same attempts and the same errors (attempt_in_progress,
// transaction_id_used, attempt_limit_reached, deposit_terminal,
// invalid_request for the length). A token of a redirect action is
// not_found here: that page pays through SubmitCheckoutPayment.
func (e *Engine) SubmitTransactionIDByToken(ctx context.Context, token, transactionID string) (*Verification, error) {
	d, err := e.GetDepositByCheckoutToken(ctx, token)
	if err != nil {
		return nil, err
	}
	if d.Action != ActionDisplayInstructions {
		return nil, Errorf(CodeNotFound, "checkout not found")
	}
	return e.SubmitTransactionID(ctx, VerifyParams{
		OrganizationID: d.OrganizationID, DepositID: d.ID, TransactionID: transactionID,
	})
}

// GetDepositByCheckoutToken returns the deposit behind a hosted checkout
// page, or not_found.
func (e *Engine) GetDepositByCheckoutToken(ctx context.Context, token string) (*Deposit, error) {
	var d *Deposit
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		d, err = tx.GetDepositByCheckoutToken(ctx, token)
		return notFound(err, "checkout")
	})
	return d, err
}

// SubmitCheckoutPayment queues verification of a payment the payer made on
// the hosted checkout of a redirect action (the provider reports its
// transaction ID). It goes through the same attempt, worker and matching
// as an H2H transaction ID.
func (e *Engine) SubmitCheckoutPayment(ctx context.Context, token, transactionID string) (*Verification, error) {
	txID, err := NormalizeTransactionID("transaction_id", transactionID)
	if err != nil {
		return nil, err
	}
	var v *Verification
	place := e.handoff.reserve(e.leaseEnd())
	defer e.handoff.abandon(place) // if the transaction panics
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		d, err := tx.GetDepositByCheckoutToken(ctx, token)
		if err != nil {
			return notFound(err, "checkout")
		}
		if d.Action != ActionRedirect {
			return Errorf(CodeNotFound, "checkout not found")
		}
		if d, err = tx.LockDeposit(ctx, d.ID); err != nil {
			return err
		}
		if d.WalletCheckout() {
			return Errorf(CodeNotFound, "checkout not found") // its payer types the ID: SubmitWalletCheckout
		}
		v, err = e.queueAttempt(ctx, tx, d, txID, "", place)
		return err
	})
	e.queued(err, place)
	if errors.Is(err, errTransactionIDTaken) {
		return nil, errTransactionIDUsed(txID)
	}
	return v, err
}

// WalletCheckoutParams is what the payer types on a wallet checkout: the
// number they sent the money from and the transaction ID of the send.
type WalletCheckoutParams struct {
	Token string
	// PayerPhone is required unless the deposit has a payer phone of its
	// own (H2H), which it then must equal if given.
	PayerPhone    string
	TransactionID string
}

// SubmitWalletCheckout queues verification of a payment the payer sent to
// the receiving wallet of a wallet checkout (Checkout.Operation): the same
// rules, attempts and errors as SubmitTransactionID, with the payer's
// number kept on the attempt, so the payment must come from it. A token of
// any other deposit is not_found here.
func (e *Engine) SubmitWalletCheckout(ctx context.Context, p WalletCheckoutParams) (*Verification, error) {
	txID, err := NormalizeTransactionID("transaction_id", p.TransactionID)
	if err != nil {
		return nil, err
	}
	var v *Verification
	place := e.handoff.reserve(e.leaseEnd())
	defer e.handoff.abandon(place) // if the transaction panics
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		d, err := tx.GetDepositByCheckoutToken(ctx, p.Token)
		if err != nil {
			return notFound(err, "checkout")
		}
		if !d.WalletCheckout() {
			return Errorf(CodeNotFound, "checkout not found")
		}
		payer := ""
		if d.PayerPhone == "" || p.PayerPhone != "" {
			if payer, err = NormalizePhone("payer_phone", p.PayerPhone); err != nil {
				return err
			}
			if d.PayerPhone != "" && payer != d.PayerPhone {
				return Invalid("payer_phone", "must be the payer phone the deposit was created with")
			}
		}
		if d, err = tx.LockDeposit(ctx, d.ID); err != nil {
			return err
		}
		v, err = e.queueAttempt(ctx, tx, d, txID, payer, place)
		return err
	})
	e.queued(err, place)
	if errors.Is(err, errTransactionIDTaken) {
		return nil, errTransactionIDUsed(txID)
	}
	return v, err
}

// CancelCheckout ends a redirect deposit the payer cancelled on the hosted
// checkout. Only a pending deposit can be cancelled: one whose payment is
// being verified is not.
func (e *Engine) CancelCheckout(ctx context.Context, token string) (*Deposit, error) {
	var d *Deposit
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if d, err = tx.GetDepositByCheckoutToken(ctx, token); err != nil {
			return notFound(err, "checkout")
		}
		if d.Action != ActionRedirect {
			return Errorf(CodeNotFound, "checkout not found")
		}
		if d, err = tx.LockDeposit(ctx, d.ID); err != nil {
			return err
		}
		now := e.now()
		switch {
		case d.IsTerminal():
			return Errorf(CodeDepositTerminal, "deposit: it is %s", d.Status)
		case d.Status == StatusProcessing:
			return Errorf(CodeAttemptInProgress, "deposit: a payment is being verified")
		case !now.Before(d.ExpiresAt):
			return Errorf(CodeDepositTerminal, "deposit: the checkout expired at %s", FormatTime(d.ExpiresAt))
		}
		return e.finishDeposit(ctx, tx, d, StatusCancelled, StatusCancelled, "", now)
	})
	return d, err
}
