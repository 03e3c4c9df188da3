package engine

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Deposit statuses. pending and processing are the nonterminal ones.
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
	StatusExpired    = "expired"
	StatusRejected   = "rejected"
	StatusRefunded   = "refunded"
)

// Verification states of an H2H deposit (verification.state).
const (
	VerificationAwaitingReference = "awaiting_reference"
	VerificationProcessing        = "processing"
	VerificationSucceeded         = "succeeded"
	VerificationFailed            = "failed"
	VerificationExpired           = "expired"
)

// MaxAttempts is how many distinct transaction IDs a deposit accepts.
const MaxAttempts = 3

// Deposit is a payment into an organization: a redirect checkout or an H2H
// deposit. Fields set at creation are immutable; status, verification and
// provider transaction ID move with its state machine.
type Deposit struct {
	ID             string
	OrganizationID string
	MerchantID     string
	CheckoutMode   string // CheckoutRedirect or CheckoutH2H
	Amount         decimal.Decimal
	PaymentMethod  string
	// RedirectURL is the merchant's return page (the request's redirect_url).
	RedirectURL string
	// PayerPhone is the normalized payer phone of an H2H deposit.
	PayerPhone string
	// Metadata is the compact JSON object given at creation, "{}" if none.
	Metadata []byte
	Status   string

	// Action is how the payer pays: ActionRedirect (hosted checkout, every
	// redirect deposit) or ActionDisplayInstructions.
	Action string
	// CheckoutToken is the unguessable token of payd's hosted checkout page,
	// CheckoutURL where the payer is sent for a redirect action.
	CheckoutToken string
	CheckoutURL   string

	// The recipient of a display_instructions action, copied from the wallet
	// at creation so it never changes afterwards.
	Channel        string
	Operation      string
	WalletID       string
	RecipientPhone string
	RecipientName  string
	QRPayload      string

	VerificationState string
	AttemptsUsed      int
	// FailureCode is the last failed attempt's code; empty for none.
	FailureCode string
	// ProviderTransactionID is the normalized transaction ID that paid the
	// deposit; empty before success.
	ProviderTransactionID string

	ExpiresAt time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// IsTerminal reports whether the deposit can no longer change.
func (d *Deposit) IsTerminal() bool {
	switch d.Status {
	case StatusPending, StatusProcessing:
		return false
	}
	return true
}

// Actionable reports whether the payer can still act on the deposit at now:
// not terminal and before its deadline. next_action is null otherwise.
func (d *Deposit) Actionable(now time.Time) bool {
	return !d.IsTerminal() && now.Before(d.ExpiresAt)
}

// AttemptsRemaining is the number of transaction IDs the deposit still
// accepts: zero for a redirect action, which is never verified by ID.
func (d *Deposit) AttemptsRemaining() int {
	if d.Action != ActionDisplayInstructions || d.IsTerminal() {
		return 0
	}
	return MaxAttempts - d.AttemptsUsed
}

// CreateDepositParams is a create-deposit request as the transport decoded
// it: JSON types are checked, values are not.
type CreateDepositParams struct {
	OrganizationID string
	// CheckoutMode is "" (meaning redirect), "redirect" or "h2h".
	CheckoutMode  string
	Amount        string
	PaymentMethod string
	RedirectURL   string
	MerchantID    string
	// PayerPhone is payer.phone of an H2H request.
	PayerPhone string
	// Metadata is the raw JSON value of metadata, nil when absent or null.
	Metadata []byte
}

// maxMerchantIDLength and maxURLLength bound caller-controlled strings.
const (
	maxMerchantIDLength = 255
	maxURLLength        = 2048
)

// validate checks p against every rule of the interface and the contract and
// returns the deposit it describes (immutable fields only).
func (p CreateDepositParams) validate() (*Deposit, error) {
	d := &Deposit{OrganizationID: p.OrganizationID, CheckoutMode: p.CheckoutMode}
	switch p.CheckoutMode {
	case "", CheckoutRedirect:
		d.CheckoutMode = CheckoutRedirect
	case CheckoutH2H:
	default:
		return nil, Invalid("checkout_mode", "must be redirect or h2h")
	}
	var err error
	if d.Amount, err = ParseAmount("amount", p.Amount); err != nil {
		return nil, err
	}
	m, _ := LookupMethod(p.PaymentMethod)
	limits := m.depositRange(d.CheckoutMode)
	if !limits.Offered() {
		return nil, Invalid("payment_method", "must be "+OneOf(DepositMethods(d.CheckoutMode)))
	}
	if err := limits.check("amount", d.Amount, p.PaymentMethod); err != nil {
		return nil, err
	}
	d.PaymentMethod = p.PaymentMethod
	if err := checkAbsoluteURL("redirect_url", p.RedirectURL); err != nil {
		return nil, err
	}
	d.RedirectURL = p.RedirectURL
	if err := checkMerchantID(p.MerchantID); err != nil {
		return nil, err
	}
	d.MerchantID = p.MerchantID
	if d.CheckoutMode == CheckoutH2H {
		if d.PayerPhone, err = NormalizePhone("payer.phone", p.PayerPhone); err != nil {
			return nil, err
		}
	}
	if d.Metadata, err = normalizeMetadata(p.Metadata); err != nil {
		return nil, err
	}
	return d, nil
}

func checkAbsoluteURL(field, s string) error {
	if s == "" {
		return Invalid(field, "is required")
	}
	if len(s) > maxURLLength {
		return Invalid(field, "must be at most 2048 characters")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.ContainsAny(s, " \t\r\n") {
		return Invalid(field, "must be an absolute http or https URL")
	}
	return nil
}

func checkMerchantID(s string) error {
	switch {
	case s == "":
		return Invalid("merchant_id", "must be at least 1 character")
	case len(s) > maxMerchantIDLength:
		return Invalid("merchant_id", "must be at most 255 bytes")
	}
	return checkText("merchant_id", s)
}

// checkText refuses invalid UTF-8 and control characters (NUL among them)
// in text a person reads or a database keeps as TEXT.
func checkText(field, s string) error {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Invalid(field, "must be valid UTF-8 without control characters")
	}
	return nil
}

// sameRequest reports whether a create request equals the one that created
// existing in every immutable field, so a replay can return it.
func sameRequest(existing, req *Deposit) bool {
	return existing.CheckoutMode == req.CheckoutMode &&
		existing.Amount.Equal(req.Amount) &&
		existing.PaymentMethod == req.PaymentMethod &&
		existing.RedirectURL == req.RedirectURL &&
		existing.PayerPhone == req.PayerPhone &&
		sameMetadata(existing.Metadata, req.Metadata)
}

// CreateDeposit creates a deposit, or returns the existing one when the
// organization already has an identical request under the same merchant_id
// (created is then false). A different request under the same merchant_id is
// merchant_id_conflict.
func (e *Engine) CreateDeposit(ctx context.Context, p CreateDepositParams) (d *Deposit, created bool, err error) {
	req, err := p.validate()
	if err != nil {
		return nil, false, err
	}
	// Two reads of one statement each: they need no common snapshot.
	var existing *Deposit
	err = e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		existing, err = tx.GetDepositByMerchantID(ctx, p.OrganizationID, p.MerchantID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if existing != nil {
		return replay(existing, req)
	}
	var org *Organization
	err = e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		org, err = tx.GetOrganization(ctx, p.OrganizationID)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if !org.DepositsEnabled {
		return nil, false, Errorf(CodeForbidden, "deposits are not enabled for this organization")
	}
	if req.CheckoutMode == CheckoutH2H && !org.H2HEnabled {
		return nil, false, Errorf(CodeForbidden, "h2h deposits are not enabled for this organization")
	}

	now := e.now()
	d = req
	d.ID = NewID(PrefixDeposit, now)
	d.Status = StatusPending
	d.CheckoutToken = RandomToken(24)
	d.CreatedAt, d.UpdatedAt = now, now
	method, _ := LookupMethod(d.PaymentMethod)
	instructions := d.CheckoutMode == CheckoutH2H && method.H2HAction == ActionDisplayInstructions
	if instructions {
		d.Action = ActionDisplayInstructions
		d.Channel, d.Operation = method.Channel, method.Operation
		d.VerificationState = VerificationAwaitingReference
		d.ExpiresAt = now.Add(org.InstructionsWindow).Truncate(time.Second)
	} else {
		d.Action = ActionRedirect
		d.Channel = method.Channel
		d.VerificationState = VerificationProcessing
		d.ExpiresAt = now.Add(org.RedirectWindow).Truncate(time.Second)
		// The provider call may go over the network: never inside a
		// transaction. A checkout opened for a request that then loses the
		// merchant_id race is simply never visited.
		checkout, err := e.provider.StartCheckout(ctx, CheckoutRequest{
			DepositID: d.ID, OrganizationID: d.OrganizationID, Token: d.CheckoutToken,
			Amount: d.Amount, PaymentMethod: d.PaymentMethod, ExpiresAt: d.ExpiresAt,
		})
		if errors.Is(err, ErrMethodUnavailable) {
			return nil, false, Errorf(CodeMethodUnavailable, "payment_method: %s is temporarily unavailable", d.PaymentMethod)
		} else if err != nil {
			return nil, false, err
		}
		d.CheckoutURL = checkout.URL
	}

	// Creates share transactions (group commit, see txBatcher), ordered by
	// the wallet pool they pick from.
	key := d.OrganizationID + "/" + d.Channel + "/" + d.Operation
	err = e.creates.inTx(ctx, key, func(ctx context.Context, tx Tx) error {
		if instructions {
			w, err := pickWallet(ctx, tx, d.OrganizationID, method, d.Amount, now, e.cfg.RequireLiveWallets)
			if err != nil {
				return err
			}
			d.WalletID, d.RecipientPhone, d.RecipientName, d.QRPayload = w.ID, w.Phone, w.Name, w.QRPayload
		}
		return tx.CreateDeposit(ctx, d)
	})
	if errors.Is(err, ErrDuplicate) {
		// A concurrent create took the merchant_id first: the unique
		// constraint decided, now answer as a replay of that deposit.
		err = e.readOne(ctx, func(ctx context.Context, tx Tx) error {
			existing, err = tx.GetDepositByMerchantID(ctx, p.OrganizationID, p.MerchantID)
			return err
		})
		if err != nil {
			return nil, false, err
		}
		return replay(existing, req)
	}
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

func replay(existing, req *Deposit) (*Deposit, bool, error) {
	if !sameRequest(existing, req) {
		return nil, false, Errorf(CodeMerchantIDConflict, "merchant_id: %s already exists with a different request", req.MerchantID)
	}
	return existing, false, nil
}

// GetDeposit returns a deposit of the organization, or not_found: a deposit
// of another organization does not exist for the caller.
func (e *Engine) GetDeposit(ctx context.Context, orgID, id string) (*Deposit, error) {
	var d *Deposit
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		d, err = tx.GetDeposit(ctx, orgID, id)
		return notFound(err, "deposit")
	})
	return d, err
}

// GetDepositByCheckoutToken returns the deposit behind a hosted checkout
// page, or not_found.
func (e *Engine) GetDepositByCheckoutToken(ctx context.Context, token string) (*Deposit, error) {
	var d *Deposit
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		d, err = tx.GetDepositByCheckoutToken(ctx, token)
		return notFound(err, "checkout")
	})
	return d, err
}

