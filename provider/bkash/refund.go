package bkash

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// Refunds of deposits paid on bKash's checkout go through bKash's v2 refund
// operation, which names the checkout payment (paymentId, trxId). bKash
// keeps no key of the merchant's for a refund, and its refund status lists
// a payment's refunds by bKash's refundTrxId only (not by the sku sent), so
// each refund is recorded before it is sent (Refund, state sending), one
// per payment at a time. A refund whose answer was lost is then the one
// refund of its amount the status lists that no row names yet; if there is
// none, bKash did not make it and it is sent again. bKash allows up to ten
// refunds of a payment, together at most its amount.
//
// A deposit proven by bKash's transaction search (a bkash_merchant payment
// made in the bKash app) has no checkout payment ID, and bKash's refund
// takes no other: such a refund is refused (503 method_unavailable at
// create). The fallback refunds only deposits whose payment it proves
// itself (an SMS inbox's accepted SMS; the sandbox's payments).

// RefundSettle is how long after a send that bKash does not list a refund
// is sent again.
const RefundSettle = 2 * time.Minute

// errSearchProven is why a deposit bKash's search proved is not refunded.
var errSearchProven = errors.New("bKash's refund operation takes only payments made on its checkout (a paymentID); " +
	"this one was made in the bKash app and proven by bKash's transaction search")

// CheckRefund accepts a refund of a checkout payment of a connected
// organization; others are the fallback's, when it proves their payment.
func (p *Provider) CheckRefund(ctx context.Context, req engine.RefundRequest) error {
	pay, err := p.refundable(ctx, req)
	if err != nil {
		return err
	}
	if pay != nil {
		// Refunded with the organization's credentials: none, no refund.
		if ok, err := p.Connected(ctx, pay.OrganizationID); err != nil || !ok {
			return cmp.Or(err, engine.ErrMethodUnavailable)
		}
		return nil
	}
	r, err := p.fallbackRefunder(ctx, req)
	if err != nil {
		return engine.ErrMethodUnavailable
	}
	return r.CheckRefund(ctx, req)
}

// refundable returns the checkout payment a refund gives back, nil when the
// deposit was not paid on this provider's checkout.
func (p *Provider) refundable(ctx context.Context, req engine.RefundRequest) (*Payment, error) {
	if req.Channel != engine.ChannelBkash || !p.hasStore {
		return nil, nil
	}
	pay, err := p.store.GetPaymentByTrx(ctx, req.OrganizationID, req.ProviderTransactionID)
	if errors.Is(err, engine.ErrNotFound) || err == nil && pay.DepositID != req.DepositID {
		return nil, nil
	}
	return pay, err
}

// fallbackRefunder is the fallback, when it refunds and, for a bKash
// deposit not paid on the checkout, proves its payment itself:
// errSearchProven when only bKash's search does.
func (p *Provider) fallbackRefunder(ctx context.Context, req engine.RefundRequest) (engine.Refunder, error) {
	r, ok := p.fallback.(engine.Refunder)
	if !ok {
		return nil, engine.ErrMethodUnavailable
	}
	if req.Channel != engine.ChannelBkash {
		return r, nil
	}
	_, err := p.fallback.LookupTransaction(ctx, engine.LookupRequest{OrganizationID: req.OrganizationID,
		Channel: req.Channel, TransactionID: req.ProviderTransactionID, PayerPhone: req.PayerPhone})
	switch {
	case errors.Is(err, engine.ErrTransactionNotFound):
		return nil, errSearchProven
	case err != nil:
		return nil, err
	}
	return r, nil
}

