package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/payd-engine/payd/engine"
)

// The UddoktaPay-compatible checkout: {prefix}/checkout-v2 and
// {prefix}/verify-payment, as the merchant plugins written for UddoktaPay
// call them, opened only by the organization's compat key in the
// RT-UDDOKTAPAY-API-KEY header. Answers are UddoktaPay's shapes: errors
// are {"status":false,"message":...}, never payd's envelope.

// CompatKeyHeader carries the compat key.
const CompatKeyHeader = "RT-UDDOKTAPAY-API-KEY"

// CompatEngine is the engine's UddoktaPay-compatible side.
type CompatEngine interface {
	AuthenticateCompat(ctx context.Context, key string) (string, error)
	CreateCompatInvoice(ctx context.Context, p engine.CompatCheckoutParams) (string, error)
	GetCompatPayment(ctx context.Context, orgID, invoiceID string) (*engine.CompatPayment, error)
}

// compatRoutes mounts the two endpoints when the engine has the compat
// side and the host serves the payment page.
func (s *server) compatRoutes(mux *http.ServeMux, payURL func(token string) string) {
	ce, ok := s.engine.(CompatEngine)
	if !ok || payURL == nil {
		return
	}
	mux.Handle(s.prefix+"/checkout-v2", s.compatHandle(func(w http.ResponseWriter, r *http.Request) error {
		return s.compatCheckout(w, r, ce, payURL)
	}))
	mux.Handle(s.prefix+"/verify-payment", s.compatHandle(func(w http.ResponseWriter, r *http.Request) error {
		return s.compatVerify(w, r, ce)
	}))
}

type compatError struct {
	Status  bool   `json:"status"`
	Message string `json:"message"`
}

// compatHandle renders a handler's error as UddoktaPay does.
func (s *server) compatHandle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, compatError{Message: "method not allowed: use POST"})
			return
		}
		err := h(w, r)
		if err == nil {
			return
		}
		var e *engine.Error
		if u := engine.UnavailableError(err); u != nil {
			s.noteUnavailable(w, r, err)
			writeJSON(w, http.StatusServiceUnavailable, compatError{Message: u.Message})
			return
		}
		if !errors.As(err, &e) || statusByCode[e.Code] == 0 || e.Code == engine.CodeInternal {
			if errors.Is(r.Context().Err(), context.Canceled) {
				return
			}
			s.logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
			writeJSON(w, http.StatusInternalServerError, compatError{Message: "internal error"})
			return
		}
		msg := e.Message
		if e.Code == engine.CodeUnauthorized {
			msg = "Unauthorized: send the compat API key in the " + CompatKeyHeader + " header"
		}
		writeJSON(w, statusByCode[e.Code], compatError{Message: msg})
	})
}

// compatAdmit authenticates the compat key of a request and takes a token
// from its organization's bucket.
func (s *server) compatAdmit(w http.ResponseWriter, r *http.Request, ce CompatEngine) (string, error) {
	key, err := credentialHeader(r, CompatKeyHeader)
	if err != nil {
		return "", err
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return "", engine.Errorf(engine.CodeUnauthorized, engine.ReasonMissingAPIKey)
	}
	org, err := ce.AuthenticateCompat(r.Context(), key)
	if err != nil {
		return "", err
	}
	if ok, wait := s.limiters[classDefault].allow("compat:" + org); !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return "", engine.Errorf(codeRateLimited, "too many requests: retry after %d s", secs)
	}
	return org, nil
}

// decodeCompat reads a JSON object body into v.
func decodeCompat(r *http.Request, v any) error {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return engine.Errorf(codeRequestTooLarge, "request body too large")
		}
		return engine.Invalid("body", "could not be read")
	}
	dec := json.NewDecoder(&buf)
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return engine.Invalid(typeErr.Field, "has the wrong type")
		}
		return engine.Invalid("body", "must be a JSON object")
	}
	if dec.More() {
		return engine.Invalid("body", "must be one JSON object")
	}
	return nil
}

// compatAmount is an amount as the plugins send it: a JSON number (PHP's
// json_encode of an int or float) or a string (WooCommerce's order
// total). Either way its text is then held to payd's money rules, so 1e3,
// 10.001 and a float's binary noise are refused, never rounded.
type compatAmount struct{ text string }

func (a *compatAmount) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		a.text = strings.TrimSpace(s)
	case string(b) == "null":
		a.text = ""
	case len(b) > 0 && (b[0] == '-' || (b[0] >= '0' && b[0] <= '9')):
		a.text = string(b)
	default:
		return engine.Invalid("amount", "must be a number or a string")
	}
	return nil
}

type compatCheckoutBody struct {
	FullName    string          `json:"full_name"`
	Email       string          `json:"email"`
	Amount      compatAmount    `json:"amount"`
	Metadata    json.RawMessage `json:"metadata"`
	RedirectURL string          `json:"redirect_url"`
	ReturnType  string          `json:"return_type"`
	CancelURL   string          `json:"cancel_url"`
	WebhookURL  string          `json:"webhook_url"`
}

type compatCheckoutAnswer struct {
	Status     bool   `json:"status"`
	Message    string `json:"message"`
	PaymentURL string `json:"payment_url"`
}

func (s *server) compatCheckout(w http.ResponseWriter, r *http.Request, ce CompatEngine, payURL func(string) string) error {
	org, err := s.compatAdmit(w, r, ce)
	if err != nil {
		return err
	}
	var b compatCheckoutBody
	if err := decodeCompat(r, &b); err != nil {
		var e *engine.Error
		if errors.As(err, &e) {
			return e
		}
		return err
	}
	if b.Amount.text == "" {
		return engine.Invalid("amount", "is required")
	}
	metadata := []byte(b.Metadata)
	switch strings.TrimSpace(string(metadata)) {
	case "", "null", "[]":
		metadata = nil // PHP encodes an empty array as []
	}
	id, err := ce.CreateCompatInvoice(r.Context(), engine.CompatCheckoutParams{
		OrganizationID: org, FullName: b.FullName, Email: b.Email, Amount: b.Amount.text, Metadata: metadata,
		RedirectURL: b.RedirectURL, ReturnType: b.ReturnType, CancelURL: b.CancelURL, WebhookURL: b.WebhookURL,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, compatCheckoutAnswer{Status: true, Message: "Payment Url", PaymentURL: payURL(id)})
	return nil
}

func (s *server) compatVerify(w http.ResponseWriter, r *http.Request, ce CompatEngine) error {
	org, err := s.compatAdmit(w, r, ce)
	if err != nil {
		return err
	}
	var b struct {
		InvoiceID string `json:"invoice_id"`
	}
	if err := decodeCompat(r, &b); err != nil {
		return err
	}
	if b.InvoiceID == "" {
		return engine.Invalid("invoice_id", "is required")
	}
	p, err := ce.GetCompatPayment(r.Context(), org, b.InvoiceID)
	if err != nil {
		return err
	}
	h := w.Header()
	h["Content-Type"], h["Cache-Control"] = jsonContentType, noStore
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(p.JSON())
	return nil
}
