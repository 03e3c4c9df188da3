package transport

import (
	"bytes"
	"html/template"
	"net/http"

	"github.com/payd-engine/payd/engine"
)

var checkoutTemplate = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Pay {{.Amount}} BDT</title>
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#222}
.amount{font-size:2rem;font-weight:600}
.status{padding:.5rem 1rem;border-radius:.5rem;background:#f2f2f2}
</style>
</head>
<body>
<h1>Payment</h1>
<p class="amount">{{.Amount}} BDT</p>
<p>Method: {{.Method}}</p>
<p class="status">Status: <strong>{{.Status}}</strong></p>
{{if .Open}}<p>Pay before {{.ExpiresAt}}.</p>{{else}}<p>This checkout is closed.</p>{{end}}
<p><a href="{{.ReturnURL}}" rel="noreferrer">Return to the merchant</a></p>
</body>
</html>
`))

// checkoutPage serves the hosted checkout of a redirect deposit or an H2H
// redirect action, found by its unguessable token.
func (s *server) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	if len(token) > maxIDLength {
		return engine.Errorf(engine.CodeNotFound, "checkout not found")
	}
	d, err := s.engine.GetDepositByCheckoutToken(r.Context(), token)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	err = checkoutTemplate.Execute(&page, map[string]any{
		"Amount":    engine.FormatAmount(d.Amount),
		"Method":    d.PaymentMethod,
		"Status":    d.Status,
		"Open":      d.Actionable(s.engine.Now()),
		"ExpiresAt": engine.FormatTime(d.ExpiresAt),
		"ReturnURL": d.RedirectURL,
	})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, err = page.WriteTo(w)
	return err
}
