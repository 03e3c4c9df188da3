package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

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

	// The recipient of a display_instructions action or a wallet checkout,
	// copied from the wallet at creation so it never changes afterwards.
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

	// RefundedAmount is the sum of the deposit's succeeded refunds;
	// RefundReserved that of its refunds that have not failed (processing
	// or succeeded): what no new refund may take. Both are maintained in
	// the transactions that move its refunds (Tx.UpdateDepositRefunds).
	RefundedAmount decimal.Decimal
	RefundReserved decimal.Decimal

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

// WalletCheckout reports whether the deposit's hosted checkout is paid
// into one of the organization's own receiving wallets (a personal wallet
// the payer sends money to; see Checkout.Operation), whose payer types the
// transaction ID on the page.
func (d *Deposit) WalletCheckout() bool {
	return d.Action == ActionRedirect && d.WalletID != ""
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
	return e.createDeposit(ctx, p, nil)
}

// createDeposit is CreateDeposit; with link, the checkout a payment link
// opens, created in a transaction of its own under the link's row lock
// (see linkOpen) and recorded as the link's latest.
func (e *Engine) createDeposit(ctx context.Context, p CreateDepositParams, link *linkOpen) (d *Deposit, created bool, err error) {
	req, err := p.validate()
	if err != nil {
		return nil, false, err
	}
	existing, org, err := e.readCreate(ctx, p.OrganizationID, p.MerchantID)
	if existing != nil {
		return replay(existing, req)
	}
	if err != nil {
		return nil, false, err
	}
	if !org.DepositsEnabled {
		return nil, false, Errorf(CodeForbidden, "deposits are not enabled for this organization")
	}
	if req.CheckoutMode == CheckoutH2H && !org.H2HEnabled {
		return nil, false, Errorf(CodeForbidden, "h2h deposits are not enabled for this organization")
	}
	if !org.MethodEnabled(req.PaymentMethod) {
		return nil, false, Errorf(CodeForbidden, "payment_method: the organization has turned %s off", req.PaymentMethod)
	}

	now := e.now()
	d, method, err := e.newDeposit(ctx, req, org, now)
	if err != nil {
		return nil, false, err
	}

	// Creates share transactions (group commit, see txBatcher), ordered by
	// the wallet pool they pick from.
	key := d.OrganizationID + "/" + d.Channel + "/" + d.Operation
	apiWrite := e.apiWrites.begin()
	defer apiWrite() // also if the transaction panics
	create := e.insertDeposit(d, method, now, link)
	if link != nil {
		// Not batched: the link's row lock is taken before the wallet
		// pool's, which a batch of creates ordered by pool would not keep.
		err = e.creates.inOwnTx(ctx, key, "", create)
	} else {
		err = e.creates.inTx(ctx, key, create)
	}
	apiWrite()
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

// readCreate reads what a create needs first: the deposit that already
// has merchantID, if any (then only it), and the organization. Two reads
// of one statement each: they need no common snapshot.
func (e *Engine) readCreate(ctx context.Context, orgID, merchantID string) (existing *Deposit, org *Organization, err error) {
	if r, ok := e.store.(CreateReader); ok {
		org, existing, err = r.ReadCreate(ctx, orgID, merchantID)
		if existing != nil {
			return existing, nil, nil
		}
		return nil, org, err
	}
	err = e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		existing, err = tx.GetDepositByMerchantID(ctx, orgID, merchantID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil || existing != nil {
		return existing, nil, err
	}
	err = e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		org, err = tx.GetOrganization(ctx, orgID)
		return err
	})
	return nil, org, err
}

// newDeposit completes req, validated, into the deposit to insert for org
// at now: its ID, token, action, deadline and, for a redirect, the
// provider's checkout. It writes nothing. method is the deposit's, with the
// operation the provider's checkout is paid by.
func (e *Engine) newDeposit(ctx context.Context, req *Deposit, org *Organization, now time.Time) (d *Deposit, method Method, err error) {
	d = req
	d.ID = NewID(PrefixDeposit, now)
	d.Status = StatusPending
	d.CheckoutToken = RandomToken(24)
	d.CreatedAt, d.UpdatedAt = now, now
	method, _ = LookupMethod(d.PaymentMethod)
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
			return nil, Method{}, Errorf(CodeMethodUnavailable, "payment_method: %s is temporarily unavailable", d.PaymentMethod)
		} else if err != nil {
			return nil, Method{}, err
		}
		d.CheckoutURL = checkout.URL
		if checkout.Operation != "" {
			if checkout.Operation != method.CheckoutOperation {
				return nil, Method{}, fmt.Errorf("provider's checkout of %s is paid by %q, which the method's wallets are not", d.PaymentMethod, checkout.Operation)
			}
			d.Operation = checkout.Operation
			method.Operation = checkout.Operation // the pool pickWallet draws from
		}
	}

	return d, method, nil
}

