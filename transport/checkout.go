package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/internal/taka"
)

// The hosted checkout is server-rendered HTML with inline CSS and one tiny
// countdown script, both allowed by a per-response CSP nonce: no other
// script, style, image, frame or form target can run on the page.
//
//go:embed web/checkout.html web/checkout.css web/countdown.js
var checkoutFiles embed.FS

var (
	checkoutTemplate = template.Must(template.ParseFS(checkoutFiles, "web/checkout.html"))
	checkoutCSS      = template.CSS(mustRead(checkoutFiles, "web/checkout.css"))
	checkoutScript   = template.JS(mustRead(checkoutFiles, "web/countdown.js"))
)

func mustRead(fs embed.FS, name string) string {
	b, err := fs.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// verifyingRefresh is how often, in seconds, the page reloads itself while
// a payment is being verified.
const verifyingRefresh = 2

// maxFormBytes bounds the body of a checkout form.
const maxFormBytes = 4 << 10

// prefillPattern is what a transaction ID carried in the page's query may
// look like to be put back into the form.
var prefillPattern = regexp.MustCompile(`^[A-Za-z0-9]{3,64}$`)

// checkoutView is what the checkout template renders.
type checkoutView struct {
	Lang, OtherLang, OtherLangName, LangSwitchURL string
	Nonce                                         string
	CSS                                           template.CSS
	Script                                        template.JS
	// Mount is the path the handler is served under (Config.Mount).
	Token, PageURL, Mount string
	NotFound              bool

	// Shop is the organization's name, Reference the merchant's order;
	// Logo and Support its logo URL and support contact ("" for none).
	Shop, Reference, Logo, Support string

	// Amount is the amount as a form sends it; AmountShown as the payer
	// reads it, grouped in lakhs (৳1,20,000.00 is written 1,20,000.00),
	// in ASCII digits in both languages as wallet apps show it.
	Amount, AmountShown                      string
	ChannelName, ChannelClass, OperationName string
	Status, StatusText                       string
	Instructions                             bool
	RecipientPhone, RecipientName            string
	QR                                       template.HTML

	// Open: the payer can still pay. Verifying: a payment is being
	// checked. Neither: the outcome is shown with the way back.
	Open, Verifying  bool
	Refresh          int
	RemainingSeconds int
	Remaining        string
	Deadline         string

	AttemptsRemaining, MaxAttempts int
	LastFailure                    string
	TxID                           string
	// AskPayer: a wallet checkout whose payer types the number they sent
	// from (the deposit has none of its own); Payer is what they typed.
	AskPayer bool
	Payer    string

	Sandbox    bool
	PayerPhone string

	ResultStatus, Outcome, PaidTxID, ReturnURL string

	// Error is a refusal in one plain sentence, shown beside ErrorField
	// ("" above the form); ErrorCode is the contract's code, for tools.
	Notice, Error, ErrorCode, ErrorField string
}

// T is the template's message lookup in the page's language.
func (v *checkoutView) T(key string, args ...any) string { return translate(v.Lang, key, args...) }

// ActionURL is where a form of the page posts.
func (v *checkoutView) ActionURL(action string) string {
	return v.Mount + "/checkout/" + url.PathEscape(v.Token) + "/" + action + "?lang=" + v.Lang
}

// checkoutPage serves GET /checkout/{token}: the hosted checkout of a
// redirect deposit or H2H redirect action, and the payer-facing page of an
// H2H display_instructions deposit, found by its unguessable token.
func (s *server) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var msg pageMessage
	if tx := q.Get("txid"); prefillPattern.MatchString(tx) {
		msg.txID = strings.ToUpper(tx)
		if q.Get("sandbox") == "1" {
			msg.notice = "sandbox_recorded"
		}
	}
	return s.renderCheckout(w, r, http.StatusOK, msg)
}

// pageMessage is what an action leaves for the page to show: a notice, an
// error, and the transaction ID to put back in the form.
type pageMessage struct {
	notice string
	err    *engine.Error
	txID   string
	payer  string
	amount string
}

// keepTyped is a form value put back into the form after a refusal:
// trimmed and bounded (the page escapes it).
func keepTyped(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 32 {
		v = v[:32]
	}
	return v
}

