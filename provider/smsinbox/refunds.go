package smsinbox

import (
	"context"
	"errors"

	"github.com/payd-engine/payd/engine"
)

// Refunds on the SMS inbox: nothing can send money by itself, so a refund
// is queued for an operator exactly as a withdrawal's payout is (a
// ManualPayout with its DepositID), to the payer's number, and completed
// the same ways: by the operator with the transaction ID of their send
// (CompletePayout, FailPayout), or by the debit SMS that proves the send
// (settleSentPayouts, under the organization's PayoutSMSConfirm, and a
// re-synchronized debit only matched). Payouts and refunds share the
// queue so that one debit completes at most one of them.

var _ engine.Refunder = (*Provider)(nil)

// Audit actions of refunds, as those of payouts.
const (
	AuditRefundComplete = "refund.complete"
	AuditRefundFail     = "refund.fail"
	AuditRefundMatch    = "refund.sms_match"
	AuditRefundConfirm  = "refund.confirm"
)

// refundActions names a refund's audit action after its payout's.
var refundActions = map[string]string{
	AuditPayoutComplete: AuditRefundComplete, AuditPayoutFail: AuditRefundFail,
	AuditPayoutMatch: AuditRefundMatch, AuditPayoutConfirm: AuditRefundConfirm,
}

// IsRefund says the queued item gives a deposit back rather than pays a
// withdrawal.
func (mp *ManualPayout) IsRefund() bool { return mp.DepositID != "" }

// action is the audit action of a payout's action for mp.
func (mp *ManualPayout) action(payoutAction string) string {
	if mp.IsRefund() {
		return refundActions[payoutAction]
	}
	return payoutAction
}

// CheckRefund refuses (503) a refund whose payer number no accepted SMS
// of the organization proves: money goes only to the number that paid.
func (p *Provider) CheckRefund(ctx context.Context, req engine.RefundRequest) error {
	account, err := p.refundAccount(ctx, req)
	if err != nil {
		return err
	}
	if account == "" {
		return engine.ErrMethodUnavailable
	}
	return nil
}

// refundAccount is the number that paid the deposit, as the accepted
// credit SMS of its transaction ID shows it; "" if none proves one. The
// payer's claimed phone counts only where the message masks the number
// and shows digits that end it (payerShown).
func (p *Provider) refundAccount(ctx context.Context, req engine.RefundRequest) (string, error) {
	if req.ProviderTransactionID == "" || req.Channel == "" {
		return "", nil
	}
	var account string
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		same, err := tx.ListSMSByTransactionID(ctx, req.OrganizationID, req.Channel, req.ProviderTransactionID)
		if err != nil {
			return err
		}
		for _, m := range same {
			if m.Status == StatusAccepted && m.Parsed.Credit {
				account = payerShown(m, req.PayerPhone)
				return nil
			}
		}
		return nil
	})
	return account, err
}

// SendRefund queues the refund for an operator, once per key: a repeat
// returns the one queued. A deposit whose payer no SMS proves (CheckRefund
// refused it; its message rejected since) fails: the inbox cannot say
// where to send it.
func (p *Provider) SendRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	if mp, err := p.getRefund(ctx, req); !errors.Is(err, engine.ErrRefundNotFound) {
		return providerRefund(mp, err)
	}
	account, err := p.refundAccount(ctx, req)
	if err != nil {
		return nil, err
	}
	if account == "" {
		return &engine.ProviderRefund{IdempotencyKey: req.IdempotencyKey, Status: engine.PayoutFailed,
			Reason: "no accepted SMS proves the number that paid the deposit"}, nil
	}
	mp := &ManualPayout{OrganizationID: req.OrganizationID, DepositID: req.DepositID, Payout: engine.Payout{
		IdempotencyKey: req.IdempotencyKey, Method: req.Channel, Account: account, Amount: req.Amount,
		Status: PayoutQueued, CreatedAt: p.now(),
	}}
	err = p.store.InboxTx(ctx, func(ctx context.Context, tx Tx) error {
		err := tx.CreateManualPayout(ctx, mp)
		if errors.Is(err, engine.ErrDuplicate) {
			mp, err = tx.GetManualPayout(ctx, req.IdempotencyKey)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if !mp.IsRefund() || mp.OrganizationID != req.OrganizationID {
		return nil, errors.New("smsinbox: a refund's key names another payout")
	}
	return providerRefund(mp, nil)
}

// GetRefund reports a queued refund as pending until the operator (or the
// SMS of their send) completes it.
func (p *Provider) GetRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	return providerRefund(p.getRefund(ctx, req))
}

func (p *Provider) getRefund(ctx context.Context, req engine.RefundRequest) (*ManualPayout, error) {
	var mp *ManualPayout
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		mp, err = tx.GetManualPayout(ctx, req.IdempotencyKey)
		return err
	})
	if errors.Is(err, engine.ErrNotFound) || err == nil && (!mp.IsRefund() || mp.OrganizationID != req.OrganizationID) {
		return nil, engine.ErrRefundNotFound
	}
	return mp, err
}

func providerRefund(mp *ManualPayout, err error) (*engine.ProviderRefund, error) {
	if err != nil {
		return nil, err
	}
	po := mp.enginePayout()
	return &engine.ProviderRefund{IdempotencyKey: po.IdempotencyKey, Reference: po.Reference, Status: po.Status, Reason: po.Reason}, nil
}

// pollNow tells the engine, after the commit, that mp's outcome changed,
// so its withdrawal or refund moves now rather than at its next poll.
func (p *Provider) pollNow(ctx context.Context, mp *ManualPayout) error {
	if p.engine == nil {
		return nil
	}
	if mp.IsRefund() {
		return p.engine.PollRefundNow(ctx, mp.OrganizationID, mp.IdempotencyKey)
	}
	return p.engine.PollPayoutNow(ctx, mp.OrganizationID, mp.IdempotencyKey)
}

// auditDetails are the audit details of an SMS's match or its confirmation.
func (mp *ManualPayout) auditDetails() map[string]string {
	d := map[string]string{
		"provider_transaction_id": mp.Reference, "sms": mp.SMSID,
		"amount": engine.FormatAmount(mp.Amount), "method": mp.Method,
	}
	if mp.IsRefund() {
		d["deposit_id"] = mp.DepositID
	}
	return d
}
