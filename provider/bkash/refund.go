package bkash

import (
	"context"
	"errors"
	"strings"

	"github.com/payd-engine/payd/engine"
)

// Refunds of deposits paid on bKash's checkout go through bKash's v2 refund
// operation, which names the payment (paymentId, trxId): a deposit proven
// by search has no payment ID there and is the fallback's to refund. bKash
// keeps no idempotency key, so the refund's ID travels as its sku and the
// refund status, which lists a payment's refunds with their sku, is asked
// first: a refund sent again after a lost answer finds the one made and
// makes no second (the engine sends a refund from one worker at a time).
// bKash allows up to ten refunds of a payment, together at most its amount.

// CheckRefund accepts a refund of a checkout payment of a connected
// organization; others are the fallback's.
func (p *Provider) CheckRefund(ctx context.Context, req engine.RefundRequest) error {
	pay, err := p.refundable(ctx, req)
	if err != nil || pay != nil {
		return err
	}
	if r, ok := p.fallback.(engine.Refunder); ok {
		return r.CheckRefund(ctx, req)
	}
	return engine.ErrMethodUnavailable
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

// SendRefund sends the refund unless bKash lists it already.
func (p *Provider) SendRefund(ctx context.Context, req engine.RefundRequest) (*engine.ProviderRefund, error) {
	pay, err := p.refundable(ctx, req)
	if err != nil {
		return nil, err
	}
	if pay == nil {
		if r, ok := p.fallback.(engine.Refunder); ok {
			return r.SendRefund(ctx, req)
		}
		return nil, engine.ErrMethodUnavailable
	}
	if got, err := p.findRefund(ctx, pay, req.IdempotencyKey); err == nil || !errors.Is(err, engine.ErrRefundNotFound) {
		return got, err
	}
	reason := req.Reason
	if reason == "" {
		reason = "refund"
	}
	var ans refundAnswer
	err = p.api(ctx, pay.OrganizationID, func(c credentials) string {
		return origin(c.BaseURL) + "/v2/tokenized-checkout/refund/payment/transaction"
	}, map[string]string{"paymentId": pay.PaymentID, "trxId": pay.TrxID, "refundAmount": engine.FormatAmount(req.Amount),
		"sku": req.IdempotencyKey, "reason": clip(reason)}, &ans)
	var a *apiError
	if errors.As(err, &a) {
		// bKash refused it (beyond the amount, past ten, too late): final.
		return &engine.ProviderRefund{IdempotencyKey: req.IdempotencyKey, Status: engine.PayoutFailed,
			Reason: "bKash refused the refund: " + a.Code + " " + a.Message}, nil
	}
	if err != nil {
		if unavailable(err) {
			p.logFault(ctx, "refund", pay.OrganizationID, err)
			return nil, engine.ErrProviderUnavailable
		}
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
	return p.findRefund(ctx, pay, req.IdempotencyKey)
}

func (p *Provider) findRefund(ctx context.Context, pay *Payment, key string) (*engine.ProviderRefund, error) {
	var ans refundStatusAnswer
	err := p.api(ctx, pay.OrganizationID, func(c credentials) string {
		return origin(c.BaseURL) + "/v2/tokenized-checkout/refund/payment/status"
	}, map[string]string{"paymentId": pay.PaymentID, "trxId": pay.TrxID}, &ans)
	if err != nil {
		if unavailable(err) {
			p.logFault(ctx, "refund status", pay.OrganizationID, err)
			return nil, engine.ErrProviderUnavailable
		}
		return nil, err
	}
	for i := range ans.Refunds {
		if ans.Refunds[i].SKU == key {
			return providerRefund(key, &ans.Refunds[i]), nil
		}
	}
	return nil, engine.ErrRefundNotFound
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
