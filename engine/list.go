package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Lists: an organization's deposits, withdrawals, events and
// balance movements, newest first, a page at a time. Paging is by keyset:
// a page continues from the (created_at, id) of a row the caller names, so
// every page is an index range scan whose cost does not grow with history,
// and rows created while a caller pages never shift the pages it has yet
// to read.

// Limits of a page.
const (
	DefaultPageLimit = 10
	// MaxPageLimit bounds a page the engine reads. The API allows less
	// (100); exports read larger pages.
	MaxPageLimit = 1000
)

// PageCursor is a row's place in a list's order: newest first is
// CreatedAt descending, then ID descending.
type PageCursor struct {
	CreatedAt time.Time
	ID        string
}

// PageParams asks a store for one page of an organization's list. Empty
// strings and zero times match all. A store honours the filters its list
// has (each method says which) and ignores the others.
type PageParams struct {
	OrganizationID string
	// After: only rows older than it, newest first (the next page).
	// Before: only rows newer than it, oldest first (the previous page,
	// which the engine turns round). At most one is set.
	After, Before *PageCursor
	// CreatedGTE and CreatedLT bound created_at: [gte, lt).
	CreatedGTE, CreatedLT time.Time
	// Deposits and withdrawals. ProviderTransactionID is a deposit's
	// provider transaction ID, or a withdrawal's provider reference.
	Status, PaymentMethod, MerchantID, ProviderTransactionID string
	// Events.
	Type, ResourceID string
	// Refunds: those of one deposit.
	DepositID string
	// Balance transactions: AccountAvailable or AccountHeld.
	Account string
	Limit   int
}

// BalanceTransaction is one movement of an organization's available or
// held balance: what one journal added to the account, and the account's
// balance right after that journal committed (maintained at write time
// from account_balances, never summed from history).
type BalanceTransaction struct {
	// ID is BalanceTransactionID(JournalID, Account).
	ID             string
	OrganizationID string
	Account        string
	JournalID      string
	Kind           string
	// Reference is the resource the journal is for (its Journal.Reference).
	Reference    string
	Amount       decimal.Decimal
	BalanceAfter decimal.Decimal
	CreatedAt    time.Time
}

// PrefixBalanceTransaction starts the ID of a balance transaction.
const PrefixBalanceTransaction = "txn_"

// BalanceTransactionID is the ID of a journal's movement on account: the
// journal's ID with its prefix changed, and the account, so that stores
// derive the same ID and a journal has at most one movement per account.
func BalanceTransactionID(journalID, account string) string {
	return PrefixBalanceTransaction + strings.TrimPrefix(journalID, PrefixJournal) + "_" + account
}

// BalanceAccounts are the accounts whose movements are balance
// transactions: the organization's own money.
var BalanceAccounts = []string{AccountAvailable, AccountHeld}

// IsBalanceAccount reports whether account's movements are balance
// transactions.
func IsBalanceAccount(account string) bool { return slices.Contains(BalanceAccounts, account) }

// ListParams is a list request: the page wanted and its filters, in the
// API's terms.
type ListParams struct {
	OrganizationID string
	// Limit is 1 to MaxPageLimit; zero means DefaultPageLimit.
	Limit int
	// StartingAfter and EndingBefore name a row of the same list and
	// organization (at most one of them): the page after it, or before it.
	StartingAfter, EndingBefore string
	CreatedGTE, CreatedLT       time.Time
	// Deposits and withdrawals.
	Status, PaymentMethod, MerchantID, ProviderTransactionID string
	// Events.
	Type, ResourceID string
	// Refunds.
	DepositID string
	// Balance transactions.
	Account string
}

// Page is one page of a list, newest first. HasMore says whether the list
// goes on past the page in the direction it was read.
type Page[T any] struct {
	Data    []T
	HasMore bool
	// Signed reports whether reading the page takes the H2H signature, as
	// GET /v1/deposits/{id} of an H2H deposit does: the list shows
	// deposits (deposits, events, balance transactions) and the
	// organization takes H2H deposits, or the page shows an H2H deposit
	// of an organization that no longer takes them. Never for withdrawals,
	// whose own GET is bearer only.
	Signed bool
}

