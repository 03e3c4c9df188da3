package transport

import (
	"encoding/json"
	"net/http"

	"github.com/payd-engine/payd/engine"
)

// sandboxPaymentView is a recorded simulated payment.
type sandboxPaymentView struct {
	Channel        string  `json:"channel"`
	TransactionID  string  `json:"transaction_id"`
	Type           *string `json:"type"`
	PayerPhone     string  `json:"payer_phone"`
	RecipientPhone *string `json:"recipient_phone"`
	Amount         string  `json:"amount"`
	Currency       string  `json:"currency"`
	Status         string  `json:"status"`
	CompletedAt    string  `json:"completed_at"`
}

// recordSandboxPayment serves POST {prefix}/sandbox/payments (bearer): a
// wallet payment as a payer would make it, for lookups of the caller's
// organization's deposits to find.
func (s *server) recordSandboxPayment(w http.ResponseWriter, r *http.Request) error {
	principal, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	o, err := readObject(r, "channel", "transaction_id", "payer_phone", "recipient_phone", "amount", "status", "completed_at", "type")
	if err != nil {
		return err
	}
	p := SandboxPayment{OrganizationID: principal.OrganizationID}
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{
		{"channel", &p.Channel, true}, {"transaction_id", &p.TransactionID, true},
		{"payer_phone", &p.PayerPhone, true}, {"recipient_phone", &p.RecipientPhone, false},
		{"amount", &p.Amount, true}, {"status", &p.Status, true},
		{"completed_at", &p.CompletedAt, false}, {"type", &p.Type, false},
	} {
		if *f.dst, err = o.string(f.name, f.required); err != nil {
			return err
		}
	}
	t, err := s.sandbox.RecordPayment(r.Context(), p)
	if err != nil {
		return err
	}
	view := sandboxPaymentView{
		Channel: t.Channel, TransactionID: t.TransactionID, PayerPhone: t.PayerPhone,
		Amount: engine.FormatAmount(t.Amount), Currency: t.Currency, Status: t.Status,
		CompletedAt: engine.FormatTime(t.CompletedAt),
	}
	if t.Type != "" {
		view.Type = &t.Type
	}
	if t.RecipientPhone != "" {
		view.RecipientPhone = &t.RecipientPhone
	}
	writeJSON(w, http.StatusCreated, view)
	return nil
}

// setSandboxOutage serves POST {prefix}/sandbox/outage (bearer) with
// {"enabled": true|false}: while enabled, provider lookups fail as if the
// wallet API were down, and attempts wait as delayed: the caller's
// organization's, no other's.
func (s *server) setSandboxOutage(w http.ResponseWriter, r *http.Request) error {
	principal, err := s.admit(w, r, classDefault)
	if err != nil {
		return err
	}
	o, err := readObject(r, "enabled")
	if err != nil {
		return err
	}
	var enabled bool
	if raw, ok := o.fields["enabled"]; !ok || json.Unmarshal(raw, &enabled) != nil || isNull(raw) {
		return engine.Invalid("enabled", "must be true or false")
	}
	s.sandbox.SetOutage(principal.OrganizationID, enabled)
	writeJSON(w, http.StatusOK, map[string]bool{"enabled": enabled})
	return nil
}
