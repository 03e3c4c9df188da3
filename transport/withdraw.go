package transport

import (
	"context"
	"net/http"

	"github.com/payd-engine/payd/engine"
)

// createWithdrawal serves POST /v1/withdraws (bearer only).
func (s *server) createWithdrawal(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classWithdraw)
	if err != nil {
		return err
	}
	o, err := readObject(r, "amount", "phone", "payment_method", "merchant_id", "metadata")
	if err != nil {
		return err
	}
	params := engine.CreateWithdrawalParams{OrganizationID: p.OrganizationID}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"amount", &params.Amount}, {"phone", &params.Phone},
		{"payment_method", &params.PaymentMethod}, {"merchant_id", &params.MerchantID},
	} {
		if *f.dst, err = o.string(f.name, true); err != nil {
			return err
		}
	}
	if params.Metadata, err = o.rawObject("metadata"); err != nil {
		return err
	}
	wd, err := s.engine.CreateWithdrawal(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, engine.NewWithdrawalView(wd))
	return nil
}

// getWithdrawal serves GET /v1/withdraws/{id} (bearer only).
func (s *server) getWithdrawal(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	id, err := pathID(r, "withdrawal")
	if err != nil {
		return err
	}
	wd, err := s.engine.GetWithdrawal(r.Context(), p.OrganizationID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, engine.NewWithdrawalView(wd))
	return nil
}

// balanceView is the answer of GET /v1/balance.
type balanceView struct {
	Currency  string `json:"currency"`
	Available string `json:"available"`
	Held      string `json:"held"`
}

// getBalance serves GET /v1/balance (bearer), the contract's extension.
func (s *server) getBalance(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	b, err := s.engine.GetBalance(r.Context(), p.OrganizationID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, balanceView{engine.Currency, engine.FormatAmount(b.Available), engine.FormatAmount(b.Held)})
	return nil
}

// settleSandboxWithdrawal serves POST {prefix}/sandbox/withdraws/{id}/settle
// (bearer) with {"outcome":"succeeded"|"failed"}: the sandbox provider
// completes the withdrawal's payout that way, and the payout worker picks
// the outcome up at once.
func (s *server) settleSandboxWithdrawal(w http.ResponseWriter, r *http.Request) error {
	return s.settleSandbox(w, r, "withdrawal", func(ctx context.Context, org, id string) (string, error) {
		wd, err := s.engine.GetWithdrawal(ctx, org, id)
		if err != nil {
			return "", err
		}
		return wd.ID, nil
	}, s.sandbox.SettlePayout, s.engine.PollPayoutNow)
}

// settleSandbox is the sandbox's settle endpoints: the organization's
// resource found by get (not_found otherwise), its outcome given to the
// sandbox by settle, and poll telling the worker to read it at once.
func (s *server) settleSandbox(w http.ResponseWriter, r *http.Request, kind string,
	get func(ctx context.Context, org, id string) (string, error),
	settle func(ctx context.Context, org, id, outcome string) error,
	poll func(ctx context.Context, org, id string) error) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	o, err := readObject(r, "outcome")
	if err != nil {
		return err
	}
	outcome, err := o.string("outcome", true)
	if err != nil {
		return err
	}
	id, err := pathID(r, kind)
	if err != nil {
		return err
	}
	if id, err = get(r.Context(), p.OrganizationID, id); err != nil {
		return err
	}
	if err := settle(r.Context(), p.OrganizationID, id, outcome); err != nil {
		return err
	}
	if err := poll(r.Context(), p.OrganizationID, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": id, "outcome": outcome})
	return nil
}