// ListDeposits returns a page of the organization's deposits. Filters:
// status, payment method, created range, merchant ID, provider
// transaction ID.
func (e *Engine) ListDeposits(ctx context.Context, p ListParams) (*Page[*Deposit], error) {
	if err := checkFilters(p, false); err != nil {
		return nil, err
	}
	if p.Status != "" && !slices.Contains(depositStatuses, p.Status) {
		return nil, Invalid("status", "must be one of "+OneOf(depositStatuses))
	}
	if p.PaymentMethod != "" && !isDepositMethod(p.PaymentMethod) {
		return nil, Invalid("payment_method", "must be one of "+OneOf(DepositMethods("")))
	}
	return listPage(ctx, e, p, "deposit",
		func(ctx context.Context, tx Tx, id string) (PageCursor, error) {
			d, err := tx.GetDeposit(ctx, p.OrganizationID, id)
			if err != nil {
				return PageCursor{}, err
			}
			return PageCursor{d.CreatedAt, d.ID}, nil
		}, Tx.ListDepositsPage,
		func(_ context.Context, _ Tx, d *Deposit) (bool, error) { return d.CheckoutMode == CheckoutH2H, nil })
}

// ListWithdrawals returns a page of the organization's withdrawals, with
// the filters of ListDeposits (the provider transaction ID is the
// payout's provider reference).
func (e *Engine) ListWithdrawals(ctx context.Context, p ListParams) (*Page[*Withdrawal], error) {
	if err := checkFilters(p, false); err != nil {
		return nil, err
	}
	if p.Status != "" && !slices.Contains(withdrawalStatuses, p.Status) {
		return nil, Invalid("status", "must be one of "+OneOf(withdrawalStatuses))
	}
	if p.PaymentMethod != "" && !slices.Contains(PayoutMethods(), p.PaymentMethod) {
		return nil, Invalid("payment_method", "must be one of "+OneOf(PayoutMethods()))
	}
	return listPage(ctx, e, p, "withdrawal",
		func(ctx context.Context, tx Tx, id string) (PageCursor, error) {
			w, err := tx.GetWithdrawal(ctx, p.OrganizationID, id)
			if err != nil {
				return PageCursor{}, err
			}
			return PageCursor{w.CreatedAt, w.ID}, nil
		}, Tx.ListWithdrawalsPage, nil)
}

// ListEventsPage returns a page of the organization's events, by type and
// resource.
func (e *Engine) ListEventsPage(ctx context.Context, p ListParams) (*Page[*Event], error) {
	if err := checkFilters(p, true); err != nil {
		return nil, err
	}
	if p.Type != "" && !slices.Contains(eventTypes, p.Type) {
		return nil, Invalid("type", "must be one of "+OneOf(eventTypes))
	}
	return listPage(ctx, e, p, "event",
		func(ctx context.Context, tx Tx, id string) (PageCursor, error) {
			ev, err := getOrgEvent(ctx, tx, p.OrganizationID, id)
			if err != nil {
				return PageCursor{}, err
			}
			return PageCursor{ev.CreatedAt, ev.ID}, nil
		}, Tx.ListEventsPage,
		func(ctx context.Context, tx Tx, ev *Event) (bool, error) {
			if strings.HasPrefix(ev.ResourceID, PrefixRefund) {
				return refundShowsH2H(ctx, tx, p.OrganizationID, ev.ResourceID)
			}
			return EventShowsH2H(ev), nil
		})
}

