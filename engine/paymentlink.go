package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Payment links: an operator asks for an amount with a note, and the payer
// who opens the link pays it through the hosted checkout, for merchants who
// take payments without an integration. Each checkout a link opens is a
// redirect deposit with the merchant_id "<link ID>-<n>", and the deposit
// carries the link like any other.
//
// Whoever holds a link's URL can open checkouts, so a link keeps at most
// one open: choosing its method again is the same checkout, choosing
// another ends the open one (cancelled, or expired if its window passed)
// before the next is created, and the create commits only if the link
// has not opened another meanwhile (the link's row lock). A checkout whose
// payment is being verified is not left: switching waits for its result.
// Each ended checkout stops counting against its wallet's daily limit as
// an expired one does. A link is paid by any of its checkouts, not only
// its latest (PaidDepositID, written with that success), and then opens
// no other.

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
	// PaidDepositID is the first of its checkouts that was paid ("" while
	// none is).
	PaidDepositID string
	CreatedBy     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
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
	// A link no payer could pay is refused now, not at the payer's page.
	if methods, err := e.PayableMethods(ctx, orgID, a); err != nil {
		return nil, notFound(err, "organization")
	} else if len(methods) == 0 {
		return nil, errNoMethodTakes(a)
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
		if err := tx.Console().CreatePaymentLink(ctx, l); err != nil {
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
		out, err = tx.Console().ListPaymentLinks(ctx, orgID, limit)
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

// Paid reports whether any of the link's checkouts was paid.
func (s *PaymentLinkState) Paid() bool {
	return s.Link.PaidDepositID != ""
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
		if s.Link, err = tx.Console().GetPaymentLinkByToken(ctx, token); err != nil {
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

// errLinkMoved: the link opened another checkout since it was read.
var errLinkMoved = errors.New("payment link: another checkout was opened meanwhile")

// linkOpenTries bounds how often one open of a link starts over after
// losing to another.
const linkOpenTries = 4

func errLinkPaid() error { return Errorf(CodeDepositTerminal, "payment link: it is paid") }

// PayPaymentLink returns the deposit whose hosted checkout the payer of a
// link goes to: the open one while it can still be paid by the method
// asked, else a new redirect deposit for the link's amount, once the open
// one is ended (see the top of this file). A paid link refuses with
// deposit_terminal; a checkout being verified, with attempt_in_progress;
// an open that keeps losing to others of the same link, with conflict.
func (e *Engine) PayPaymentLink(ctx context.Context, p PayPaymentLinkParams) (*Deposit, error) {
	for range linkOpenTries {
		d, err := e.payPaymentLink(ctx, p)
		if !errors.Is(err, errLinkMoved) {
			return d, err
		}
	}
	return nil, Errorf(CodeConflict, "payment link: it is being opened elsewhere at the same time; try again")
}

func (e *Engine) payPaymentLink(ctx context.Context, p PayPaymentLinkParams) (*Deposit, error) {
	s, err := e.GetPaymentLinkByToken(ctx, p.Token)
	if err != nil {
		return nil, err
	}
	if s.Paid() {
		return nil, errLinkPaid()
	}
	l := s.Link
	n := l.Deposits + 1
	params := CreateDepositParams{
		OrganizationID: l.OrganizationID, CheckoutMode: CheckoutRedirect, Amount: FormatAmount(l.Amount),
		PaymentMethod: p.PaymentMethod, RedirectURL: p.ReturnURL, MerchantID: fmt.Sprintf("%s-%d", l.ID, n),
		Metadata: []byte(fmt.Sprintf(`{"payment_link":%q}`, l.ID)),
	}
	if _, err := params.validate(); err != nil {
		return nil, err // before the open checkout is ended for it
	}
	if d := s.Deposit; d != nil && !d.IsTerminal() {
		if d.PaymentMethod == p.PaymentMethod && d.Actionable(e.now()) {
			return d, nil
		}
		if err := e.endLinkCheckout(ctx, d.ID); err != nil {
			return nil, err
		}
	}
	d, _, err := e.createDeposit(ctx, params, &linkOpen{id: l.ID, n: n})
	if code := ErrorCode(err); code == CodeMerchantIDConflict {
		return nil, errLinkMoved // a concurrent open took the number for another method
	}
	return d, err
}

// endLinkCheckout ends a link's open checkout so that another can open:
// cancelled (no event, as a payer's cancel) while its window is open,
// else as ExpireDeposits would have. One being verified is refused.
func (e *Engine) endLinkCheckout(ctx context.Context, depositID string) error {
	return e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		d, err := tx.LockDeposit(ctx, depositID)
		if err != nil {
			return err
		}
		now := e.now()
		switch {
		case d.Status == StatusProcessing:
			return Errorf(CodeAttemptInProgress, "payment link: a payment of its open checkout is being verified; wait for its result")
		case d.Status == StatusSucceeded:
			return errLinkPaid()
		case d.IsTerminal():
			return nil
		case now.Before(d.ExpiresAt):
			return e.finishDeposit(ctx, tx, d, StatusCancelled, StatusCancelled, "", now)
		case d.AttemptsUsed == 0:
			return e.finishDeposit(ctx, tx, d, StatusExpired, VerificationExpired, EventDepositExpired, now)
		default:
			return e.finishDeposit(ctx, tx, d, StatusFailed, VerificationFailed, EventDepositFailed, now)
		}
	})
}

// linkOpen is the checkout number n a link's open creates.
type linkOpen struct {
	id string
	n  int
}

// lock takes the link's row in the create's transaction and refuses
// (before anything is written) unless the link is unpaid and n is still
// its next number: a concurrent open that committed first wins.
func (o *linkOpen) lock(ctx context.Context, tx Tx, orgID string) (*PaymentLink, error) {
	l, err := tx.Console().LockPaymentLink(ctx, orgID, o.id)
	if err != nil {
		return nil, err
	}
	if l.PaidDepositID != "" {
		return nil, errLinkPaid()
	}
	if l.Deposits != o.n-1 {
		return nil, errLinkMoved
	}
	return l, nil
}

// record makes d the link's latest checkout, in the create's transaction.
func (o *linkOpen) record(ctx context.Context, tx Tx, l *PaymentLink, d *Deposit) error {
	l.DepositID, l.Deposits, l.UpdatedAt = d.ID, o.n, d.CreatedAt
	return tx.Console().UpdatePaymentLink(ctx, l)
}

// linkOfMerchantID returns the ID of the link whose checkout has
// merchantID ("<link ID>-<n>").
func linkOfMerchantID(merchantID string) (string, bool) {
	if !strings.HasPrefix(merchantID, PrefixPaymentLink) {
		return "", false
	}
	i := strings.LastIndexByte(merchantID, '-')
	if i < 0 || i == len(merchantID)-1 || strings.Trim(merchantID[i+1:], "0123456789") != "" {
		return "", false
	}
	return merchantID[:i], true
}

// linkPaid records, in the transaction of d's payment, that d paid its
// link if it is a link's checkout (the organization's own merchant_id
// says so: another organization's link is not found). Another checkout
// of the link still open is cancelled: the link takes no second payment.
func (e *Engine) linkPaid(ctx context.Context, tx Tx, d *Deposit, now time.Time) error {
	id, ok := linkOfMerchantID(d.MerchantID)
	if !ok {
		return nil
	}
	l, err := tx.Console().LockPaymentLink(ctx, d.OrganizationID, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil || l.PaidDepositID != "" {
		return err
	}
	l.PaidDepositID, l.UpdatedAt = d.ID, now
	if err := tx.Console().UpdatePaymentLink(ctx, l); err != nil {
		return err
	}
	if err := e.compatPaid(ctx, tx, l, now); err != nil {
		return err
	}
	if l.DepositID == "" || l.DepositID == d.ID {
		return nil
	}
	open, err := tx.LockDeposit(ctx, l.DepositID)
	if err != nil || open.Status != StatusPending {
		return err
	}
	return e.finishDeposit(ctx, tx, open, StatusCancelled, StatusCancelled, "", now)
}