// SendRefund sends the refund once: a repeat finds the one recorded, and
// one whose answer was lost is found in bKash's refund status.
func (p *Provider) SendRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	pay, err := p.refundable(ctx, req)
	if err != nil {
		return nil, err
	}
	if pay == nil {
		r, err := p.fallbackRefunder(ctx, req)
		switch {
		case errors.Is(err, errSearchProven):
			// CheckRefund refused it at create: the fallback lost its proof
			// since. Nothing was sent.
			return &engine.ProviderRefund{IdempotencyKey: req.IdempotencyKey, Status: engine.PayoutFailed, Reason: err.Error()}, nil
		case errors.Is(err, engine.ErrMethodUnavailable):
			return nil, engine.ErrProviderUnavailable
		case err != nil:
			return nil, err
		}
		return r.SendRefund(ctx, req)
	}
	rec, err := p.store.GetRefund(ctx, req.IdempotencyKey)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		rec = &Refund{RefundID: req.IdempotencyKey, OrganizationID: pay.OrganizationID, PaymentID: pay.PaymentID,
			Amount: req.Amount, State: RefundSending, SentAt: p.now()}
		if err := p.store.InsertRefund(ctx, rec); errors.Is(err, ErrRefundInFlight) {
			return nil, engine.ErrProviderUnavailable // sent after the other one
		} else if err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case rec.PaymentID != pay.PaymentID:
		return nil, p.errorf("a refund's key names another payment")
	case rec.State == RefundSending:
		// Sent before, its answer lost (or never sent): bKash's list says.
		got, err := p.reconcile(ctx, pay, rec)
		if !errors.Is(err, engine.ErrRefundNotFound) {
			return got, err
		}
		// Not listed: sent again, once bKash has had time to list a send
		// it made after its caller gave up.
		now := p.now()
		if now.Before(rec.SentAt.Add(RefundSettle)) {
			return nil, engine.ErrProviderUnavailable
		}
		if won, err := p.store.ResendRefund(ctx, rec.RefundID, rec.SentAt, now); err != nil || !won {
			if err == nil {
				err = engine.ErrProviderUnavailable
			}
			return nil, err
		}
	default:
		return p.recorded(ctx, pay, rec)
	}
	reason := req.Reason
	if reason == "" {
		reason = "refund"
	}
	var ans refundAnswer
	err = p.apiV2(ctx, pay.OrganizationID, func(c credentials) string {
		return origin(c.BaseURL) + "/v2/tokenized-checkout/refund/payment/transaction"
	}, map[string]string{"paymentId": pay.PaymentID, "trxId": pay.TrxID, "refundAmount": engine.FormatAmount(req.Amount),
		"sku": req.IdempotencyKey, "reason": clip(reason)}, &ans)
	var a *apiError
	if errors.As(err, &a) {
		// bKash refused it (beyond the amount, past ten, too late): final.
		why := "bKash refused the refund: " + a.Code + " " + a.Message
		if _, err := p.store.FinishRefund(ctx, rec.RefundID, RefundRefused, "", why); err != nil {
			return nil, err
		}
		return &engine.ProviderRefund{IdempotencyKey: req.IdempotencyKey, Status: engine.PayoutFailed, Reason: why}, nil
	}
	if err == nil && ans.RefundTrxID == "" {
		err = &unreachable{reason: "a refund answer without a refundTrxId"}
	}
	if err != nil {
		if unavailable(err) || errors.Is(err, ErrNotConnected) {
			p.logFault(ctx, "refund", pay.OrganizationID, err)
			return nil, engine.ErrProviderUnavailable // the next try reconciles
		}
		return nil, err
	}
	if _, err := p.store.FinishRefund(ctx, rec.RefundID, RefundMade, ans.RefundTrxID, ""); err != nil {
		return nil, err
	}
	return providerRefund(req.IdempotencyKey, &ans), nil
}

// GetRefund reads the refund back from bKash's refund status.
func (p *Provider) GetRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	pay, err := p.refundable(ctx, req)
	if err != nil {
		return nil, err
	}
	if pay == nil {
		if r, ok := p.fallback.(engine.Refunder); ok {
			return r.GetRefund(ctx, req)
		}
		return nil, engine.ErrRefundNotFound
	}
	rec, err := p.store.GetRefund(ctx, req.IdempotencyKey)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return nil, engine.ErrRefundNotFound
	case err != nil:
		return nil, err
	case rec.State == RefundSending:
		return p.reconcile(ctx, pay, rec)
	}
	return p.recorded(ctx, pay, rec)
}

