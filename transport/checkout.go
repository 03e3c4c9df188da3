package transport

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"strings"

	"github.com/payd-engine/payd/engine"
)

var checkoutTemplate = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
{{if .Verifying}}<meta http-equiv="refresh" content="2">{{end}}
<title>Pay {{.Amount}} BDT</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#222}
.amount{font-size:2rem;font-weight:600}
.status{padding:.5rem 1rem;border-radius:.5rem;background:#f2f2f2}
.error{padding:.5rem 1rem;border-radius:.5rem;background:#fde8e8;color:#8a1c1c}
form{margin:1rem 0}
button{font-size:1rem;padding:.6rem 1.2rem;margin-right:.5rem}
</style>
</head>
<body>
<h1>Payment</h1>
<p class="amount">{{.Amount}} BDT</p>
<p>Method: {{.Method}}</p>
<p class="status" id="status">Status: <strong>{{.Status}}</strong>{{if .Verifying}} (verifying your payment…){{end}}</p>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .Open}}
<p>Pay before {{.ExpiresAt}}.</p>
{{if .Sandbox}}
<form method="post" action="/checkout/{{.Token}}/pay">
<p><strong>Sandbox</strong>: no money moves. Pay as the payer would.</p>
<label>Payer phone <input name="payer_phone" value="{{.PayerPhone}}" inputmode="tel" required></label>
<p><button name="outcome" value="completed">Pay {{.Amount}} BDT</button>
<button name="outcome" value="failed">Simulate a failed payment</button></p>
</form>
<form method="post" action="/checkout/{{.Token}}/cancel"><button>Cancel</button></form>
{{end}}
{{else if .Terminal}}
<p><a href="{{.ReturnURL}}" rel="noreferrer">Return to the merchant</a></p>
{{else if not .Verifying}}
<p>This checkout has expired. <a href="{{.ReturnURL}}" rel="noreferrer">Return to the merchant</a></p>
{{end}}
</body>
</html>
`))

// checkoutPage serves the hosted checkout of a redirect deposit or an H2H
// redirect action, found by its unguessable token.
func (s *server) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	return s.renderCheckout(r.Context(), w, r.PathValue("token"), "")
}

func (s *server) renderCheckout(ctx context.Context, w http.ResponseWriter, token, message string) error {
	if len(token) > maxIDLength {
		return engine.Errorf(engine.CodeNotFound, "checkout not found")
	}
	d, err := s.engine.GetDepositByCheckoutToken(ctx, token)
	if err != nil {
		return err
	}
	if d.Action != engine.ActionRedirect {
		return engine.Errorf(engine.CodeNotFound, "checkout not found")
	}
	var page bytes.Buffer
	err = checkoutTemplate.Execute(&page, map[string]any{
		"Token":      token,
		"Amount":     engine.FormatAmount(d.Amount),
		"Method":     d.PaymentMethod,
		"Status":     d.Status,
		"Open":       d.Actionable(s.engine.Now()) && d.Status == engine.StatusPending,
		"Verifying":  d.Status == engine.StatusProcessing,
		"Terminal":   d.IsTerminal(),
		"ExpiresAt":  engine.FormatTime(d.ExpiresAt),
		"ReturnURL":  d.RedirectURL,
		"PayerPhone": d.PayerPhone,
		"Sandbox":    s.sandbox != nil,
		"Error":      message,
	})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	_, err = page.WriteTo(w)
	return err
}

// checkoutPay records the sandbox payer's payment and queues its
// verification through the same attempt path as an H2H transaction ID.
func (s *server) checkoutPay(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	if err := r.ParseForm(); err != nil {
		return engine.Invalid("body", "must be a form")
	}
	d, err := s.engine.GetDepositByCheckoutToken(r.Context(), token)
	if err != nil {
		return err
	}
	outcome := r.PostForm.Get("outcome")
	if outcome != engine.TransactionFailed {
		outcome = engine.TransactionCompleted
	}
	txID := "SBX" + strings.ToUpper(engine.NewID("", s.engine.Now())[16:])
	_, err = s.sandbox.RecordPayment(r.Context(), SandboxPayment{
		Channel: d.Channel, TransactionID: txID, PayerPhone: strings.TrimSpace(r.PostForm.Get("payer_phone")),
		Amount: engine.FormatAmount(d.Amount), Status: outcome, Type: engine.TransactionPayment,
	})
	if err == nil {
		_, err = s.engine.SubmitCheckoutPayment(r.Context(), token, txID)
	}
	return s.afterCheckoutAction(w, r, token, err)
}

// checkoutCancel ends the deposit as cancelled, at the payer's request.
func (s *server) checkoutCancel(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	_, err := s.engine.CancelCheckout(r.Context(), token)
	return s.afterCheckoutAction(w, r, token, err)
}

// afterCheckoutAction redirects back to the page (POST-redirect-GET), or
// shows the page with the refusal in plain words.
func (s *server) afterCheckoutAction(w http.ResponseWriter, r *http.Request, token string, err error) error {
	var e *engine.Error
	switch {
	case err == nil:
		http.Redirect(w, r, "/checkout/"+token, http.StatusSeeOther)
		return nil
	case errors.As(err, &e) && e.Code != engine.CodeNotFound && e.Code != engine.CodeInternal:
		return s.renderCheckout(r.Context(), w, token, e.Message)
	}
	return err
}
