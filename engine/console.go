package engine

import (
	"context"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The console's reads: searches of deposits and withdrawals for an
// operator, and today's counts for its overview. Each is served from an
// index (see migration 0016) and bounded by a limit.

// MaxSearchResults bounds a console search.
const MaxSearchResults = 200

// SearchDepositsParams filter SearchDeposits; empty fields match all. The
// engine requires OrganizationID: only the store searches every
// organization (unindexed, for tools and tests).
type SearchDepositsParams struct {
	OrganizationID string
	MerchantID     string
	// TransactionID matches a deposit any of whose attempts claimed it.
	TransactionID string
	PayerPhone    string
	Status        string
	// From and To bound the creation time (To exclusive); zero: open.
	From, To time.Time
	Limit    int
	// Channels are the channels whose attempts a TransactionID is looked
	// up on; the engine fills them.
	Channels []string
}

// SearchDeposits finds deposits for an operator, newest first.
func (e *Engine) SearchDeposits(ctx context.Context, p SearchDepositsParams) ([]*Deposit, error) {
	if p.OrganizationID == "" {
		return nil, Invalid("organization", "is required")
	}
	if p.TransactionID != "" {
		id, err := NormalizeTransactionID("transaction_id", p.TransactionID)
		if err != nil {
			return nil, err
		}
		p.TransactionID, p.Channels = id, Channels()
	}
	if p.PayerPhone != "" {
		phone, err := NormalizePhone("payer_phone", p.PayerPhone)
		if err != nil {
			return nil, err
		}
		p.PayerPhone = phone
	}
	if p.Limit <= 0 || p.Limit > MaxSearchResults {
		p.Limit = MaxSearchResults
	}
	var out []*Deposit
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.SearchDeposits(ctx, p)
		return err
	})
	return out, err
}

// SearchWithdrawalsParams filter SearchWithdrawals like SearchDeposits.
type SearchWithdrawalsParams struct {
	OrganizationID string
	MerchantID     string
	Status         string
	Limit          int
}

// SearchWithdrawals finds withdrawals for an operator, newest first.
func (e *Engine) SearchWithdrawals(ctx context.Context, p SearchWithdrawalsParams) ([]*Withdrawal, error) {
	if p.OrganizationID == "" {
		return nil, Invalid("organization", "is required")
	}
	if p.Limit <= 0 || p.Limit > MaxSearchResults {
		p.Limit = MaxSearchResults
	}
	var out []*Withdrawal
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.SearchWithdrawals(ctx, p)
		return err
	})
	return out, err
}

// StatusCounts are how many deposits and withdrawals of an organization
// were created since a time, by status.
type StatusCounts struct {
	Deposits    map[string]int
	Withdrawals map[string]int
}

// CountSince counts the deposits and withdrawals created since since, by
// status, through the creation-time indexes: the cost follows that day's
// rows, not the history.
func (e *Engine) CountSince(ctx context.Context, orgID string, since time.Time) (*StatusCounts, error) {
	if orgID == "" {
		return nil, Invalid("organization", "is required")
	}
	var c StatusCounts
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if c.Deposits, err = tx.CountDepositsSince(ctx, orgID, since); err != nil {
			return err
		}
		c.Withdrawals, err = tx.CountWithdrawalsSince(ctx, orgID, since)
		return err
	})
	return &c, err
}

// ListResourceEvents returns the events of a resource (a deposit or withdrawal)
// of an organization, oldest first.
func (e *Engine) ListResourceEvents(ctx context.Context, orgID, resourceID string) ([]*Event, error) {
	var out []*Event
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		out, err = tx.ListEvents(ctx, ListEventsParams{OrganizationID: orgID, ResourceID: resourceID, Limit: 100})
		return err
	})
	return out, err
}

// ListEventDeliveriesOf returns the deliveries of one event with their
// posts.
func (e *Engine) ListEventDeliveriesOf(ctx context.Context, orgID, eventID string) ([]DeliveryWithAttempts, error) {
	var out []DeliveryWithAttempts
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		ds, err := tx.ListDeliveries(ctx, ListDeliveriesParams{OrganizationID: orgID, EventID: eventID})
		if err != nil {
			return err
		}
		for _, d := range ds {
			as, err := tx.ListDeliveryAttempts(ctx, d.ID)
			if err != nil {
				return err
			}
			out = append(out, DeliveryWithAttempts{Delivery: d, Posts: as})
		}
		return nil
	})
	return out, err
}

// GetEvent returns an event of an organization, or not_found.
func (e *Engine) GetEvent(ctx context.Context, orgID, id string) (*Event, error) {
	var ev *Event
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		ev, err = tx.GetEvent(ctx, id)
		return err
	})
	if err == nil && ev.OrganizationID != orgID {
		err = ErrNotFound
	}
	if err != nil {
		return nil, notFound(err, "event")
	}
	return ev, nil
}

// AuditWalletLimits is recorded when an operator changes a wallet's limits.
const AuditWalletLimits = "wallet.limits"

// WalletLimits are a wallet's optional limits as an operator types them:
// amounts, "" for no limit.
type WalletLimits struct {
	MinAmount, MaxAmount, DailyLimit string
}

// SetWalletLimits replaces a wallet's limits (the amounts one deposit may
// have, and its daily total); they apply to the next pick.
func (e *Engine) SetWalletLimits(ctx context.Context, orgID, walletID string, l WalletLimits) (*Wallet, error) {
	var limits [3]decimal.NullDecimal
	for i, f := range []struct{ field, src string }{{"min_amount", l.MinAmount}, {"max_amount", l.MaxAmount}, {"daily_limit", l.DailyLimit}} {
		if strings.TrimSpace(f.src) == "" {
			continue
		}
		d, err := ParseAmount(f.field, strings.TrimSpace(f.src))
		if err != nil {
			return nil, err
		}
		limits[i] = decimal.NewNullDecimal(d)
	}
	if limits[0].Valid && limits[1].Valid && limits[0].Decimal.GreaterThan(limits[1].Decimal) {
		return nil, Invalid("min_amount", "must not exceed max_amount")
	}
	var w *Wallet
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if w, err = tx.LockWallet(ctx, orgID, walletID); err != nil {
			return notFound(err, "wallet")
		}
		w.MinAmount, w.MaxAmount, w.DailyLimit = limits[0], limits[1], limits[2]
		if err := tx.UpdateWallet(ctx, w); err != nil {
			return err
		}
		show := func(d decimal.NullDecimal) string {
			if !d.Valid {
				return "none"
			}
			return FormatAmount(d.Decimal)
		}
		return e.audit(ctx, tx, AuditWalletLimits, w.OrganizationID, w.ID, map[string]string{
			"min_amount": show(w.MinAmount), "max_amount": show(w.MaxAmount), "daily_limit": show(w.DailyLimit)})
	})
	return w, err
}
