package smsinbox

import (
	"context"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox/smsparse"
)

// StartCheckout opens payd's own hosted checkout, paid by Send Money into
// a personal wallet of the organization, for a method personal wallets
// serve (engine.Method.CheckoutOperation); the engine draws the wallet.
// Any other method has no checkout here: an SMS inbox has no provider's
// page to send the payer to.
func (p *Provider) StartCheckout(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	m, ok := engine.LookupMethod(req.PaymentMethod)
	base := *p.publicURL.Load()
	if !ok || m.CheckoutOperation == "" || !strings.HasPrefix(base, "http") {
		return nil, engine.ErrMethodUnavailable
	}
	return &engine.Checkout{URL: base + "/checkout/" + req.Token, Operation: m.CheckoutOperation}, nil
}

// CheckoutOffer: the inbox opens the checkouts of the methods paid to a
// personal wallet (engine.CheckoutOfferer), paid by its operation.
func (p *Provider) CheckoutOffer(m engine.Method) (bool, string) {
	return m.CheckoutOperation != "", m.CheckoutOperation
}

var _ engine.CheckoutOfferer = (*Provider)(nil)

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
				PayerPhone: payerShown(m, req.PayerPhone), RecipientPhone: w.Phone,
				CompletedAt: m.Parsed.Time.UTC(), TimePrecision: time.Minute,
			}
			return nil
		}
		return engine.ErrTransactionNotFound
	})
	return t, err
}

// payerShown is the payer number a message proves: its counterparty; or,
// for a Rocket message that prints the payer's account masked ("***946"),
// claimed when the digits it shows end the claimed number's Rocket
// account (the 11-digit number and one check digit, which is not
// checked), and "" otherwise. A mask proves only the digits it shows: the
// transaction ID, the exact amount and the balance chain carry the rest of
// the proof. The account is not stored: it is read again from the text.
func payerShown(m *SMS, claimed string) string {
	if m.Parsed.Counterparty != "" || m.Channel != smsparse.ChannelRocket || claimed == "" {
		return m.Parsed.Counterparty
	}
	again, err := smsparse.Parse(m.Sender, m.Body)
	if err != nil || again.TransactionID != m.Parsed.TransactionID {
		return ""
	}
	digits := strings.TrimLeft(again.Account, "*")
	if len(digits) < 2 || len(digits) == len(again.Account) || !strings.HasSuffix(claimed, digits[:len(digits)-1]) {
		return ""
	}
	return claimed
}