// ListBalanceTransactions returns a page of the organization's movements
// on its available and held balances, by account. A movement names its
// deposit and the deposit's amount, so the page shows the deposit.
func (e *Engine) ListBalanceTransactions(ctx context.Context, p ListParams) (*Page[*BalanceTransaction], error) {
	if err := checkFilters(p, false); err != nil {
		return nil, err
	}
	if p.Status != "" || p.PaymentMethod != "" || p.MerchantID != "" || p.ProviderTransactionID != "" {
		return nil, Invalid("filter", "balance transactions are filtered by account and created only")
	}
	if p.Account != "" && !IsBalanceAccount(p.Account) {
		return nil, Invalid("account", "must be one of "+OneOf(BalanceAccounts))
	}
	return listPage(ctx, e, p, "balance transaction",
		func(ctx context.Context, tx Tx, id string) (PageCursor, error) {
			bt, err := tx.GetBalanceTransaction(ctx, p.OrganizationID, id)
			if err != nil {
				return PageCursor{}, err
			}
			return PageCursor{bt.CreatedAt, bt.ID}, nil
		}, Tx.ListBalanceTransactions,
		func(ctx context.Context, tx Tx, bt *BalanceTransaction) (bool, error) {
			if strings.HasPrefix(bt.Reference, PrefixRefund) {
				return refundShowsH2H(ctx, tx, p.OrganizationID, bt.Reference)
			}
			if !strings.HasPrefix(bt.Reference, PrefixDeposit) {
				return false, nil
			}
			d, err := tx.GetDeposit(ctx, p.OrganizationID, bt.Reference)
			if errors.Is(err, ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return d.CheckoutMode == CheckoutH2H, nil
		})
}

// refundShowsH2H reports whether a refund is of an H2H deposit, whose
// reads are signed (a refund gone missing shows nothing).
func refundShowsH2H(ctx context.Context, tx Tx, orgID, id string) (bool, error) {
	r, err := tx.GetRefund(ctx, orgID, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return r.DepositH2H, nil
}

// GetOrgEvent returns the organization's event with id, exactly as its
// webhook carried it; another organization's is not found.
func (e *Engine) GetOrgEvent(ctx context.Context, orgID, id string) (*Event, error) {
	var ev *Event
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		ev, err = getOrgEvent(ctx, tx, orgID, id)
		return notFound(err, "event")
	})
	return ev, err
}

// EventShowsH2H reports whether an event carries an H2H deposit, whose own
// GET is signed even when its organization no longer takes H2H deposits.
// The engine writes payloads with encoding/json, which spells the member
// so.
func EventShowsH2H(ev *Event) bool {
	return bytes.Contains(ev.Payload, []byte(`"checkout_mode":"h2h"`))
}

// OrganizationTakesH2H reports whether the organization takes H2H
// deposits (so signs its requests for them).
func (e *Engine) OrganizationTakesH2H(ctx context.Context, orgID string) (bool, error) {
	var h2h bool
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		org, err := tx.GetOrganization(ctx, orgID)
		if err != nil {
			return notFound(err, "organization")
		}
		h2h = org.H2HEnabled
		return nil
	})
	return h2h, err
}

// getOrgEvent reads an event and refuses another organization's as not
// found: GetEvent is by ID alone.
func getOrgEvent(ctx context.Context, tx Tx, orgID, id string) (*Event, error) {
	ev, err := tx.GetEvent(ctx, id)
	if err != nil {
		return nil, err
	}
	if ev.OrganizationID != orgID {
		return nil, ErrNotFound
	}
	return ev, nil
}

var (
	depositStatuses    = []string{StatusPending, StatusProcessing, StatusSucceeded, StatusFailed, StatusCancelled, StatusExpired, StatusRejected, StatusRefunded}
	withdrawalStatuses = []string{WithdrawalProcessing, WithdrawalSucceeded, WithdrawalFailed}
	eventTypes         = []string{EventDepositSucceeded, EventDepositFailed, EventDepositExpired, EventWithdrawCreated, EventWithdrawSucceeded, EventWithdrawFailed,
		EventRefundCreated, EventRefundSucceeded, EventRefundFailed, EventDepositRefunded}
)

// EventTypes returns the event types, in the order the API documents them.
func EventTypes() []string { return slices.Clone(eventTypes) }