// insertDeposit is the transaction function that inserts d, picking its
// wallet, and, with link, records it as the link's latest.
func (e *Engine) insertDeposit(d *Deposit, method Method, now time.Time, link *linkOpen) batchFunc {
	return func(ctx context.Context, tx Tx, shared *sharedTx) error {
		var l *PaymentLink
		if link != nil {
			var err error
			if l, err = link.lock(ctx, tx, d.OrganizationID); err != nil {
				return err
			}
		}
		if d.Operation != "" {
			requireLive := e.cfg.RequireLiveWallets
			if requireLive && e.cfg.WalletsProven != nil {
				proven, err := e.cfg.WalletsProven(ctx, tx, d.OrganizationID, method)
				if err != nil {
					return err
				}
				requireLive = !proven
			}
			w, err := pickWallet(ctx, tx, shared.pools, d.OrganizationID, method, d.Amount, now, requireLive)
			if e := (*Error)(nil); errors.As(err, &e) {
				return refuse(err) // no wallet: nothing picked, nothing written
			} else if err != nil {
				return err
			}
			d.WalletID, d.RecipientPhone, d.RecipientName, d.QRPayload = w.ID, w.Phone, w.Name, w.QRPayload
		}
		if link == nil {
			// Nothing after it reads the row: queued to the flush, where a
			// batch's deposits go as one statement with the wallets'
			// assignments, in one round trip where the store pipelines. A
			// duplicate merchant_id fails the batch there, as it would
			// here, and each create then runs alone.
			shared.write(func(ctx context.Context, tx Tx) error { return tx.CreateDeposit(ctx, d) })
			return nil
		}
		if err := tx.CreateDeposit(ctx, d); err != nil {
			return err
		}
		return link.record(ctx, tx, l, d)
	}
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

// succeedDeposit moves a deposit to succeeded and credits its organization
// (amount minus the deposit fee) in the same transaction.
// The credit is written last (queued to the end of a batched transaction,
// see sharedTx), so that the organization's balance rows are locked only
// until the commit.
func (e *Engine) succeedDeposit(ctx context.Context, tx Tx, d *Deposit, txID string, now time.Time) error {
	shared := sharedFrom(ctx)
	org, err := shared.organization(ctx, tx, d.OrganizationID, false)
	if err != nil {
		return err
	}
	d.FailureCode = ""
	d.ProviderTransactionID = txID
	if err := e.finishDeposit(ctx, tx, d, StatusSucceeded, VerificationSucceeded, EventDepositSucceeded, now); err != nil {
		return err
	}
	return shared.journal(ctx, tx, depositCreditJournal(org, d), now)
}

// finishDeposit moves a deposit to a terminal state and writes its event,
// if the state has one, in the same transaction.
func (e *Engine) finishDeposit(ctx context.Context, tx Tx, d *Deposit, status, verification, eventType string, now time.Time) error {
	d.Status, d.VerificationState = status, verification
	d.UpdatedAt = now
	if err := tx.UpdateDeposit(ctx, d); err != nil {
		return err
	}
	note(ctx, func(o Observer) { o.DepositFinished(status) })
	if status == StatusSucceeded {
		if err := e.linkPaid(ctx, tx, d, now); err != nil {
			return err
		}
	}
	if eventType == "" {
		return nil
	}
	return e.writeEvent(ctx, tx, d.OrganizationID, eventType, d.ID, DepositView(d, now, e.cfg.APIPrefix), now)
}

// ExpireDeposits ends the pending deposits whose deadline has passed:
// expired when no transaction ID was ever submitted, failed when only
// failed ones were. A deposit with an attempt running is processing, not
// pending, so its attempt still resolves. Returns how many it ended.
func (e *Engine) ExpireDeposits(ctx context.Context) (int, error) {
	n := 0
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		now := e.now()
		ds, err := tx.ListExpirableDeposits(ctx, now, e.cfg.ClaimBatch)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.AttemptsUsed == 0 {
				err = e.finishDeposit(ctx, tx, d, StatusExpired, VerificationExpired, EventDepositExpired, now)
			} else {
				err = e.finishDeposit(ctx, tx, d, StatusFailed, VerificationFailed, EventDepositFailed, now)
			}
			if err != nil {
				return err
			}
		}
		n = len(ds)
		return nil
	})
	return n, err
}
