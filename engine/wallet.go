package engine

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Wallet is a receiving wallet of an organization: a phone number on a
// channel that payers pay by cash-out (agent wallets) or payment (merchant
// wallets). display_instructions deposits draw their recipient from the
// organization's enabled wallets in rotation.
type Wallet struct {
	ID             string
	OrganizationID string
	Channel        string
	Operation      string
	Phone          string
	// Name is shown to the payer; empty means none (null on the wire).
	Name string
	// QRPayload, when set, is returned as next_action.qr_payload.
	QRPayload string
	// Optional limits: the amounts a single deposit may have, and the total
	// of live deposits assigned per Dhaka calendar day.
	MinAmount  decimal.NullDecimal
	MaxAmount  decimal.NullDecimal
	DailyLimit decimal.NullDecimal
	Enabled    bool
	// LastAssignedAt orders the rotation; nil for a wallet never used.
	LastAssignedAt *time.Time
	// LiveUntil, when set, is when the device that proves this wallet's
	// payments (an SMS inbox phone) is next due to report; after it the
	// wallet is out of the pool until the device reports again. Written by
	// that provider, never by the engine: UpdateWallet leaves it alone.
	LiveUntil *time.Time
	CreatedAt time.Time
}

// AddWalletParams describes a new receiving wallet.
type AddWalletParams struct {
	OrganizationID string
	Channel        string
	Operation      string
	Phone          string
	Name           string
	QRPayload      string
	MinAmount      string // optional amounts; empty means no limit
	MaxAmount      string
	DailyLimit     string
}

// AddWallet adds a receiving wallet to an organization's pool.
func (e *Engine) AddWallet(ctx context.Context, p AddWalletParams) (*Wallet, error) {
	if !slices.Contains(WalletChannels(), p.Channel) {
		return nil, Invalid("channel", "must be "+OneOf(WalletChannels()))
	}
	if !slices.Contains(WalletOperations(), p.Operation) {
		return nil, Invalid("operation", "must be "+OneOf(WalletOperations()))
	}
	phone, err := NormalizePhone("phone", p.Phone)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSpace(p.Name)
	if len(name) > 100 {
		return nil, Invalid("name", "must be at most 100 characters")
	}
	if len(p.QRPayload) > 1024 {
		return nil, Invalid("qr_payload", "must be at most 1024 characters")
	}
	for _, t := range [][2]string{{"name", name}, {"qr_payload", p.QRPayload}} {
		if err := checkText(t[0], t[1]); err != nil {
			return nil, err
		}
	}
	now := e.now()
	w := &Wallet{
		ID:             NewID(PrefixWallet, now),
		OrganizationID: p.OrganizationID,
		Channel:        p.Channel,
		Operation:      p.Operation,
		Phone:          phone,
		Name:           name,
		QRPayload:      p.QRPayload,
		Enabled:        true,
		CreatedAt:      now,
	}
	for _, l := range []struct {
		field string
		src   string
		dst   *decimal.NullDecimal
	}{
		{"min_amount", p.MinAmount, &w.MinAmount},
		{"max_amount", p.MaxAmount, &w.MaxAmount},
		{"daily_limit", p.DailyLimit, &w.DailyLimit},
	} {
		if l.src == "" {
			continue
		}
		d, err := ParseAmount(l.field, l.src)
		if err != nil {
			return nil, err
		}
		*l.dst = decimal.NewNullDecimal(d)
	}
	if w.MinAmount.Valid && w.MaxAmount.Valid && w.MinAmount.Decimal.GreaterThan(w.MaxAmount.Decimal) {
		return nil, Invalid("min_amount", "must not exceed max_amount")
	}
	err = e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, p.OrganizationID); err != nil {
			return notFound(err, "organization")
		}
		err := tx.CreateWallet(ctx, w)
		if errors.Is(err, ErrDuplicate) {
			return Invalid("phone", "the organization already has this wallet for the channel and operation")
		} else if err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditWalletAdd, w.OrganizationID, w.ID, map[string]string{
			"channel": w.Channel, "operation": w.Operation, "phone": w.Phone, "name": w.Name,
		})
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// ListWallets returns the wallets of an organization.
func (e *Engine) ListWallets(ctx context.Context, orgID string) ([]*Wallet, error) {
	var ws []*Wallet
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		ws, err = tx.ListWallets(ctx, ListWalletsParams{OrganizationID: orgID})
		return err
	})
	return ws, err
}

// SetWalletEnabled takes a wallet into or out of the recipient pool.
// Deposits already assigned to it keep it as their recipient.
func (e *Engine) SetWalletEnabled(ctx context.Context, orgID, walletID string, enabled bool) (*Wallet, error) {
	var w *Wallet
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if w, err = tx.LockWallet(ctx, orgID, walletID); err != nil {
			return notFound(err, "wallet")
		}
		w.Enabled = enabled
		if err := tx.UpdateWallet(ctx, w); err != nil {
			return err
		}
		action := AuditWalletDisable
		if enabled {
			action = AuditWalletEnable
		}
		return e.audit(ctx, tx, action, w.OrganizationID, w.ID, nil)
	})
	return w, err
}

