package bkash

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// LookupTransaction reports a bKash payment of a connected organization: a
// checkout payment this provider executed (its own record, what bKash
// answered), else what bKash's transaction search shows under the
// organization's credentials, which are one merchant's: a payment to
// another merchant is not found there. The engine applies the rules
// (completed, the exact amount, the payer, the window, never used). Not
// found by bKash is asked of the fallback (an SMS inbox proves the
// organization's personal and agent wallets); bKash unreachable, with the
// fallback not finding it either, is engine.ErrProviderUnavailable (the
// attempt is delayed and retried).
func (p *Provider) LookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	if req.Channel != engine.ChannelBkash {
		return p.fallbackLookup(ctx, req)
	}
	if err := p.checkStore(); err != nil {
		return nil, err
	}
	if pay, err := p.store.GetPaymentByTrx(ctx, req.OrganizationID, req.TransactionID); err == nil {
		if pay.State != StateExecuted && pay.State != StateSubmitted {
			return nil, engine.ErrTransactionNotFound
		}
		return &engine.ProviderTransaction{Channel: engine.ChannelBkash, TransactionID: pay.TrxID,
			Type: engine.TransactionPayment, Status: engine.TransactionCompleted, Amount: pay.Amount,
			Currency: engine.Currency, PayerPhone: pay.PayerPhone, CompletedAt: pay.CompletedAt}, nil
	} else if !errors.Is(err, engine.ErrNotFound) {
		return nil, err
	}
	var ans searchAnswer
	err := p.api(ctx, req.OrganizationID, func(c credentials) string { return c.BaseURL + "/tokenized/checkout/general/searchTransaction" },
		map[string]string{"trxID": req.TransactionID}, &ans)
	switch {
	case errors.Is(err, ErrNotConnected), isAPIError(err, codeTrxNotFound):
		return p.fallbackLookup(ctx, req)
	case err != nil && unavailable(err):
		p.logFault(ctx, "search transaction", req.OrganizationID, err)
		t, ferr := p.fallbackLookup(ctx, req)
		if ferr == nil {
			return t, nil
		}
		return nil, engine.ErrProviderUnavailable
	case err != nil:
		return nil, err
	}
	t, ok := searched(&ans, req)
	if !ok {
		p.logFault(ctx, "search transaction", req.OrganizationID, errors.New("an answer of unexpected shape"))
		return nil, engine.ErrProviderUnavailable
	}
	return t, nil
}

// searched maps a search answer to the engine's words; false for an answer
// that cannot be read (retried, never judged).
func searched(ans *searchAnswer, req engine.LookupRequest) (*engine.ProviderTransaction, bool) {
	amount, err := decimal.NewFromString(ans.Amount)
	if err != nil {
		return nil, false
	}
	t := &engine.ProviderTransaction{Channel: engine.ChannelBkash, TransactionID: strings.ToUpper(strings.TrimSpace(ans.TrxID)),
		Amount: amount, Currency: ans.Currency, TimePrecision: time.Second}
	switch strings.ToLower(ans.TransactionStatus) {
	case "completed":
		t.Status = engine.TransactionCompleted
	case "initiated", "pending", "authorized":
		t.Status = engine.TransactionPending
	default:
		t.Status = engine.TransactionFailed
	}
	switch typ := strings.ToLower(ans.TransactionType); {
	case strings.Contains(typ, "send money"):
		t.Type = engine.TransactionSendMoney
	case strings.Contains(typ, "cash out"):
		t.Type = engine.TransactionCashOut
	case strings.Contains(typ, "cash in"):
		t.Type = engine.TransactionCashIn
	case strings.Contains(typ, "payment"):
		t.Type = engine.TransactionPayment
	default:
		t.Type = "other"
	}
	if ans.CustomerMsisdn != "" {
		t.PayerPhone, _ = engine.NormalizePhone("customerMsisdn", ans.CustomerMsisdn)
	}
	if t.CompletedAt, err = parseBkashTime(ans.CompletedTime, t.Status); err != nil {
		return nil, false
	}
	// bKash shows the merchant only its own payments: this one was made to
	// the merchant whose number the payer was given.
	t.RecipientPhone = req.RecipientPhone
	return t, true
}

func parseBkashTime(s, status string) (time.Time, error) {
	t, ok := parseTime(s)
	if !ok && status == engine.TransactionCompleted {
		return time.Time{}, errors.New("no completion time")
	}
	return t, nil
}

func (p *Provider) fallbackLookup(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	if p.fallback == nil {
		return nil, engine.ErrTransactionNotFound
	}
	return p.fallback.LookupTransaction(ctx, req)
}

// Payouts are the fallback's: bKash's checkout API sends none.

// CheckPayoutMethod is the fallback's; unavailable without one.
func (p *Provider) CheckPayoutMethod(ctx context.Context, method string) error {
	if p.fallback == nil {
		return engine.ErrMethodUnavailable
	}
	return p.fallback.CheckPayoutMethod(ctx, method)
}

// SendPayout is the fallback's.
func (p *Provider) SendPayout(ctx context.Context, req engine.PayoutRequest) (*engine.Payout, error) {
	if p.fallback == nil {
		return nil, engine.ErrProviderUnavailable
	}
	return p.fallback.SendPayout(ctx, req)
}

// GetPayout is the fallback's.
func (p *Provider) GetPayout(ctx context.Context, key string) (*engine.Payout, error) {
	if p.fallback == nil {
		return nil, engine.ErrPayoutNotFound
	}
	return p.fallback.GetPayout(ctx, key)
}