// SubmitCheckoutPayment queues verification of a payment the payer made on
// the hosted checkout of a redirect action (the provider reports its
// transaction ID). It goes through the same attempt, worker and matching
// as an H2H transaction ID.
func (e *Engine) SubmitCheckoutPayment(ctx context.Context, token, transactionID string) (*Verification, error) {
	txID, err := NormalizeTransactionID("transaction_id", transactionID)
	if err != nil {
		return nil, err
	}
	var v *Verification
	err = e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		d, err := tx.GetDepositByCheckoutToken(ctx, token)
		if err != nil {
			return notFound(err, "checkout")
		}
		if d.Action != ActionRedirect {
			return Errorf(CodeNotFound, "checkout not found")
		}
		if d, err = tx.LockDeposit(ctx, d.ID); err != nil {
			return err
		}
		v, err = e.queueAttempt(ctx, tx, d, txID)
		return err
	})
	if errors.Is(err, errTransactionIDTaken) {
		return nil, errTransactionIDUsed(txID)
	}
	if err == nil {
		e.wakeAttempts()
	}
	return v, err
}

// CancelCheckout ends a redirect deposit the payer cancelled on the hosted
// checkout. Only a pending deposit can be cancelled: one whose payment is
// being verified is not.
func (e *Engine) CancelCheckout(ctx context.Context, token string) (*Deposit, error) {
	var d *Deposit
	err := e.store.InTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if d, err = tx.GetDepositByCheckoutToken(ctx, token); err != nil {
			return notFound(err, "checkout")
		}
		if d.Action != ActionRedirect {
			return Errorf(CodeNotFound, "checkout not found")
		}
		if d, err = tx.LockDeposit(ctx, d.ID); err != nil {
			return err
		}
		now := e.now()
		switch {
		case d.IsTerminal():
			return Errorf(CodeDepositTerminal, "deposit: it is %s", d.Status)
		case d.Status == StatusProcessing:
			return Errorf(CodeAttemptInProgress, "deposit: a payment is being verified")
		case !now.Before(d.ExpiresAt):
			return Errorf(CodeDepositTerminal, "deposit: the checkout expired at %s", FormatTime(d.ExpiresAt))
		}
		return e.finishDeposit(ctx, tx, d, StatusCancelled, StatusCancelled, "", now)
	})
	return d, err
}

// Now returns the engine's current time, for rendering what depends on it
// (next_action is null once a deposit's deadline has passed).
func (e *Engine) Now() time.Time { return e.now() }
