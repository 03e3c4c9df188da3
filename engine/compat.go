package engine

import (
	"context"
	"crypto/sha256"
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
	Hint           string
	CreatedAt      time.Time
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
		k := &CompatKey{OrganizationID: orgID, Hash: hashAPIKey(key), Hint: key[len(key)-4:], CreatedAt: now}
		if err := tx.PutCompatKey(ctx, k); err != nil {
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
		if err := tx.DeleteCompatKey(ctx, orgID); err != nil {
			return notFound(err, "compat key")
		}
		return e.audit(ctx, tx, AuditCompatDisable, orgID, orgID, nil)
	})
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
		k, err = tx.GetCompatKeyByHash(ctx, hash[:])
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
		if err := checkAbsoluteURL("webhook_url", inv.WebhookURL); err != nil {
			return a, nil, err
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
		if err := tx.CreatePaymentLink(ctx, l); err != nil {
			return err
		}
		return tx.CreateCompatInvoice(ctx, inv)
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
		l, err := tx.GetPaymentLinkByToken(ctx, invoiceID)
		if errors.Is(err, ErrNotFound) || (err == nil && l.OrganizationID != orgID) {
			return errNone
		}
		if err != nil {
			return err
		}
		if p.Invoice, err = tx.GetCompatInvoice(ctx, orgID, l.ID); errors.Is(err, ErrNotFound) {
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
		inv, err = tx.GetCompatInvoice(ctx, orgID, linkID)
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