// pickWallet chooses the recipient of a display_instructions deposit: the
// least recently assigned enabled wallet whose limits admit the amount, which
// it marks as assigned now. Returns method_unavailable if none is eligible.
//
// pools are those of a transaction shared by several creates (see
// txBatcher), nil for a create alone. Shared, a pool is listed and locked
// once, by the first pick: the later ones pick from that list as the
// earlier ones left it (nobody else can change a locked pool), and each
// wallet's last assignment is written once, as the batch ends
// (lockedPools.flush). Daily limits are still read from the deposits, which
// include those the batch created before.
func pickWallet(ctx context.Context, tx Tx, pools *lockedPools, orgID string, m Method, amount decimal.Decimal, now time.Time, requireLive bool) (*Wallet, error) {
	key := orgID + "/" + m.Channel + "/" + m.Operation
	candidates, listed := pools.list(key)
	if !listed {
		var err error
		candidates, err = tx.ListWallets(ctx, ListWalletsParams{
			OrganizationID: orgID, Channel: m.Channel, Operation: m.Operation, EnabledOnly: true, ForUpdate: true,
		})
		if err != nil {
			return nil, err
		}
		pools.keep(key, candidates)
	}
	local := now.In(Dhaka)
	dayStart := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, Dhaka).UTC()
	for _, w := range candidates {
		if w.LiveUntil != nil && !now.Before(*w.LiveUntil) || w.LiveUntil == nil && requireLive {
			continue // its phone has gone silent, or there is none: payments to it could not be proven
		}
		if w.MinAmount.Valid && amount.LessThan(w.MinAmount.Decimal) ||
			w.MaxAmount.Valid && amount.GreaterThan(w.MaxAmount.Decimal) {
			continue
		}
		if w.DailyLimit.Valid {
			amounts, err := tx.WalletDepositAmounts(ctx, w.ID, dayStart)
			if err != nil {
				return nil, err
			}
			// With the deposits assigned to it in this transaction, which
			// are written at its flush.
			amounts = append(amounts, pools.pendingAmounts(w.ID)...)
			if decimal.Sum(amount, amounts...).GreaterThan(w.DailyLimit.Decimal) {
				continue
			}
		}
		w.LastAssignedAt = &now
		if pools != nil {
			pools.assigned(key, w, amount)
			return w, nil
		}
		if err := tx.UpdateWallet(ctx, w); err != nil {
			return nil, err
		}
		return w, nil
	}
	// Refused before anything was assigned or written (CreateDeposit relies
	// on it).
	return nil, Errorf(CodeMethodUnavailable, "payment_method: no receiving wallet is available for %s %s right now", m.Channel, m.Operation)
}

// lockedPools are the wallet pools that the creates sharing a transaction
// have listed (and so locked), by organization, channel and operation,
// least recently assigned first, and the wallets they assigned, whose
// LastAssignedAt is not written yet. A nil *lockedPools keeps nothing.
type lockedPools struct {
	lists map[string][]*Wallet
	dirty map[string]*Wallet // by ID
	// amounts are those of the deposits assigned to each wallet (by ID)
	// in the transaction, not yet written (see insertDeposit): a daily
	// limit counts them.
	amounts map[string][]decimal.Decimal
}

// newLockedPools returns the empty pools of a shared transaction.
func newLockedPools() *lockedPools {
	return &lockedPools{lists: map[string][]*Wallet{}, dirty: map[string]*Wallet{}, amounts: map[string][]decimal.Decimal{}}
}

// pendingAmounts are the amounts assigned to the wallet walletID in the
// transaction.
func (p *lockedPools) pendingAmounts(walletID string) []decimal.Decimal {
	if p == nil {
		return nil
	}
	return p.amounts[walletID]
}

func (p *lockedPools) list(key string) ([]*Wallet, bool) {
	if p == nil {
		return nil, false
	}
	ws, ok := p.lists[key]
	return ws, ok
}

func (p *lockedPools) keep(key string, ws []*Wallet) {
	if p != nil {
		p.lists[key] = ws
	}
}

// assigned records that w of the pool key was just assigned: the pool is
// put back in rotation order, as ListWallets would list it now.
func (p *lockedPools) assigned(key string, w *Wallet, amount decimal.Decimal) {
	p.dirty[w.ID] = w
	p.amounts[w.ID] = append(p.amounts[w.ID], amount)
	slices.SortStableFunc(p.lists[key], rotationOrder)
}

// flush writes the wallets assigned since the pools were listed, once each,
// in ID order.
func (p *lockedPools) flush(ctx context.Context, tx Tx) error {
	ids := slices.Sorted(maps.Keys(p.dirty))
	for _, id := range ids {
		if err := tx.UpdateWallet(ctx, p.dirty[id]); err != nil {
			return err
		}
	}
	clear(p.dirty)
	clear(p.amounts)
	return nil
}

// rotationOrder is the order of Store.ListWallets: never assigned first,
// then least recently assigned, then by ID.
func rotationOrder(a, b *Wallet) int {
	switch {
	case a.LastAssignedAt == nil && b.LastAssignedAt != nil:
		return -1
	case a.LastAssignedAt != nil && b.LastAssignedAt == nil:
		return 1
	case a.LastAssignedAt != nil:
		if c := a.LastAssignedAt.Compare(*b.LastAssignedAt); c != 0 {
			return c
		}
	}
	return strings.Compare(a.ID, b.ID)
}
