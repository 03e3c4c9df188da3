package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Payment links: an operator asks for an amount with a note, and the payer
// who opens the link pays it through the hosted checkout, for merchants who
// take payments without an integration. Each checkout a link opens is a
// redirect deposit with the merchant_id "<link ID>-<n>", so a payer who
// opens the link twice at once gets the same deposit (the create is
// idempotent), and the deposit carries the link like any other.

// PrefixPaymentLink is the prefix of payment link IDs.
const PrefixPaymentLink = "plink_"

// AuditPaymentLinkCreate is recorded when an operator creates a link.
const AuditPaymentLinkCreate = "payment_link.create"

// maxLinkNoteLength bounds a payment link's note.
const maxLinkNoteLength = 200

// PaymentLink is an amount to be paid through the hosted checkout by
// whoever opens its URL (its unguessable Token).
type PaymentLink struct {
	ID             string
	OrganizationID string
	Amount         decimal.Decimal
	Note           string
	Token          string
	// DepositID is the deposit of the link's latest checkout ("" before the
	// first); Deposits counts the checkouts it opened.
	DepositID string
	Deposits  int
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CreatePaymentLink creates a link for amount (BDT) with a note the payer
// reads.
func (e *Engine) CreatePaymentLink(ctx context.Context, orgID, amount, note string) (*PaymentLink, error) {
	a, err := ParseAmount("amount", amount)
	if err != nil {
		return nil, err
	}
	if !a.IsPositive() {
		return nil, Invalid("amount", "must be positive")
	}
	note = strings.TrimSpace(note)
	if len(note) > maxLinkNoteLength {
		return nil, Invalid("note", fmt.Sprintf("must be at most %d bytes", maxLinkNoteLength))
	}
	if err := checkText("note", note); err != nil {
		return nil, err
	}
	now := e.now()
	l := &PaymentLink{
		ID: NewID(PrefixPaymentLink, now), OrganizationID: orgID, Amount: a, Note: note, Token: RandomToken(18),
		CreatedBy: ActorFrom(ctx), CreatedAt: now, UpdatedAt: now,
	}
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		if err := tx.CreatePaymentLink(ctx, l); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditPaymentLinkCreate, orgID, l.ID, map[string]string{"amount": FormatAmount(a), "note": note})
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ListPaymentLinks returns an organization's links, newest first, at most
// limit (zero: 100).
func (e *Engine) ListPaymentLinks(ctx context.Context, orgID string, limit int) ([]*PaymentLink, error) {
	if limit <= 0 {
		limit = 100
	}
	var out []*PaymentLink
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.ListPaymentLinks(ctx, orgID, limit)
		return err
	})
	return out, err
}

// PaymentLinkState is a link as its payer sees it, with its latest deposit.
type PaymentLinkState struct {
	Link *PaymentLink
	// Deposit is the latest checkout's deposit; nil before the first.
	Deposit *Deposit
}

// Paid reports whether the link's latest checkout succeeded.
func (s *PaymentLinkState) Paid() bool {
	return s.Deposit != nil && s.Deposit.Status == StatusSucceeded
}

// GetPaymentLinkByToken returns the link of token with its latest deposit,
// or not_found.
func (e *Engine) GetPaymentLinkByToken(ctx context.Context, token string) (*PaymentLinkState, error) {
	if token == "" || len(token) > 64 {
		return nil, Errorf(CodeNotFound, "payment link not found")
	}
	var s PaymentLinkState
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if s.Link, err = tx.GetPaymentLinkByToken(ctx, token); err != nil {
			return notFound(err, "payment link")
		}
		if s.Link.DepositID != "" {
			s.Deposit, err = tx.GetDeposit(ctx, s.Link.OrganizationID, s.Link.DepositID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// PayPaymentLinkParams open a link's checkout.
type PayPaymentLinkParams struct {
	Token         string
	PaymentMethod string
	// ReturnURL is where the checkout sends the payer back (the link's
	// page).
	ReturnURL string
}

// PayPaymentLink returns the deposit whose hosted checkout the payer of a
// link goes to: the latest one while it can still be paid, else a new
// redirect deposit for the link's amount. A paid link refuses with
// deposit_terminal.
func (e *Engine) PayPaymentLink(ctx context.Context, p PayPaymentLinkParams) (*Deposit, error) {
	s, err := e.GetPaymentLinkByToken(ctx, p.Token)
	if err != nil {
		return nil, err
	}
	if s.Paid() {
		return nil, Errorf(CodeDepositTerminal, "payment link: it is paid")
	}
	if s.Deposit != nil && s.Deposit.Actionable(e.now()) && s.Deposit.PaymentMethod == p.PaymentMethod {
		return s.Deposit, nil
	}
	l := s.Link
	n := l.Deposits + 1
	d, _, err := e.CreateDeposit(ctx, CreateDepositParams{
		OrganizationID: l.OrganizationID, CheckoutMode: CheckoutRedirect, Amount: FormatAmount(l.Amount),
		PaymentMethod: p.PaymentMethod, RedirectURL: p.ReturnURL, MerchantID: fmt.Sprintf("%s-%d", l.ID, n),
		Metadata: []byte(fmt.Sprintf(`{"payment_link":%q}`, l.ID)),
	})
	if err != nil {
		return nil, err
	}
	err = e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		cur, err := tx.GetPaymentLink(ctx, l.OrganizationID, l.ID)
		if err != nil {
			return err
		}
		if cur.Deposits >= n {
			return nil // a concurrent open recorded it (or a later one)
		}
		cur.DepositID, cur.Deposits, cur.UpdatedAt = d.ID, n, e.now()
		return tx.UpdatePaymentLink(ctx, cur)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}