// checkFilters checks what every list shares: the page and its bounds.
func checkFilters(p ListParams, events bool) error {
	if p.Limit < 0 || p.Limit > MaxPageLimit {
		return Invalid("limit", "must be between 1 and "+itoa(MaxPageLimit))
	}
	if p.StartingAfter != "" && p.EndingBefore != "" {
		return Invalid("ending_before", "cannot be combined with starting_after")
	}
	if !p.CreatedGTE.IsZero() && !p.CreatedLT.IsZero() && !p.CreatedGTE.Before(p.CreatedLT) {
		return Invalid("created[lt]", "must be after created[gte]")
	}
	if !events && (p.Type != "" || p.ResourceID != "") {
		return Invalid("type", "only events are filtered by type and resource")
	}
	// Caller text never reaches the database unchecked (Postgres refuses
	// NUL and invalid UTF-8 in text with an error).
	for _, f := range []struct{ name, value string }{
		{"starting_after", p.StartingAfter}, {"ending_before", p.EndingBefore},
		{"status", p.Status}, {"payment_method", p.PaymentMethod}, {"merchant_id", p.MerchantID},
		{"provider_transaction_id", p.ProviderTransactionID}, {"type", p.Type}, {"resource_id", p.ResourceID},
		{"account", p.Account}, {"deposit_id", p.DepositID},
	} {
		if len(f.value) > maxMerchantIDLength {
			return Invalid(f.name, "must be at most 255 bytes")
		}
		if err := checkText(f.name, f.value); err != nil {
			return err
		}
	}
	return nil
}

func itoa(n int) string { return decimal.NewFromInt(int64(n)).String() }

