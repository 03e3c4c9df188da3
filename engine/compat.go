package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The UddoktaPay-compatible checkout: merchant plugins written for
// UddoktaPay create an invoice with a compat key and send the payer to its
// payment URL. An invoice is a payment link whose token is the invoice's
// ID, so the payer's page, its one open checkout at a time and its
// payment are the link's; each checkout is an ordinary redirect deposit.
// What the plugin sent alongside (payer, metadata, where to return, the
// IPN's URL) is kept in a CompatInvoice.

// compatKeyPrefix marks a compat key, so that it is never tried as an
// API key (and an API key never as a compat key).
const compatKeyPrefix = "payd_up_"

// Audit actions of the compat key.
const (
	AuditCompatEnable  = "compat.enable"
	AuditCompatDisable = "compat.disable"
)

// Return types of an invoice: how the payer's browser reaches redirect_url.
const (
	CompatReturnGET  = "GET"
	CompatReturnPOST = "POST"
)

// Statuses of an invoice as verify-payment reports them.
const (
	CompatCompleted = "COMPLETED"
	CompatPending   = "PENDING"
	CompatError     = "ERROR"
)

// Bounds of an invoice's payer fields.
const (
	maxCompatName  = 200
	maxCompatEmail = 254
)

// CompatKey is an organization's key of the compat endpoints: only its
// SHA-256 is kept, as for API keys.
type CompatKey struct {
	OrganizationID string
	Hash           []byte
	// Sealed is the key sealed under the master key: the IPN carries it.
	Sealed    []byte
	Hint      string
	CreatedAt time.Time
}

// CompatInvoice is what a plugin sent with an invoice; LinkID is the
// payment link that is the invoice.
type CompatInvoice struct {
	LinkID         string
	OrganizationID string
	FullName       string
	Email          string
	Metadata       []byte
	RedirectURL    string
	ReturnType     string
	CancelURL      string
	WebhookURL     string
	CreatedAt      time.Time
}

// EnableCompat issues the organization's compat key, replacing any it had:
// the key is returned once and only its hash is stored.
func (e *Engine) EnableCompat(ctx context.Context, orgID string) (string, error) {
	now := e.now()
	key := compatKeyPrefix + RandomToken(32)
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		k := &CompatKey{OrganizationID: orgID, Hash: hashAPIKey(key), Sealed: e.keyring.Seal([]byte(key), compatKeyContext(orgID)),
			Hint: key[len(key)-4:], CreatedAt: now}
		if err := tx.Console().PutCompatKey(ctx, k); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditCompatEnable, orgID, orgID, map[string]string{"hint": k.Hint})
	})
	if err != nil {
		return "", err
	}
	return key, nil
}

// DisableCompat revokes the organization's compat key; not_found when it
// has none.
func (e *Engine) DisableCompat(ctx context.Context, orgID string) error {
	return e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if err := tx.Console().DeleteCompatKey(ctx, orgID); err != nil {
			return notFound(err, "compat key")
		}
		return e.audit(ctx, tx, AuditCompatDisable, orgID, orgID, nil)
	})
}

// CompatKeyHint returns the last four characters of the organization's
// compat key, "" when it has none.
func (e *Engine) CompatKeyHint(ctx context.Context, orgID string) (string, error) {
	var hint string
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		k, err := tx.Console().GetCompatKey(ctx, orgID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err == nil {
			hint = k.Hint
		}
		return err
	})
	return hint, err
}

// AuthenticateCompat returns the organization of a compat key, or
// unauthorized. It is one read by the key's unique hash.
func (e *Engine) AuthenticateCompat(ctx context.Context, key string) (string, error) {
	if !strings.HasPrefix(key, compatKeyPrefix) || len(key) > 128 {
		return "", errInvalidAPIKey
	}
	hash := sha256.Sum256([]byte(key))
	var k *CompatKey
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		k, err = tx.Console().GetCompatKeyByHash(ctx, hash[:])
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return "", errInvalidAPIKey
	}
	if err != nil {
		return "", err
	}
	return k.OrganizationID, nil
}

