package transport

import (
	"context"
	"net/http"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/transport/signing"
)

// Refunds (the contract's extension): POST /v1/deposits/{id}/refunds,
// GET /v1/refunds/{id} and GET /v1/refunds. A refund of an H2H deposit is
// signed as reading the deposit is.

// refundParams are the members of a create-refund body.
var refundParams = []string{"amount", "merchant_id", "reason", "metadata"}

// createRefund serves POST /v1/deposits/{id}/refunds. The contract orders
// its answers 400, 401, 404, then the engine's: so the body is checked
// first, a signature sent is checked before the deposit is looked for,
// and an H2H deposit's refund must be signed.
func (s *server) createRefund(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	body, err := readBody(r.Body, MaxBodyBytes)
	if err != nil {
		return err
	}
	o, err := parseObject(body)
	if err != nil {
		return err
	}
	if err := o.allow(refundParams...); err != nil {
		return err
	}
	id, err := pathID(r, "deposit")
	if err != nil {
		return err
	}
	params := engine.CreateRefundParams{OrganizationID: p.OrganizationID, DepositID: id}
	if raw, ok := o.fields["amount"]; ok && !isNull(raw) {
		params.AmountGiven = true
	}
	if params.Amount, err = o.string("amount", false); err != nil {
		return err
	}
	if params.MerchantID, err = o.string("merchant_id", true); err != nil {
		return err
	}
	if params.Reason, err = o.string("reason", false); err != nil {
		return err
	}
	if params.Metadata, err = o.rawObject("metadata"); err != nil {
		return err
	}
	if err := params.Validate(); err != nil {
		return err
	}
	signed := r.Header.Get(signing.SignatureHeader) != "" || r.Header.Get(signing.TimestampHeader) != ""
	if signed {
		if err := s.checkSignature(r, p, body); err != nil {
			return err
		}
	}
	d, err := s.engine.GetDeposit(r.Context(), p.OrganizationID, id)
	if err != nil {
		return err
	}
	if d.CheckoutMode == engine.CheckoutH2H && !signed {
		if err := s.checkSignature(r, p, body); err != nil {
			return err
		}
	}
	rf, created, err := s.engine.CreateRefund(r.Context(), params)
	if err != nil {
		return err
	}
	status := http.StatusOK // a replay
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, engine.NewRefundView(rf))
	return nil
}

// getRefund serves GET /v1/refunds/{id}: another organization's refund is
// not found before any signature is looked at, as for a deposit.
func (s *server) getRefund(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	id, err := pathID(r, "refund")
	if err != nil {
		return err
	}
	rf, err := s.engine.GetRefund(r.Context(), p.OrganizationID, id)
	if err != nil {
		return err
	}
	if err := s.signIfH2H(r, p, rf.DepositH2H); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, engine.NewRefundView(rf))
	return nil
}

var refundListParams = append([]string{"deposit_id"}, pagingParams...)

// listRefunds serves GET /v1/refunds, all of the organization's or one
// deposit's (deposit_id).
func (s *server) listRefunds(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	lp, err := parseList(r, p.OrganizationID, refundListParams)
	if err != nil {
		return err
	}
	page, err := s.engine.ListRefunds(r.Context(), lp)
	if err != nil {
		return err
	}
	if err := s.signIfH2H(r, p, page.Signed); err != nil {
		return err
	}
	body := listBody{Data: make([]any, len(page.Data)), HasMore: page.HasMore}
	for i, rf := range page.Data {
		body.Data[i] = engine.NewRefundView(rf)
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// settleSandboxRefund serves POST {prefix}/sandbox/refunds/{id}/settle
// (bearer) with {"outcome":"succeeded"|"failed"}, as for a withdrawal.
func (s *server) settleSandboxRefund(w http.ResponseWriter, r *http.Request) error {
	return s.settleSandbox(w, r, "refund", func(ctx context.Context, org, id string) (string, error) {
		rf, err := s.engine.GetRefund(ctx, org, id)
		if err != nil {
			return "", err
		}
		return rf.ID, nil
	}, s.sandbox.SettleRefund, s.engine.PollRefundNow)
}
