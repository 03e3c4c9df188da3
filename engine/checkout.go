package engine

import "context"

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
