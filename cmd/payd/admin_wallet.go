package main

import (
	"context"
	"flag"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// walletView is a receiving wallet as admin commands print it.
type walletView struct {
	WalletID       string  `json:"wallet_id"`
	OrganizationID string  `json:"organization_id"`
	Channel        string  `json:"channel"`
	Operation      string  `json:"operation"`
	Phone          string  `json:"phone"`
	Name           string  `json:"name"`
	QRPayload      string  `json:"qr_payload,omitempty"`
	MinAmount      *string `json:"min_amount"`
	MaxAmount      *string `json:"max_amount"`
	DailyLimit     *string `json:"daily_limit"`
	Enabled        bool    `json:"enabled"`
	LastAssignedAt *string `json:"last_assigned_at"`
	// LiveUntil is set for a wallet proven by an SMS device: it is out of
	// the pool after it unless the device reports.
	LiveUntil *string `json:"live_until,omitempty"`
}

func newWalletView(w *engine.Wallet) walletView {
	amount := func(d decimal.NullDecimal) *string {
		if !d.Valid {
			return nil
		}
		s := engine.FormatAmount(d.Decimal)
		return &s
	}
	v := walletView{
		WalletID: w.ID, OrganizationID: w.OrganizationID, Channel: w.Channel, Operation: w.Operation,
		Phone: w.Phone, Name: w.Name, QRPayload: w.QRPayload,
		MinAmount: amount(w.MinAmount), MaxAmount: amount(w.MaxAmount), DailyLimit: amount(w.DailyLimit),
		Enabled: w.Enabled,
	}
	if w.LastAssignedAt != nil {
		s := engine.FormatTime(*w.LastAssignedAt)
		v.LastAssignedAt = &s
	}
	if w.LiveUntil != nil {
		s := engine.FormatTime(*w.LiveUntil)
		v.LiveUntil = &s
	}
	return v
}

func walletAdd(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	var p engine.AddWalletParams
	fs.StringVar(&p.OrganizationID, "org", "", "organization ID")
	fs.StringVar(&p.Channel, "channel", "", engine.OneOf(engine.WalletChannels()))
	fs.StringVar(&p.Operation, "operation", "", engine.OneOf(engine.WalletOperations())+": cash_out for an agent wallet, make_payment for a merchant wallet, send_money for a personal wallet (serves the hosted checkout of plain bkash, nagad and rocket deposits; SMS inbox)")
	fs.StringVar(&p.Phone, "phone", "", "the wallet's Bangladesh mobile number")
	fs.StringVar(&p.Name, "name", "", "name shown to payers")
	fs.StringVar(&p.QRPayload, "qr-payload", "", "QR payload shown to payers (optional)")
	fs.StringVar(&p.MinAmount, "min-amount", "", "smallest deposit this wallet takes (optional)")
	fs.StringVar(&p.MaxAmount, "max-amount", "", "largest deposit this wallet takes (optional)")
	fs.StringVar(&p.DailyLimit, "daily-limit", "", "most this wallet takes per Dhaka day across live deposits (optional)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		w, err := eng.AddWallet(ctx, p)
		if err != nil {
			return nil, err
		}
		return newWalletView(w), nil
	}
}

func walletList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		ws, err := eng.ListWallets(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]walletView, len(ws))
		for i, w := range ws {
			views[i] = newWalletView(w)
		}
		return map[string]any{"wallets": views}, nil
	}
}

func walletEnable(enabled bool) func(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	return func(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
		org := fs.String("org", "", "organization ID")
		wallet := fs.String("wallet", "", "wallet ID")
		return func(ctx context.Context, eng *engine.Engine) (any, error) {
			w, err := eng.SetWalletEnabled(ctx, *org, *wallet, enabled)
			if err != nil {
				return nil, err
			}
			return newWalletView(w), nil
		}
	}
}