// CompatCheckoutParams are a checkout-v2 request of an organization.
type CompatCheckoutParams struct {
	OrganizationID string
	FullName       string
	Email          string
	// Amount is BDT as payd writes money: at most two decimal places.
	Amount      string
	Metadata    []byte
	RedirectURL string
	ReturnType  string
	CancelURL   string
	WebhookURL  string
}

// CompatRange is the amounts some redirect method takes: an invoice's
// amount must be payable by at least one of the methods its page offers.
func CompatRange() AmountRange {
	var r AmountRange
	for _, name := range DepositMethods(CheckoutRedirect) {
		m, _ := LookupMethod(name)
		mr := m.depositRange(CheckoutRedirect)
		if !r.Offered() || mr.Min.LessThan(r.Min) {
			r.Min = mr.Min
		}
		if mr.Max.GreaterThan(r.Max) {
			r.Max = mr.Max
		}
	}
	return r
}

// RedirectMethodsFor returns the redirect methods whose range takes
// amount: those a payment page offers for it.
func RedirectMethodsFor(amount decimal.Decimal) []string {
	var out []string
	for _, name := range DepositMethods(CheckoutRedirect) {
		if m, _ := LookupMethod(name); m.depositRange(CheckoutRedirect).contains(amount) {
			out = append(out, name)
		}
	}
	return out
}

func (p CompatCheckoutParams) validate() (decimal.Decimal, *CompatInvoice, error) {
	a, err := ParseAmount("amount", p.Amount)
	if err != nil {
		return a, nil, err
	}
	if err := CompatRange().check("amount", a, "the payment methods"); err != nil {
		return a, nil, err
	}
	inv := &CompatInvoice{
		OrganizationID: p.OrganizationID, FullName: strings.TrimSpace(p.FullName), Email: strings.TrimSpace(p.Email),
		RedirectURL: p.RedirectURL, ReturnType: p.ReturnType, CancelURL: p.CancelURL, WebhookURL: p.WebhookURL,
	}
	switch {
	case len(inv.FullName) > maxCompatName:
		return a, nil, Invalid("full_name", "must be at most 200 bytes")
	case len(inv.Email) > maxCompatEmail:
		return a, nil, Invalid("email", "must be at most 254 bytes")
	}
	if err := checkText("full_name", inv.FullName); err != nil {
		return a, nil, err
	}
	if err := checkText("email", inv.Email); err != nil {
		return a, nil, err
	}
	switch strings.ToUpper(inv.ReturnType) {
	case "", CompatReturnGET:
		inv.ReturnType = CompatReturnGET
	case CompatReturnPOST:
		inv.ReturnType = CompatReturnPOST
	default:
		return a, nil, Invalid("return_type", "must be GET or POST")
	}
	if err := checkAbsoluteURL("redirect_url", inv.RedirectURL); err != nil {
		return a, nil, err
	}
	if inv.CancelURL == "" {
		inv.CancelURL = inv.RedirectURL
	} else if err := checkAbsoluteURL("cancel_url", inv.CancelURL); err != nil {
		return a, nil, err
	}
	if inv.WebhookURL != "" {
		// As a webhook endpoint's URL: where it may connect is checked at
		// each post (the private-address rule), credentials never ride in it.
		if err := checkAbsoluteURL("webhook_url", inv.WebhookURL); err != nil {
			return a, nil, err
		}
		if u, _ := url.Parse(inv.WebhookURL); u.User != nil {
			return a, nil, Invalid("webhook_url", "must not carry credentials")
		}
	}
	if inv.Metadata, err = normalizeMetadata(p.Metadata); err != nil {
		return a, nil, err
	}
	return a, inv, nil
}

