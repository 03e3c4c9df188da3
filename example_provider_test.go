package payd_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/shopspring/decimal"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
)

// walletAPI is a host's own provider: the money network it already talks
// to, behind engine.Provider. Its function fields (the style of payd's own
// test doubles) stand for the host's client of that network.
type walletAPI struct {
	LookupFunc func(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error)
}

var _ engine.Provider = walletAPI{}

// StartCheckout: this network has no hosted page; deposits are H2H.
func (walletAPI) StartCheckout(context.Context, engine.CheckoutRequest) (*engine.Checkout, error) {
	return nil, engine.ErrMethodUnavailable
}

func (w walletAPI) LookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	return w.LookupFunc(ctx, req)
}

// Payouts are not offered through this network.
func (walletAPI) CheckPayoutMethod(context.Context, string) error { return engine.ErrMethodUnavailable }

func (walletAPI) SendPayout(context.Context, engine.PayoutRequest) (*engine.Payout, error) {
	return nil, engine.ErrMethodUnavailable
}

func (walletAPI) GetPayout(context.Context, string) (*engine.Payout, error) {
	return nil, engine.ErrPayoutNotFound
}

// Wire payd with a provider of the host's own: New takes any
// engine.Provider. A payer pays an agent wallet, submits the transaction
// ID, and the provider's lookup proves the deposit.
func Example_ownProvider() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "payd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "payd.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		log.Fatal(err)
	}

	var paidAt time.Time // the payment is made once the deposit exists
	network := walletAPI{LookupFunc: func(_ context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
		if req.TransactionID != "9XK2M7QW4T" {
			return nil, engine.ErrTransactionNotFound
		}
		return &engine.ProviderTransaction{
			Channel: req.Channel, TransactionID: req.TransactionID, Type: engine.TransactionCashOut,
			Status: engine.TransactionCompleted, Amount: decimal.RequireFromString("500"), Currency: engine.Currency,
			PayerPhone: "01712345678", RecipientPhone: "01711000001", CompletedAt: paidAt,
		}, nil
	}}
	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: network, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}

	creds, err := app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("My Shop"), H2HEnabled: ptr(true)})
	if err != nil {
		log.Fatal(err)
	}
	org := creds.Organization.ID
	if _, err := app.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: org, Channel: "bkash", Operation: "cash_out", Phone: "01711000001", Name: "Agent"}); err != nil {
		log.Fatal(err)
	}
	d, _, err := app.Engine.CreateDeposit(ctx, engine.CreateDepositParams{
		OrganizationID: org, CheckoutMode: engine.CheckoutH2H, Amount: "500", PaymentMethod: "bkash_agent",
		PayerPhone: "01712345678", RedirectURL: "https://shop.example/return", MerchantID: "order-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	paidAt = time.Now().UTC()
	if _, err := app.Engine.SubmitTransactionID(ctx, engine.VerifyParams{OrganizationID: org, DepositID: d.ID, TransactionID: "9XK2M7QW4T"}); err != nil {
		log.Fatal(err)
	}
	// App.Run does this in the background; the example does one pass.
	if _, err := app.Engine.ProcessAttempts(ctx); err != nil {
		log.Fatal(err)
	}
	d, err = app.Engine.GetDeposit(ctx, org, d.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Status, d.ProviderTransactionID)
	// Output: succeeded 9XK2M7QW4T
}