func (s *server) renderCheckout(w http.ResponseWriter, r *http.Request, status int, msg pageMessage) error {
	lang := checkoutLanguage(r)
	token := r.PathValue("token")
	v := &checkoutView{Lang: lang, CSS: checkoutCSS, Script: checkoutScript, Token: token, Mount: s.mount, MaxAttempts: engine.MaxAttempts}
	v.OtherLang = langBangla
	if lang == langBangla {
		v.OtherLang = langEnglish
	}
	v.OtherLangName = translate(v.OtherLang, "lang_name")
	v.LangSwitchURL = "?lang=" + v.OtherLang
	v.PageURL = s.mount + "/checkout/" + url.PathEscape(token) + "?lang=" + lang
	v.Nonce = newNonce()
	v.Sandbox = s.sandbox != nil

	d, err := s.depositByToken(r.Context(), token)
	var e *engine.Error
	switch {
	case errors.As(err, &e) && e.Code == engine.CodeNotFound:
		v.NotFound, status = true, http.StatusNotFound
	case err != nil:
		return err
	default:
		if err := s.fillCheckout(v, d, msg); err != nil {
			return err
		}
		v.Reference = d.MerchantID
		if g, ok := s.engine.(organizationGetter); ok {
			org, err := g.GetOrganization(r.Context(), d.OrganizationID)
			if err != nil {
				return err
			}
			v.Shop, v.Logo, v.Support = org.Name, org.LogoURL, org.SupportContact
		}
	}
	var page bytes.Buffer
	if err := checkoutTemplate.Execute(&page, v); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Vary", "Accept-Language")
	img := ""
	if u, err := url.Parse(v.Logo); v.Logo != "" && err == nil && u.Scheme == "https" && engine.LogoHost(u.Host) {
		img = "; img-src https://" + u.Host // the organization's logo, and nothing else
	}
	h.Set("Content-Security-Policy", fmt.Sprintf(
		"default-src 'none'; script-src 'nonce-%[1]s'; style-src 'nonce-%[1]s'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'%[2]s", v.Nonce, img))
	w.WriteHeader(status)
	_, err = page.WriteTo(w)
	return err
}

// organizationGetter is an Engine that names a deposit's organization on
// its checkout (the engine's does).
type organizationGetter interface {
	GetOrganization(ctx context.Context, id string) (*engine.Organization, error)
}

func (s *server) depositByToken(ctx context.Context, token string) (*engine.Deposit, error) {
	if token == "" || len(token) > maxIDLength {
		return nil, engine.Errorf(engine.CodeNotFound, "checkout not found")
	}
	return s.engine.GetDepositByCheckoutToken(ctx, token)
}

// fillCheckout puts what the page shows of d into v.
func (s *server) fillCheckout(v *checkoutView, d *engine.Deposit, msg pageMessage) error {
	now := s.engine.Now()
	lang := v.Lang
	v.Amount = engine.FormatAmount(d.Amount)
	v.AmountShown = taka.Plain(d.Amount, taka.English)
	v.ChannelName = channelNames[lang][d.Channel]
	if v.ChannelName == "" {
		v.ChannelName = d.PaymentMethod
	}
	v.ChannelClass = "ch-" + d.Channel
	v.Status = d.Status
	v.StatusText = translate(lang, "st_"+d.Status)
	// A wallet checkout (a personal wallet the payer sends money to) shows
	// its recipient as display_instructions do.
	v.Instructions = d.Action == engine.ActionDisplayInstructions || d.WalletCheckout()
	v.Sandbox = s.sandbox != nil
	v.PayerPhone = d.PayerPhone
	if msg.payer != "" {
		v.PayerPhone = msg.payer // what the payer typed, refused
	}
	v.TxID = msg.txID
	if v.Instructions {
		v.OperationName = translate(lang, "op_"+d.Operation)
		v.RecipientPhone, v.RecipientName = d.RecipientPhone, d.RecipientName
		v.AttemptsRemaining = d.AttemptsRemaining()
		if d.WalletCheckout() {
			v.AttemptsRemaining = engine.MaxAttempts - d.AttemptsUsed
			v.AskPayer, v.Payer = d.PayerPhone == "", msg.payer
		}
		if d.QRPayload != "" {
			svg, err := qrSVG(d.QRPayload)
			if err != nil {
				return fmt.Errorf("qr code of deposit %s: %w", d.ID, err)
			}
			v.QR = svg
		}
	}
	if d.FailureCode != "" && d.Status != engine.StatusSucceeded {
		failure := "fc_" + d.FailureCode
		if v.AskPayer && d.FailureCode == engine.FailurePayerMismatch {
			failure = "fc_payer_mismatch_typed"
		}
		v.LastFailure = translate(lang, "last_failure", translate(lang, failure))
	}

	v.Open = d.Status == engine.StatusPending && d.Actionable(now)
	v.Verifying = d.Status == engine.StatusProcessing
	switch {
	case v.Open:
		left := d.ExpiresAt.Sub(now).Round(time.Second)
		v.RemainingSeconds = int(left / time.Second)
		v.Remaining = formatRemaining(left)
		v.Deadline = d.ExpiresAt.In(engine.Dhaka).Format("15:04")
	case v.Verifying:
		v.Refresh = verifyingRefresh
	default:
		// Terminal, or past the deadline with nothing running: the expiry
		// worker makes it expired, and the merchant learns that.
		v.ResultStatus = d.Status
		if !d.IsTerminal() {
			v.ResultStatus = engine.StatusExpired
		}
		switch v.ResultStatus {
		case engine.StatusSucceeded, engine.StatusFailed, engine.StatusCancelled, engine.StatusExpired:
			v.Outcome = translate(lang, "out_"+v.ResultStatus)
		default:
			v.Outcome = translate(lang, "out_closed")
		}
		if v.ResultStatus == engine.StatusSucceeded {
			v.PaidTxID = d.ProviderTransactionID
		}
		v.ReturnURL = returnURL(d.RedirectURL, d.ID, v.ResultStatus)
	}

	if msg.notice != "" && v.Open {
		v.Notice = translate(lang, msg.notice, msg.txID)
	}
	if e := msg.err; e != nil {
		v.ErrorCode = e.Code
		v.Error, v.ErrorField = checkoutErrorText(lang, e)
	}
	return nil
}