// CreateCompatInvoice creates an invoice: its payment link (whose token is
// returned as the invoice's ID) and what the plugin sent, in one
// transaction.
func (e *Engine) CreateCompatInvoice(ctx context.Context, p CompatCheckoutParams) (string, error) {
	a, inv, err := p.validate()
	if err != nil {
		return "", err
	}
	now := e.now()
	l := &PaymentLink{
		ID: NewID(PrefixPaymentLink, now), OrganizationID: p.OrganizationID, Amount: a, Token: RandomToken(18),
		Note: inv.FullName, CreatedBy: "compat", CreatedAt: now, UpdatedAt: now,
	}
	inv.LinkID, inv.CreatedAt = l.ID, now
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if err := tx.Console().CreatePaymentLink(ctx, l); err != nil {
			return err
		}
		return tx.Console().CreateCompatInvoice(ctx, inv)
	})
	if err != nil {
		return "", err
	}
	return l.Token, nil
}

// CompatPayment is an invoice as verify-payment reports it.
type CompatPayment struct {
	Invoice   *CompatInvoice
	InvoiceID string
	Amount    decimal.Decimal
	Fee       decimal.Decimal
	// Status is CompatCompleted, CompatPending or CompatError.
	Status        string
	PaymentMethod string
	SenderNumber  string
	TransactionID string
	// Date is when the invoice was paid (created while it is not).
	Date time.Time
}

