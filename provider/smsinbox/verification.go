package smsinbox

import (
	"context"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// StartCheckout refuses: an SMS inbox has no hosted checkout.
func (p *Provider) StartCheckout(context.Context, engine.CheckoutRequest) (*engine.Checkout, error) {
	return nil, engine.ErrMethodUnavailable
}

// transactionTypes are the payer's operations the credits prove.
var transactionTypes = map[string]string{
	smsparse.KindMoneyReceived:   engine.TransactionSendMoney,
	smsparse.KindCashIn:          engine.TransactionCashIn,
	smsparse.KindPaymentReceived: engine.TransactionPayment,
	smsparse.KindCashOutReceived: engine.TransactionCashOut,
}

// LookupTransaction reports a payment proven by an accepted SMS of the
// organization. A message that is held, a copy or a conflict proves
// nothing: the transaction is not found (yet).
func (p *Provider) LookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	var t *engine.ProviderTransaction
	err := p.store.InboxReadTx(ctx, func(ctx context.Context, tx Tx) error {
		same, err := tx.ListSMSByTransactionID(ctx, req.OrganizationID, req.Channel, req.TransactionID)
		if err != nil {
			return err
		}
		for _, m := range same {
			if m.Status != StatusAccepted || !m.Parsed.Credit {
				continue
			}
			w, err := tx.GetWallet(ctx, m.OrganizationID, m.WalletID)
			if err != nil {
				return err
			}
			typ := transactionTypes[m.Parsed.Kind]
			if typ == "" {
				typ = m.Parsed.Kind // a credit no deposit is paid by (a cashback)
			}
			t = &engine.ProviderTransaction{
				Channel: m.Channel, TransactionID: m.Parsed.TransactionID, Type: typ,
				Status: engine.TransactionCompleted, Amount: m.Parsed.Amount, Currency: engine.Currency,
				PayerPhone: m.Parsed.Counterparty, RecipientPhone: w.Phone,
				CompletedAt: m.Parsed.Time.UTC(), TimePrecision: time.Minute,
			}
			return nil
		}
		return engine.ErrTransactionNotFound
	})
	return t, err
}
