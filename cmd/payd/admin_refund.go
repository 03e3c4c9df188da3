package main

import (
	"context"
	"flag"

	"github.com/payd-engine/payd/engine"
)

// refundView is a refund as an operator reads it: the wire shape with the
// provider's reference and its own words of a failure, which the API
// keeps from merchants.
type refundView struct {
	engine.RefundView
	ProviderReference string `json:"provider_reference,omitempty"`
	FailureReason     string `json:"failure_reason,omitempty"`
}

func newRefundView(r *engine.Refund) refundView {
	return refundView{engine.NewRefundView(r), r.ProviderReference, r.FailureReason}
}

// refundCreate refunds a succeeded deposit, as POST
// /v1/deposits/{id}/refunds does, audited with --actor. The provider
// payd serve runs (--provider) is asked whether it can refund now; its
// worker sends the refund.
func refundCreate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	p := engine.CreateRefundParams{Audit: true}
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.DepositID, "deposit", "", "the succeeded deposit to refund")
	amount := fs.String("amount", "", "amount in BDT; empty: all that is left to refund")
	fs.StringVar(&p.Reason, "reason", "", "why, shown to the merchant (at most 500 characters)")
	fs.StringVar(&p.MerchantID, "merchant-id", "", "your reference for the refund; running the command again with it returns the same refund (default: one generated)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		if *amount != "" {
			p.Amount, p.AmountGiven = *amount, true
		}
		if p.MerchantID == "" {
			p.MerchantID = "admin_" + engine.RandomToken(12)
		}
		r, created, err := eng.CreateRefund(ctx, p)
		if err != nil {
			return nil, err
		}
		return map[string]any{"refund": newRefundView(r), "created": created}, nil
	}
}

// refundList lists an organization's refunds (or one deposit's), newest
// first, a page of the list the API serves.
func refundList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	var p engine.ListParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.DepositID, "deposit", "", "only this deposit's refunds")
	fs.IntVar(&p.Limit, "limit", engine.MaxPageLimit, "at most this many, newest first")
	fs.StringVar(&p.StartingAfter, "starting-after", "", "the page after this refund ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		page, err := eng.ListRefunds(ctx, p)
		if err != nil {
			return nil, err
		}
		views := make([]refundView, len(page.Data))
		for i, r := range page.Data {
			views[i] = newRefundView(r)
		}
		return map[string]any{"refunds": views, "has_more": page.HasMore}, nil
	}
}