// GetCompatPayment returns an organization's invoice by its ID; not_found
// for an unknown one and for another organization's.
func (e *Engine) GetCompatPayment(ctx context.Context, orgID, invoiceID string) (*CompatPayment, error) {
	errNone := Errorf(CodeNotFound, "invoice not found")
	if invoiceID == "" || len(invoiceID) > 64 {
		return nil, errNone
	}
	var p CompatPayment
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		l, err := tx.Console().GetPaymentLinkByToken(ctx, invoiceID)
		if errors.Is(err, ErrNotFound) || (err == nil && l.OrganizationID != orgID) {
			return errNone
		}
		if err != nil {
			return err
		}
		if p.Invoice, err = tx.Console().GetCompatInvoice(ctx, orgID, l.ID); errors.Is(err, ErrNotFound) {
			return errNone // an operator's payment link, not an invoice
		} else if err != nil {
			return err
		}
		p.InvoiceID, p.Amount, p.Status, p.Date = invoiceID, l.Amount, CompatPending, p.Invoice.CreatedAt
		depositID := l.PaidDepositID
		if depositID == "" {
			depositID = l.DepositID
		}
		if depositID == "" {
			return nil
		}
		d, err := tx.GetDeposit(ctx, orgID, depositID)
		if err != nil {
			return err
		}
		p.PaymentMethod = d.Channel
		if p.PaymentMethod == "" {
			p.PaymentMethod = d.PaymentMethod
		}
		switch {
		case l.PaidDepositID != "":
			p.Status = CompatCompleted
		case d.IsTerminal():
			p.Status = CompatError
			return nil
		default:
			return nil
		}
		org, err := tx.GetOrganization(ctx, orgID)
		if err != nil {
			return err
		}
		p.Fee = decimal.Min(org.DepositFee(d.PaymentMethod).Of(d.Amount), d.Amount)
		p.Date = d.UpdatedAt
		attempts, err := tx.ListAttempts(ctx, d.ID)
		if err != nil {
			return err
		}
		p.SenderNumber = d.PayerPhone
		for _, a := range attempts {
			if a.Status == AttemptSucceeded {
				p.TransactionID = a.TransactionID
				if a.PayerPhone != "" {
					p.SenderNumber = a.PayerPhone
				}
			}
		}
		if p.TransactionID == "" && d.ProviderTransactionID != "" {
			p.TransactionID = d.ProviderTransactionID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// GetCompatInvoiceByLink returns the invoice that a payment link is, or
// nil when the link is an operator's own.
func (e *Engine) GetCompatInvoiceByLink(ctx context.Context, orgID, linkID string) (*CompatInvoice, error) {
	var inv *CompatInvoice
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		inv, err = tx.Console().GetCompatInvoice(ctx, orgID, linkID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	return inv, err
}

// CompatInvoiceByToken returns the invoice whose ID (its link's token) is
// token, with its link's state; not_found when token is no invoice's.
func (e *Engine) CompatInvoiceByToken(ctx context.Context, token string) (*PaymentLinkState, *CompatInvoice, error) {
	s, err := e.GetPaymentLinkByToken(ctx, token)
	if err != nil {
		return nil, nil, err
	}
	inv, err := e.GetCompatInvoiceByLink(ctx, s.Link.OrganizationID, s.Link.ID)
	if err == nil && inv == nil {
		err = Errorf(CodeNotFound, "invoice not found")
	}
	if err != nil {
		return nil, nil, err
	}
	return s, inv, nil
}

// CancelCompatInvoice is the payer's cancel of an invoice: its open
// checkout, if any, ends as a link's does when another method is chosen
// (one being verified is refused, and a paid invoice cannot be
// cancelled). The invoice may still be paid later.
func (e *Engine) CancelCompatInvoice(ctx context.Context, token string) (*CompatInvoice, error) {
	s, inv, err := e.CompatInvoiceByToken(ctx, token)
	if err != nil {
		return nil, err
	}
	if s.Paid() {
		return nil, errLinkPaid()
	}
	if d := s.Deposit; d != nil && !d.IsTerminal() {
		if err := e.endLinkCheckout(ctx, d.ID); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// CompatReturnURL is u with invoice_id added to its query, as UddoktaPay's
// plugins read it on their redirect and cancel pages.
func CompatReturnURL(u, invoiceID string) string {
	add := "invoice_id=" + url.QueryEscape(invoiceID)
	base, fragment, _ := strings.Cut(u, "#")
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
		if strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&") {
			sep = ""
		}
	}
	out := base + sep + add
	if fragment != "" {
		out += "#" + fragment
	}
	return out
}

func compatKeyContext(orgID string) string { return "compat_key:" + orgID }

// compatPaymentView is the verify-payment answer, and the IPN's body.
type compatPaymentView struct {
	FullName      string          `json:"full_name"`
	Email         string          `json:"email"`
	Amount        string          `json:"amount"`
	Fee           string          `json:"fee"`
	ChargedAmount string          `json:"charged_amount"`
	InvoiceID     string          `json:"invoice_id"`
	Metadata      json.RawMessage `json:"metadata"`
	PaymentMethod string          `json:"payment_method"`
	SenderNumber  string          `json:"sender_number"`
	TransactionID string          `json:"transaction_id"`
	Date          string          `json:"date"`
	Status        string          `json:"status"`
}

// dhaka is Bangladesh's time (UTC+6, no daylight saving), in which
// verify-payment writes dates.
var dhaka = time.FixedZone("Asia/Dhaka", 6*60*60)

// JSON is p as verify-payment answers it (and the IPN posts it): amounts
// as two-decimal strings, the date as "YYYY-MM-DD HH:MM:SS" in Dhaka time.
func (p *CompatPayment) JSON() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(compatPaymentView{
		FullName: p.Invoice.FullName, Email: p.Invoice.Email, Amount: FormatAmount(p.Amount),
		Fee: FormatAmount(p.Fee), ChargedAmount: FormatAmount(p.Amount), InvoiceID: p.InvoiceID,
		Metadata: json.RawMessage(p.Invoice.Metadata), PaymentMethod: p.PaymentMethod, SenderNumber: p.SenderNumber,
		TransactionID: p.TransactionID, Date: p.Date.In(dhaka).Format("2006-01-02 15:04:05"), Status: p.Status,
	}) // only strings and compacted JSON: it cannot fail
	return buf.Bytes()
}

// The IPN: when an invoice with a webhook_url is paid, an IPN row is
// written in the payment's transaction, and the worker posts the
// verify-payment body to the URL with the compat key in the
// RT-UDDOKTAPAY-API-KEY header, through the webhooks' client (its
// private-address rule) and on their retry schedule.

// CompatIPN is an invoice's IPN to post.
type CompatIPN struct {
	LinkID         string
	OrganizationID string
	// Status is DeliveryPending, DeliveryDelivered or DeliveryExhausted.
	Status         string
	Attempts       int
	NextAttemptAt  time.Time
	LeaseOwner     string
	LeasedUntil    time.Time
	LastStatusCode int
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// IPNPoster is a WebhookClient that also posts IPNs: a JSON body with the
// given headers, under the same destination rules.
type IPNPoster interface {
	PostIPN(ctx context.Context, url string, header map[string]string, body []byte) WebhookResult
}

// compatPaid queues the IPN of the invoice that link l is, if it is one
// with a webhook_url, in the transaction that pays it.
func (e *Engine) compatPaid(ctx context.Context, tx Tx, l *PaymentLink, now time.Time) error {
	inv, err := tx.Console().GetCompatInvoice(ctx, l.OrganizationID, l.ID)
	if errors.Is(err, ErrNotFound) || (err == nil && inv.WebhookURL == "") {
		return nil
	}
	if err != nil {
		return err
	}
	epoch := time.Unix(0, 0).UTC()
	err = tx.Console().CreateCompatIPN(ctx, &CompatIPN{
		LinkID: l.ID, OrganizationID: l.OrganizationID, Status: DeliveryPending, NextAttemptAt: now,
		LeasedUntil: epoch, CreatedAt: now, UpdatedAt: now,
	})
	if errors.Is(err, ErrDuplicate) {
		return nil // one IPN per invoice
	}
	return err
}

// DeliverCompatIPNs claims the due IPNs and posts them, waiting until
// every post has finished. Returns how many it claimed.
func (e *Engine) DeliverCompatIPNs(ctx context.Context) (int, error) {
	n, err := e.startCompatIPNs(ctx)
	e.deliveries.wg.Wait()
	return n, err
}

// startCompatIPNs claims the due IPNs and posts each in a goroutine of its
// own (counted with the webhooks' posts, which shutdown waits for), so a
// slow merchant never holds up the worker.
func (e *Engine) startCompatIPNs(ctx context.Context) (int, error) {
	poster, ok := e.cfg.Webhooks.(IPNPoster)
	if !ok {
		return 0, nil
	}
	now := e.now()
	var claimed []*CompatIPN
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		claimed, err = tx.Console().ClaimDueCompatIPNs(ctx, ClaimParams{Now: now, Owner: e.workerID, LeasedUntil: now.Add(e.cfg.LeaseDuration), Limit: e.cfg.WebhookConcurrency})
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, ipn := range claimed {
		e.deliveries.wg.Add(1)
		go func() {
			defer e.deliveries.wg.Done()
			if err := e.postIPN(ctx, poster, ipn); err != nil && ctx.Err() == nil && !e.noteUnavailable(ctx, err) {
				e.cfg.Logger.ErrorContext(ctx, "compat IPN failed", "link", ipn.LinkID, "err", err)
			}
		}()
	}
	return len(claimed), nil
}

func (e *Engine) postIPN(ctx context.Context, poster IPNPoster, ipn *CompatIPN) error {
	var inv *CompatInvoice
	var key *CompatKey
	var token string
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if inv, err = tx.Console().GetCompatInvoice(ctx, ipn.OrganizationID, ipn.LinkID); err != nil {
			return err
		}
		l, err := tx.Console().GetPaymentLink(ctx, ipn.OrganizationID, ipn.LinkID)
		if err != nil {
			return err
		}
		token = l.Token
		key, err = tx.Console().GetCompatKey(ctx, ipn.OrganizationID)
		if errors.Is(err, ErrNotFound) {
			key, err = nil, nil
		}
		return err
	})
	if err != nil {
		return err
	}
	var res WebhookResult
	if key == nil {
		res.Err = errors.New("the compat key is disabled: no IPN is sent without it")
	} else {
		plain, err := e.keyring.Open(key.Sealed, compatKeyContext(ipn.OrganizationID))
		if err != nil {
			return err
		}
		p, err := e.GetCompatPayment(ctx, ipn.OrganizationID, token)
		if err != nil {
			return err
		}
		res = poster.PostIPN(ctx, inv.WebhookURL, map[string]string{"RT-UDDOKTAPAY-API-KEY": string(plain)}, p.JSON())
		if ctx.Err() != nil && res.StatusCode == 0 {
			return nil // cut off by shutdown: posted again once the lease runs out
		}
	}
	return e.inTx(context.WithoutCancel(ctx), func(ctx context.Context, tx Tx) error {
		cur, err := tx.Console().LockCompatIPN(ctx, ipn.LinkID)
		if err != nil {
			return err
		}
		if cur.Status != DeliveryPending || cur.LeaseOwner != e.workerID || !cur.LeasedUntil.Equal(ipn.LeasedUntil) {
			return nil
		}
		now := e.now()
		failure := describeWebhookFailure(res, inv.WebhookURL)
		cur.Attempts++
		cur.LastStatusCode, cur.LastError = res.StatusCode, failure
		cur.LeaseOwner, cur.LeasedUntil, cur.UpdatedAt = "", time.Unix(0, 0).UTC(), now
		switch {
		case failure == "":
			cur.Status = DeliveryDelivered
		case key == nil || cur.Attempts > len(webhookRetrySchedule):
			cur.Status = DeliveryExhausted
		default:
			cur.NextAttemptAt = now.Add(nextWebhookDelay(cur.Attempts, res.RetryAfter))
		}
		return tx.Console().UpdateCompatIPN(ctx, cur)
	})
}

// GetCompatIPN returns the IPN of an invoice (by its ID), for operators
// and tests; not_found when none was queued.
func (e *Engine) GetCompatIPN(ctx context.Context, orgID, invoiceID string) (*CompatIPN, error) {
	var ipn *CompatIPN
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		l, err := tx.Console().GetPaymentLinkByToken(ctx, invoiceID)
		if err != nil || l.OrganizationID != orgID {
			return Errorf(CodeNotFound, "IPN not found")
		}
		ipn, err = tx.Console().GetCompatIPN(ctx, l.ID)
		return notFound(err, "IPN")
	})
	return ipn, err
}

