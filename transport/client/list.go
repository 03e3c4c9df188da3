package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// ListParams pages and filters a list (payd's extensions, Stripe's way).
// Zero values are not sent. Each list takes only its own filters; another
// is *Error invalid_request naming it.
type ListParams struct {
	// Limit is the page size, 1 to 100; zero is the server's 10 (the
	// iterators' 100).
	Limit int
	// StartingAfter and EndingBefore name an item of the list: the page of
	// older items after it, or of newer items before it. At most one.
	StartingAfter, EndingBefore string
	// CreatedGTE and CreatedLT bound the creation time: [gte, lt).
	CreatedGTE, CreatedLT time.Time
	// Deposits and withdrawals. ProviderTransactionID of a withdrawal is
	// its payout's provider reference.
	Status, PaymentMethod, MerchantID, ProviderTransactionID string
	// Events: Type is one of the Event constants; ResourceID a deposit or
	// withdrawal ID.
	Type, ResourceID string
	// Balance transactions: "available" or "held".
	Account string
	// Refunds: those of one deposit.
	DepositID string
}

// query encodes p as the list's query string.
func (p ListParams) query() string {
	q := url.Values{}
	set := func(name, v string) {
		if v != "" {
			q.Set(name, v)
		}
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	set("starting_after", p.StartingAfter)
	set("ending_before", p.EndingBefore)
	for name, t := range map[string]time.Time{"created[gte]": p.CreatedGTE, "created[lt]": p.CreatedLT} {
		if !t.IsZero() {
			q.Set(name, t.UTC().Format(time.RFC3339))
		}
	}
	set("status", p.Status)
	set("payment_method", p.PaymentMethod)
	set("merchant_id", p.MerchantID)
	set("provider_transaction_id", p.ProviderTransactionID)
	set("type", p.Type)
	set("resource_id", p.ResourceID)
	set("account", p.Account)
	set("deposit_id", p.DepositID)
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// List is one page of a list, newest first. HasMore says whether the list
// goes on past the page in the direction it was read (older items after
// StartingAfter or from the start; newer ones before EndingBefore).
type List[T any] struct {
	Data    []T  `json:"data"`     // the page's items
	HasMore bool `json:"has_more"` // whether the list goes on past this page
}

// BalanceTransaction is one movement of the organization's available or
// held balance.
type BalanceTransaction struct {
	ID string `json:"id"` // the movement's ID (bt_...), for paging
	// Account is "available" or "held".
	Account string `json:"account"`
	// Kind is the journal's kind: deposit_credit, withdrawal_hold,
	// withdrawal_settle, withdrawal_release, adjustment, late_payment.
	Kind string `json:"kind"`
	// Amount is signed.
	Amount string `json:"amount"`
	// BalanceAfter is the account's balance right after it.
	BalanceAfter string `json:"balance_after"`
	Currency     string `json:"currency"` // "BDT"
	// ResourceID is the deposit or withdrawal moved for; empty for a
	// manual adjustment.
	ResourceID string    `json:"resource_id"`
	CreatedAt  time.Time `json:"created_at"` // when it was journaled
}

// ListDeposits reads a page of deposits (GET /v1/deposits, signed: an
// organization that takes H2H deposits must sign it).
func (c *Client) ListDeposits(ctx context.Context, p ListParams) (*List[Deposit], error) {
	return list[Deposit](ctx, c, "/v1/deposits", p, true)
}

// ListWithdrawals reads a page of withdrawals (GET /v1/withdraws, bearer).
// With MerchantID it finds the withdrawal created with it: after
// CreateWithdrawal answered merchant_id_exists to a retry, the one the
// lost attempt made.
func (c *Client) ListWithdrawals(ctx context.Context, p ListParams) (*List[Withdrawal], error) {
	return list[Withdrawal](ctx, c, "/v1/withdraws", p, false)
}

// ListEvents reads a page of events (GET /v1/events, signed), each exactly
// as its webhooks carried it.
func (c *Client) ListEvents(ctx context.Context, p ListParams) (*List[Event], error) {
	return list[Event](ctx, c, "/v1/events", p, true)
}

// ListBalanceTransactions reads a page of the balance's movements (GET
// /v1/balance/transactions, signed: they name deposits and their amounts,
// so an organization that takes H2H deposits must sign it).
func (c *Client) ListBalanceTransactions(ctx context.Context, p ListParams) (*List[BalanceTransaction], error) {
	return list[BalanceTransaction](ctx, c, "/v1/balance/transactions", p, true)
}

// GetEvent reads an event (GET /v1/events/{id}, signed) as its webhooks
// carried it.
func (c *Client) GetEvent(ctx context.Context, id string) (*Event, error) {
	seg, err := pathID("event", id)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, call{method: http.MethodGet, path: "/v1/events/" + seg, signed: true})
	if err != nil {
		return nil, err
	}
	var e Event
	return &e, decode(resp, &e)
}

func list[T any](ctx context.Context, c *Client, path string, p ListParams, signed bool) (*List[T], error) {
	resp, err := c.do(ctx, call{method: http.MethodGet, path: path + p.query(), signed: signed})
	if err != nil {
		return nil, err
	}
	var l List[T]
	return &l, decode(resp, &l)
}

// Deposits returns every deposit p selects, a page at a time (see
// iterate): for d, err := range c.Deposits(ctx, p).
func (c *Client) Deposits(ctx context.Context, p ListParams) iter.Seq2[Deposit, error] {
	return iterate(ctx, p, c.ListDeposits, func(d Deposit) string { return d.ID })
}

// Withdrawals returns every withdrawal p selects, a page at a time.
func (c *Client) Withdrawals(ctx context.Context, p ListParams) iter.Seq2[Withdrawal, error] {
	return iterate(ctx, p, c.ListWithdrawals, func(w Withdrawal) string { return w.ID })
}

// Events returns every event p selects, a page at a time. A webhook
// receiver that was down catches up with EndingBefore set to the last
// event it handled: the events after it, oldest first.
func (c *Client) Events(ctx context.Context, p ListParams) iter.Seq2[Event, error] {
	return iterate(ctx, p, c.ListEvents, func(e Event) string { return e.ID })
}

// BalanceTransactions returns every balance movement p selects, a page at
// a time.
func (c *Client) BalanceTransactions(ctx context.Context, p ListParams) iter.Seq2[BalanceTransaction, error] {
	return iterate(ctx, p, c.ListBalanceTransactions, func(b BalanceTransaction) string { return b.ID })
}

// iterate pages through a list for the caller: newest first from
// StartingAfter (or the newest), or, when EndingBefore is set, oldest first
// towards the newest. Items created while it pages never make it repeat or
// skip one; those created after the page it reads are not returned. An
// error ends the sequence after yielding it.
func iterate[T any](ctx context.Context, p ListParams, page func(context.Context, ListParams) (*List[T], error), id func(T) string) iter.Seq2[T, error] {
	if p.Limit == 0 {
		p.Limit = 100
	}
	return func(yield func(T, error) bool) {
		backward := p.EndingBefore != ""
		for {
			l, err := page(ctx, p)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			items := l.Data
			if backward {
				items = slices.Clone(items)
				slices.Reverse(items)
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if !l.HasMore || len(items) == 0 {
				return
			}
			if backward {
				p.EndingBefore = id(items[len(items)-1])
			} else {
				p.StartingAfter = id(items[len(items)-1])
			}
		}
	}
}