// recorded reports a refund that has ended: a refusal as recorded, a
// refund made as bKash's status lists it now.
func (p *Provider) recorded(ctx context.Context, pay *Payment, rec *Refund) (*engine.ProviderRefund, error) {
	if rec.State == RefundRefused {
		return &engine.ProviderRefund{IdempotencyKey: rec.RefundID, Status: engine.PayoutFailed, Reason: rec.Reason}, nil
	}
	list, err := p.refundStatus(ctx, pay, false)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].RefundTrxID == rec.RefundTrxID {
			return providerRefund(rec.RefundID, &list[i]), nil
		}
	}
	// Made, and not yet listed: asked again later.
	return &engine.ProviderRefund{IdempotencyKey: rec.RefundID, Reference: rec.RefundTrxID, Status: engine.PayoutPending}, nil
}

// reconcile finds a sending refund in bKash's list: the first refund of
// its amount no row names is it (refunds of a payment are sent one at a
// time). ErrRefundNotFound when there is none: bKash did not make it.
func (p *Provider) reconcile(ctx context.Context, pay *Payment, rec *Refund) (*engine.ProviderRefund, error) {
	list, err := p.refundStatus(ctx, pay, true)
	if err != nil {
		return nil, err
	}
	known, err := p.store.KnownRefunds(ctx, pay.PaymentID)
	if err != nil {
		return nil, err
	}
	for i := range list {
		a := &list[i]
		if known[a.RefundTrxID] || a.RefundTrxID == "" || !sameAmount(a.RefundAmount, rec) {
			continue
		}
		won, err := p.store.FinishRefund(ctx, rec.RefundID, RefundMade, a.RefundTrxID, "")
		if err != nil {
			return nil, err
		}
		if !won {
			rec, err = p.store.GetRefund(ctx, rec.RefundID)
			if err != nil {
				return nil, err
			}
			return p.recorded(ctx, pay, rec)
		}
		return providerRefund(rec.RefundID, a), nil
	}
	return nil, engine.ErrRefundNotFound
}

func sameAmount(s string, rec *Refund) bool {
	d, err := decimal.NewFromString(s)
	return err == nil && d.Equal(rec.Amount)
}

// refundStatus lists a payment's refunds as bKash's refund status does. A
// refusal (an error code: bKash publishes none for "no refund yet") is an
// empty list when empty is true, else a refund asked about later.
func (p *Provider) refundStatus(ctx context.Context, pay *Payment, empty bool) ([]refundAnswer, error) {
	var ans refundStatusAnswer
	err := p.apiV2(ctx, pay.OrganizationID, func(c credentials) string {
		return origin(c.BaseURL) + "/v2/tokenized-checkout/refund/payment/status"
	}, map[string]string{"paymentId": pay.PaymentID, "trxId": pay.TrxID}, &ans)
	var refused *apiError
	if empty && errors.As(err, &refused) {
		p.logFault(ctx, "refund status (taken as no refund)", pay.OrganizationID, err)
		return nil, nil
	}
	if err != nil {
		if unavailable(err) || errors.Is(err, ErrNotConnected) {
			p.logFault(ctx, "refund status", pay.OrganizationID, err)
			return nil, engine.ErrProviderUnavailable
		}
		return nil, err
	}
	return ans.Refunds, nil
}

func providerRefund(key string, a *refundAnswer) *engine.ProviderRefund {
	r := &engine.ProviderRefund{IdempotencyKey: key, Reference: a.RefundTrxID, Status: engine.PayoutPending}
	switch strings.ToLower(a.Status) {
	case "completed":
		r.Status = engine.PayoutSucceeded
	case "failed", "declined", "rejected":
		r.Status, r.Reason = engine.PayoutFailed, "bKash: "+clip(a.Status)
	}
	return r
}