// ListCompatIPNs returns up to limit IPNs of an organization, newest
// first, for the console.
func (e *Engine) ListCompatIPNs(ctx context.Context, orgID string, limit int) ([]*CompatIPN, error) {
	var out []*CompatIPN
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.Console().ListCompatIPNs(ctx, orgID, limit)
		return err
	})
	return out, err
}

// RedeliverCompatIPN queues again the IPN of the organization's invoice
// whose link is linkID, with a fresh retry schedule, audited: an operator's
// answer to a merchant whose site was down past the last retry. A pending
// IPN is already queued and is left alone (no second post while one is in
// flight); another organization's is not_found.
func (e *Engine) RedeliverCompatIPN(ctx context.Context, orgID, linkID string) error {
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		ipn, err := tx.Console().LockCompatIPN(ctx, linkID)
		if err != nil || ipn.OrganizationID != orgID {
			return Errorf(CodeNotFound, "IPN not found")
		}
		if ipn.Status == DeliveryPending {
			return nil
		}
		now := e.now()
		ipn.Status, ipn.Attempts, ipn.NextAttemptAt = DeliveryPending, 0, now
		ipn.LeaseOwner, ipn.LeasedUntil, ipn.UpdatedAt = "", time.Unix(0, 0).UTC(), now
		if err := tx.Console().UpdateCompatIPN(ctx, ipn); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditCompatIPNRedeliver, orgID, linkID, nil)
	})
	if err == nil {
		e.wakeWorkers()
	}
	return err
}
