package paydmock_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydmock"
	"github.com/payd-engine/payd/paydtest"
)

// A host's test runs payd with a fake provider, which answers the
// checkout the test expects and records what payd asked.
func Example() {
	var asked engine.CheckoutRequest
	provider := &paydmock.Provider{
		StartCheckoutFunc: func(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
			asked = req
			return &engine.Checkout{URL: "https://wallet.example/pay/" + req.DepositID}, nil
		},
	}
	dir, err := os.MkdirTemp("", "paydmock-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := paydtest.Open(dir, paydtest.WithProvider(provider))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	org := s.NewOrg(engine.OrganizationSettings{})
	d, _, err := s.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{
		OrganizationID: org.ID, Amount: "500", PaymentMethod: "bkash",
		RedirectURL: "https://shop.example/return", MerchantID: "order-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.CheckoutURL == "https://wallet.example/pay/"+d.ID, asked.Amount, asked.PaymentMethod)
	// Output: true 500 bkash
}
