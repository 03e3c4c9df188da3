package transport

import (
	"net/http"

	"github.com/payd-engine/payd/engine"
)

// maxIDLength bounds path identifiers: anything longer is not an ID of ours.
const maxIDLength = 64

// createDeposit serves POST /v1/deposits. An H2H request is signed, so the
// body is parsed before its fields are read: the mode decides whether the
// signature is required, and nothing is validated before it is checked.
func (s *server) createDeposit(w http.ResponseWriter, r *http.Request) error {
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
	mode, err := o.string("checkout_mode", false)
	if err != nil {
		return err
	}
	// The mode decides which members are allowed: a wrong one is reported
	// as itself, not as the payer it then makes unknown.
	if mode != "" && mode != engine.CheckoutRedirect && mode != engine.CheckoutH2H {
		return engine.Invalid("checkout_mode", "must be redirect or h2h")
	}
	params := engine.CreateDepositParams{OrganizationID: p.OrganizationID, CheckoutMode: mode}
	if mode == engine.CheckoutH2H {
		if err := s.checkSignature(r, p, body); err != nil {
			return err
		}
		if err := o.allow("amount", "payment_method", "redirect_url", "merchant_id", "checkout_mode", "payer", "metadata"); err != nil {
			return err
		}
	} else if err := o.allow("amount", "payment_method", "redirect_url", "merchant_id", "checkout_mode", "metadata"); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{
		{"amount", &params.Amount},
		{"payment_method", &params.PaymentMethod},
		{"redirect_url", &params.RedirectURL},
		{"merchant_id", &params.MerchantID},
	} {
		if *f.dst, err = o.string(f.name, true); err != nil {
			return err
		}
	}
	if mode == engine.CheckoutH2H {
		payer, err := o.object("payer", true)
		if err != nil {
			return err
		}
		if err := payer.allow("phone"); err != nil {
			return err
		}
		if params.PayerPhone, err = payer.string("phone", true); err != nil {
			return err
		}
	}
	if params.Metadata, err = o.rawObject("metadata"); err != nil {
		return err
	}

	d, created, err := s.engine.CreateDeposit(r.Context(), params)
	if err != nil {
		return err
	}
	status := http.StatusOK // redirect creates and every replay
	if created && d.CheckoutMode == engine.CheckoutH2H {
		status = http.StatusCreated
	}
	writeJSON(w, status, engine.DepositCreatedView(d, s.engine.Now(), s.links))
	return nil
}

// getDeposit serves GET /v1/deposits/{id}. Only an H2H deposit requires the
// signature, so the deposit is found first; another organization's deposit
// is not found before any signature is looked at.
func (s *server) getDeposit(w http.ResponseWriter, r *http.Request) error {
	p, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	id, err := pathID(r, "deposit")
	if err != nil {
		return err
	}
	d, err := s.engine.GetDeposit(r.Context(), p.OrganizationID, id)
	if err != nil {
		return err
	}
	if err := s.signIfH2H(r, p, d.CheckoutMode == engine.CheckoutH2H); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, engine.DepositView(d, s.engine.Now(), s.links))
	return nil
}