// formatRemaining renders a duration as m:ss or h:mm:ss, as the countdown
// script does.
func formatRemaining(d time.Duration) string {
	s := max(0, int(d/time.Second))
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// returnURL is the merchant's redirect_url with the outcome appended as
// deposit_id and status. The merchant's own query and fragment are kept as
// they were. Arriving there is no proof of payment: the merchant reads the
// deposit's status (or a verified webhook) before fulfilling.
func returnURL(redirectURL, depositID, status string) string {
	u, err := url.Parse(redirectURL)
	if err != nil {
		return redirectURL // validated at creation; never happens
	}
	add := "deposit_id=" + url.QueryEscape(depositID) + "&status=" + url.QueryEscape(status)
	if u.RawQuery == "" {
		u.RawQuery = add
	} else {
		u.RawQuery += "&" + add
	}
	return u.String()
}

// checkoutErrorText is a refused action in the payer's words, and the
// field it is about ("" for none).
func checkoutErrorText(lang string, e *engine.Error) (text, field string) {
	switch e.Code {
	case engine.CodeAttemptInProgress, engine.CodeTransactionIDUsed, engine.CodeDepositTerminal, engine.CodeVerificationUnavailable:
		return translate(lang, "err_"+e.Code), ""
	case engine.CodeAttemptLimitReached:
		return translate(lang, "err_attempt_limit_reached", engine.MaxAttempts), ""
	case engine.CodeInvalidRequest:
		field, _, _ := strings.Cut(e.Message, ":")
		switch field {
		case "provider_transaction_id", "transaction_id":
			return translate(lang, "err_invalid_txid"), "transaction_id"
		case "payer_phone":
			return translate(lang, "err_payer_phone"), "payer_phone"
		case "amount":
			return translate(lang, "err_amount"), "amount"
		}
		return translate(lang, "err_invalid_request"), ""
	}
	return translate(lang, "err_other"), ""
}

func newNonce() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// checkoutVerify serves POST /checkout/{token}/verify: the transaction ID
// the payer typed for a display_instructions deposit, submitted through
// the same rules and attempts as POST /v1/deposits/{id}/verify; or, on a
// wallet checkout, the number they sent money from and the ID of the send.
func (s *server) checkoutVerify(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	if err := parseCheckoutForm(w, r); err != nil {
		return err
	}
	txID := r.PostForm.Get("transaction_id")
	d, err := s.depositByToken(r.Context(), token)
	if err != nil {
		return s.afterCheckoutAction(w, r, err, pageMessage{})
	}
	msg := pageMessage{}
	if d.WalletCheckout() {
		payer := strings.TrimSpace(r.PostForm.Get("payer_phone"))
		_, err = s.engine.SubmitWalletCheckout(r.Context(), engine.WalletCheckoutParams{Token: token, PayerPhone: payer, TransactionID: txID})
		if err != nil && payerPattern.MatchString(payer) {
			msg.payer = payer
		}
	} else {
		_, err = s.engine.SubmitTransactionIDByToken(r.Context(), token, txID)
	}
	if err != nil && prefillPattern.MatchString(strings.TrimSpace(txID)) {
		msg.txID = strings.ToUpper(strings.TrimSpace(txID))
	}
	return s.afterCheckoutAction(w, r, err, msg)
}

// payerPattern is what a typed payer number may look like to be put back
// into the form after a refusal.
var payerPattern = regexp.MustCompile(`^\+?[0-9]{11,13}$`)

// checkoutPay serves POST /checkout/{token}/pay in sandbox mode, where the
// tester plays the payer. For a redirect action it records the payment the
// provider's checkout would take and queues its verification through the
// same attempt path as an H2H transaction ID. For display_instructions it
// records the wallet payment the payer would make (to the recipient shown,
// from the phone entered) and puts its transaction ID in the form, for the
// payer to submit as they would a real one.
func (s *server) checkoutPay(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	if err := parseCheckoutForm(w, r); err != nil {
		return err
	}
	d, err := s.depositByToken(r.Context(), token)
	if err != nil {
		return s.afterCheckoutAction(w, r, err, pageMessage{})
	}
	// What the payer typed stays in the form if it is refused.
	typed := pageMessage{payer: keepTyped(r.PostForm.Get("payer_phone")), amount: keepTyped(r.PostForm.Get("amount"))}
	if !d.Actionable(s.engine.Now()) {
		return s.afterCheckoutAction(w, r, engine.Errorf(engine.CodeDepositTerminal, "deposit: it is %s", d.Status), typed)
	}
	outcome := r.PostForm.Get("outcome")
	if outcome != engine.TransactionFailed {
		outcome = engine.TransactionCompleted
	}
	txID := "SBX" + strings.ToUpper(engine.NewID("", s.engine.Now())[16:])
	payment := SandboxPayment{
		OrganizationID: d.OrganizationID, Channel: d.Channel, TransactionID: txID, PayerPhone: strings.TrimSpace(r.PostForm.Get("payer_phone")),
		Amount: engine.FormatAmount(d.Amount), Status: outcome, Type: engine.TransactionPayment,
	}
	if d.Action == engine.ActionDisplayInstructions {
		payment.RecipientPhone = d.RecipientPhone
		if d.Operation == engine.OperationCashOut {
			payment.Type = engine.TransactionCashOut
		}
		if a := strings.TrimSpace(r.PostForm.Get("amount")); a != "" {
			payment.Amount = a
		}
		if _, err := s.sandbox.RecordPayment(r.Context(), payment); err != nil {
			return s.afterCheckoutAction(w, r, err, typed)
		}
		return s.redirectToPage(w, r, "&sandbox=1&txid="+txID)
	}
	_, err = s.sandbox.RecordPayment(r.Context(), payment)
	if err == nil {
		_, err = s.engine.SubmitCheckoutPayment(r.Context(), token, txID)
	}
	return s.afterCheckoutAction(w, r, err, typed)
}

// checkoutCancel ends a redirect deposit as cancelled, at the payer's
// request (sandbox mode).
func (s *server) checkoutCancel(w http.ResponseWriter, r *http.Request) error {
	_, err := s.engine.CancelCheckout(r.Context(), r.PathValue("token"))
	return s.afterCheckoutAction(w, r, err, pageMessage{})
}

func parseCheckoutForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return engine.Invalid("body", "must be a form of at most 4 KiB")
	}
	return nil
}

// afterCheckoutAction sends the browser back to the page after an action
// (POST-redirect-GET), or shows the page with the refusal in the payer's
// words and the contract's error code, under the code's HTTP status.
func (s *server) afterCheckoutAction(w http.ResponseWriter, r *http.Request, err error, msg pageMessage) error {
	var e *engine.Error
	switch {
	case err == nil:
		return s.redirectToPage(w, r, "")
	case errors.As(err, &e) && e.Code == engine.CodeNotFound:
		return s.renderCheckout(w, r, http.StatusNotFound, pageMessage{})
	case errors.As(err, &e) && e.Code != engine.CodeInternal && statusByCode[e.Code] != 0:
		msg.err = e
		return s.renderCheckout(w, r, statusByCode[e.Code], msg)
	}
	return err
}

// redirectToPage answers 303 to the checkout page in the page's language,
// with extra query parameters (starting with "&") when given.
func (s *server) redirectToPage(w http.ResponseWriter, r *http.Request, extra string) error {
	w.Header().Set("Location", s.mount+"/checkout/"+url.PathEscape(r.PathValue("token"))+"?lang="+checkoutLanguage(r)+extra)
	w.WriteHeader(http.StatusSeeOther)
	return nil
}