// listPage reads one page in one snapshot: the organization, the cursor's
// row (of the same list and organization, or the cursor is refused as no
// such row, whatever exists elsewhere), then the page, one row more than
// asked to learn whether the list goes on. shows reports whether a row
// shows an H2H deposit; nil for a list that shows no deposit, which is
// never signed. It is asked only when the organization no longer takes
// H2H deposits, row by row until one does.
func listPage[T any](ctx context.Context, e *Engine, p ListParams, what string,
	cursor func(ctx context.Context, tx Tx, id string) (PageCursor, error),
	list func(tx Tx, ctx context.Context, p PageParams) ([]T, error),
	shows func(ctx context.Context, tx Tx, row T) (bool, error),
) (*Page[T], error) {
	limit := p.Limit
	if limit == 0 {
		limit = DefaultPageLimit
	}
	pp := PageParams{
		OrganizationID: p.OrganizationID, CreatedGTE: p.CreatedGTE, CreatedLT: p.CreatedLT,
		Status: p.Status, PaymentMethod: p.PaymentMethod, MerchantID: p.MerchantID,
		ProviderTransactionID: p.ProviderTransactionID, Type: p.Type, ResourceID: p.ResourceID,
		DepositID: p.DepositID, Account: p.Account, Limit: limit + 1,
	}
	var page Page[T]
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		org, err := tx.GetOrganization(ctx, p.OrganizationID)
		if err != nil {
			return notFound(err, "organization")
		}
		for _, c := range []struct {
			param, id string
			set       **PageCursor
		}{{"starting_after", p.StartingAfter, &pp.After}, {"ending_before", p.EndingBefore, &pp.Before}} {
			if c.id == "" {
				continue
			}
			at, err := cursor(ctx, tx, c.id)
			if errors.Is(err, ErrNotFound) {
				return Invalid(c.param, "no such "+what+": "+quoteID(c.id))
			}
			if err != nil {
				return err
			}
			*c.set = &at
		}
		rows, err := list(tx, ctx, pp)
		if err != nil {
			return err
		}
		page.HasMore = len(rows) > limit
		page.Data = rows[:min(len(rows), limit)]
		if shows == nil {
			return nil
		}
		page.Signed = org.H2HEnabled
		for _, row := range page.Data {
			if page.Signed {
				break
			}
			if page.Signed, err = shows(ctx, tx, row); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pp.Before != nil {
		slices.Reverse(page.Data)
	}
	return &page, nil
}

// quoteID quotes an ID the caller sent, as JSON does.
func quoteID(id string) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// BalanceTransactionView is a balance transaction as the API shows it.
type BalanceTransactionView struct {
	ID string `json:"id"`
	// Account is "available" or "held".
	Account string `json:"account"`
	// Kind is the journal's kind (deposit_credit, withdrawal_hold, ...).
	Kind string `json:"kind"`
	// Amount is signed: what the movement added to the account.
	Amount       string `json:"amount"`
	BalanceAfter string `json:"balance_after"`
	Currency     string `json:"currency"`
	// ResourceID is the deposit or withdrawal moved for; null for a
	// manual adjustment.
	ResourceID *string `json:"resource_id"`
	CreatedAt  string  `json:"created_at"`
}

// NewBalanceTransactionView returns the wire shape of bt.
func NewBalanceTransactionView(bt *BalanceTransaction) BalanceTransactionView {
	return BalanceTransactionView{
		ID: bt.ID, Account: bt.Account, Kind: bt.Kind, Amount: FormatAmount(bt.Amount),
		BalanceAfter: FormatAmount(bt.BalanceAfter), Currency: Currency,
		ResourceID: nullable(bt.Reference), CreatedAt: FormatTime(bt.CreatedAt),
	}
}

// Exports: every row of a list in a time range, oldest first, a page at a
// time, each page in a read transaction of its own, so that memory stays
// one page whatever the range holds and no snapshot is held for the
// whole export.

// exportPage is the size of an export's pages.
const exportPage = MaxPageLimit

// ExportDeposits calls fn with each of the organization's deposits p
// selects (its filters and created range; its paging is ignored), oldest
// first, until fn returns an error.
func (e *Engine) ExportDeposits(ctx context.Context, p ListParams, fn func(*Deposit) error) error {
	return export(ctx, e, p, Tx.ListDepositsPage, func(d *Deposit) PageCursor { return PageCursor{d.CreatedAt, d.ID} }, fn)
}

// ExportWithdrawals is ExportDeposits for withdrawals.
func (e *Engine) ExportWithdrawals(ctx context.Context, p ListParams, fn func(*Withdrawal) error) error {
	return export(ctx, e, p, Tx.ListWithdrawalsPage, func(w *Withdrawal) PageCursor { return PageCursor{w.CreatedAt, w.ID} }, fn)
}

// ExportBalanceTransactions is ExportDeposits for balance transactions.
func (e *Engine) ExportBalanceTransactions(ctx context.Context, p ListParams, fn func(*BalanceTransaction) error) error {
	return export(ctx, e, p, Tx.ListBalanceTransactions, func(b *BalanceTransaction) PageCursor { return PageCursor{b.CreatedAt, b.ID} }, fn)
}

func export[T any](ctx context.Context, e *Engine, p ListParams,
	list func(tx Tx, ctx context.Context, p PageParams) ([]T, error), cursor func(T) PageCursor, fn func(T) error,
) error {
	p.StartingAfter, p.EndingBefore, p.Limit = "", "", 0
	if err := checkFilters(p, p.Type != "" || p.ResourceID != ""); err != nil {
		return err
	}
	// Before a row is after it in time: the first page starts before
	// every row of the range (no ID is less than "").
	at := PageCursor{CreatedAt: p.CreatedGTE}
	if at.CreatedAt.IsZero() {
		at.CreatedAt = time.Unix(0, 0).UTC()
	}
	pp := PageParams{
		OrganizationID: p.OrganizationID, CreatedGTE: p.CreatedGTE, CreatedLT: p.CreatedLT,
		Status: p.Status, PaymentMethod: p.PaymentMethod, MerchantID: p.MerchantID,
		ProviderTransactionID: p.ProviderTransactionID, Type: p.Type, ResourceID: p.ResourceID,
		Account: p.Account, Limit: exportPage, Before: &at,
	}
	for {
		var rows []T
		err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
			var err error
			rows, err = list(tx, ctx, pp)
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(rows) < exportPage {
			return nil
		}
		at = cursor(rows[len(rows)-1])
		pp.Before = &at
	}
}
