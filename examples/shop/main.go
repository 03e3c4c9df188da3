// Command shop is a merchant's shop backend that takes payments through a
// payd server with the Go client (transport/client): it creates an H2H
// deposit for each order, shows the payer the instructions exactly as
// returned, submits the transaction ID the payer types, and fulfils an
// order only on a succeeded status read from payd or a verified
// deposit.succeeded webhook, never because the payer says so.
//
//	PAYD_API_KEY=payd_sk_... PAYD_SIGNING_SECRET=payd_ss_... \
//	PAYD_WEBHOOK_SECRET=whsec_... go run ./examples/shop -addr 127.0.0.1:9091
package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"html/template"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/payd-engine/payd/transport/client"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9091", "address to listen on")
	paydURL := flag.String("payd", envOr("PAYD_URL", "http://127.0.0.1:8080/api"), "payd's API base URL, with its prefix (env PAYD_URL)")
	publicURL := flag.String("public-url", "", "where payers reach this shop (default http://<addr>)")
	flag.Parse()
	key, secret := os.Getenv("PAYD_API_KEY"), os.Getenv("PAYD_SIGNING_SECRET")
	if key == "" || secret == "" {
		slog.Error("set PAYD_API_KEY and PAYD_SIGNING_SECRET (payd admin org create --h2h prints them)")
		os.Exit(2)
	}
	if *publicURL == "" {
		*publicURL = "http://" + *addr
	}
	s := newShop(client.New(*paydURL, key, secret), os.Getenv("PAYD_WEBHOOK_SECRET"), *publicURL, slog.Default())
	slog.Info("shop listening", "url", *publicURL+"/", "payd", *paydURL, "webhooks", s.webhookSecret != "")
	srv := &http.Server{Addr: *addr, Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("serve", "err", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// order is the shop's record of a sale. A real shop keeps it in its
// database; the deposit's merchant_id is the order ID.
type order struct {
	ID, DepositID, Amount string
	// FulfilledBy is "" until the order ships, then "status" or "webhook":
	// what proved the payment.
	FulfilledBy string
}

type shop struct {
	payd          *client.Client
	webhookSecret string
	publicURL     string
	logger        *slog.Logger

	mu     sync.Mutex
	orders map[string]*order
	events map[string]bool // webhook event IDs handled (deliveries are at least once)
}

func newShop(payd *client.Client, webhookSecret, publicURL string, logger *slog.Logger) *shop {
	return &shop{
		payd: payd, webhookSecret: webhookSecret, publicURL: publicURL, logger: logger,
		orders: map[string]*order{}, events: map[string]bool{},
	}
}

// Handler serves the shop's pages and its webhook endpoint.
func (s *shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("POST /orders", s.createOrder)
	mux.HandleFunc("GET /orders/{id}", s.showOrder)
	mux.HandleFunc("POST /orders/{id}/transaction", s.submitTransaction)
	mux.HandleFunc("POST /webhooks/payd", s.webhook)
	return mux
}

// fulfil ships an order once, whatever proved its payment first.
func (s *shop) fulfil(orderID, by string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.orders[orderID]
	if o == nil || o.FulfilledBy != "" {
		return
	}
	o.FulfilledBy = by
	s.logger.Info("fulfil order", "order", orderID, "deposit", o.DepositID, "proof", by)
}

func (s *shop) order(id string) (order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orders[id]
	if !ok {
		return order{}, false
	}
	return *o, true
}

var pages = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Tea Shop</title></head>
<body><h1>Tea Shop</h1>
<form method="post" action="/orders">
<p>Darjeeling tea, 750.50 BDT</p>
<label>Pay with <select name="method"><option value="bkash_agent">bKash (cash out to an agent)</option><option value="bkash_merchant">bKash (payment)</option><option value="nagad_agent">Nagad (cash out)</option></select></label>
<label>Your wallet number <input name="phone" value="01712345678" inputmode="tel"></label>
<button>Buy</button>
</form></body></html>
{{define "order"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Order {{.Order.ID}}</title>
{{if .Refresh}}<meta http-equiv="refresh" content="3; url=/orders/{{.Order.ID}}">{{end}}</head>
<body><h1>Order {{.Order.ID}}</h1>
<p>Payment: <strong id="status">{{.Deposit.Status}}</strong></p>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>{{end}}
{{if .Order.FulfilledBy}}<p id="fulfilled">Paid, thank you: your tea ships today.</p>
{{else if .Instructions}}{{with .Deposit.NextAction}}
<ol id="instructions">
<li>Open your <strong id="channel">{{.Channel}}</strong> app and choose <strong id="operation">{{.Operation}}</strong>.</li>
<li>Send exactly <strong id="amount">{{.Amount}} {{.Currency}}</strong> to <strong id="recipient">{{.Recipient.Value}}</strong>{{with .Recipient.Name}} ({{.}}){{end}}.</li>
{{with .QRPayload}}<li>Or scan the QR code with the payload <code id="qr">{{.}}</code>.</li>{{end}}
<li>Type the transaction ID from the confirmation message:</li>
</ol>{{end}}
<form method="post" action="/orders/{{.Order.ID}}/transaction">
<label>Transaction ID <input name="transaction_id" required minlength="3" maxlength="64"></label>
<button>Confirm payment</button>
<p>{{.Deposit.Verification.AttemptsRemaining}} attempts left</p>
</form>
{{else if .RedirectURL}}<p><a id="pay" href="{{.RedirectURL}}">Pay now</a></p>
{{end}}
</body></html>{{end}}`))

func (s *shop) home(w http.ResponseWriter, _ *http.Request) { _ = pages.Execute(w, nil) }

// createOrder creates the order's H2H deposit (signed; idempotent by the
// order ID, so the client's retries cannot create two).
func (s *shop) createOrder(w http.ResponseWriter, r *http.Request) {
	id := "order-" + randomHex(6)
	method := r.FormValue("method")
	if method == "" {
		method = "bkash_agent"
	}
	d, _, err := s.payd.CreateH2HDeposit(r.Context(), client.H2HDepositRequest{
		Amount: "750.50", PaymentMethod: method, MerchantID: id, PayerPhone: r.FormValue("phone"),
		RedirectURL: s.publicURL + "/orders/" + id,
	})
	var perr *client.Error
	switch {
	case errors.As(err, &perr) && perr.Code == client.CodeMethodUnavailable:
		http.Error(w, "This payment method is not available right now: choose another.", http.StatusServiceUnavailable)
		return
	case errors.As(err, &perr) && perr.Code == client.CodeInvalidRequest:
		http.Error(w, "Check your details: "+perr.Message, http.StatusBadRequest)
		return
	case err != nil:
		s.logger.Error("create deposit", "err", err)
		http.Error(w, "payments are unavailable, try again", http.StatusBadGateway)
		return
	}
	s.mu.Lock()
	s.orders[id] = &order{ID: id, DepositID: d.ID, Amount: d.Amount}
	s.mu.Unlock()
	http.Redirect(w, r, "/orders/"+id, http.StatusSeeOther)
}

// showOrder reads the deposit from payd (an authenticated status response
// is proof), fulfils on succeeded, and otherwise shows what to do next.
func (s *shop) showOrder(w http.ResponseWriter, r *http.Request) {
	s.renderOrder(w, r, http.StatusOK, "")
}

func (s *shop) renderOrder(w http.ResponseWriter, r *http.Request, status int, message string) {
	o, ok := s.order(r.PathValue("id"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	d, err := s.payd.GetDeposit(r.Context(), o.DepositID)
	if err != nil {
		s.logger.Error("read deposit", "err", err)
		http.Error(w, "payments are unavailable, try again", http.StatusBadGateway)
		return
	}
	if d.Succeeded() {
		s.fulfil(o.ID, "status")
		o, _ = s.order(o.ID)
	}
	view := map[string]any{"Order": o, "Deposit": d, "Error": message, "Refresh": d.Status == client.StatusProcessing}
	if na := d.NextAction; na != nil && o.FulfilledBy == "" {
		view["Instructions"] = na.Type == client.ActionDisplayInstructions && d.Status == client.StatusPending
		if na.Type == client.ActionRedirect {
			view["RedirectURL"] = na.URL
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pages.ExecuteTemplate(w, "order", view)
}

// verifyMessages say each refusal of a transaction ID in the payer's words.
var verifyMessages = map[string]string{
	client.CodeInvalidRequest:          "Enter the transaction ID exactly as your wallet shows it (3 to 64 characters).",
	client.CodeAttemptInProgress:       "Another transaction ID is being checked: wait for its result.",
	client.CodeTransactionIDUsed:       "This transaction ID was already used for another payment.",
	client.CodeAttemptLimitReached:     "All 3 attempts were used: this payment can no longer be confirmed.",
	client.CodeDepositTerminal:         "This payment is closed: its time ran out or it is finished.",
	client.CodeVerificationUnavailable: "We could not check it right now: submit the same ID again in a moment.",
}

// submitTransaction sends the payer's transaction ID to payd. The answer
// only says it is being checked: the order ships on the status or webhook.
func (s *shop) submitTransaction(w http.ResponseWriter, r *http.Request) {
	o, ok := s.order(r.PathValue("id"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, err := s.payd.SubmitTransactionID(r.Context(), o.DepositID, r.FormValue("transaction_id"))
	var perr *client.Error
	if errors.As(err, &perr) {
		msg, ok := verifyMessages[perr.Code]
		if !ok {
			msg = "The transaction ID was not accepted (" + perr.Code + ")."
		}
		s.renderOrder(w, r, http.StatusConflict, msg)
		return
	} else if err != nil {
		s.logger.Error("submit transaction ID", "err", err)
		http.Error(w, "payments are unavailable, try again", http.StatusBadGateway)
		return
	}
	http.Redirect(w, r, "/orders/"+o.ID, http.StatusSeeOther)
}

// webhook receives payd's events: verified before anything is read, each
// event handled once, and an order fulfilled only on deposit.succeeded
// whose deposit is one of the shop's and reads succeeded.
func (s *shop) webhook(w http.ResponseWriter, r *http.Request) {
	if s.webhookSecret == "" {
		http.NotFound(w, r)
		return
	}
	e, err := client.VerifyWebhook(s.webhookSecret, r)
	if err != nil {
		http.Error(w, "invalid webhook", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	seen := s.events[e.ID]
	s.events[e.ID] = true
	s.mu.Unlock()
	if seen || e.Type != client.EventDepositSucceeded {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	d, err := e.Deposit()
	if err != nil {
		http.Error(w, "bad event", http.StatusBadRequest)
		return
	}
	if o, ok := s.order(d.MerchantID); ok && o.DepositID == d.ID && d.Succeeded() {
		s.fulfil(o.ID, "webhook")
	}
	w.WriteHeader(http.StatusNoContent)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
