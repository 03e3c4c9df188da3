package payd_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// Wire payd over a SQLite file with the sandbox provider, start its
// background work with the one call that does (App.Run), and serve its
// handler.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "payd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := sqlite.Open(ctx, filepath.Join(dir, "payd.db"), sandbox.Migrations()) // payd's migrations and the sandbox's
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize)) // keep a real key secret
	if err != nil {
		log.Fatal(err)
	}
	// The sandbox is built by its constructor; New gives it its store (with
	// the engine's group commit) and its public URL.
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		log.Fatal(err)
	}
	app, err := payd.New(payd.Config{
		Store: store, Keyring: keyring, Provider: sb,
		PublicURL: "https://pay.example", APIPrefix: "/api",
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		log.Fatal(err)
	}
	workCtx, stop := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() { worked <- app.Run(workCtx) }() // verification, expiry, payouts, webhooks, ledger checks
	defer func() { stop(); <-worked }()

	creds, err := app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("My Shop")})
	if err != nil {
		log.Fatal(err)
	}
	d, _, err := app.Engine.CreateDeposit(ctx, engine.CreateDepositParams{
		OrganizationID: creds.Organization.ID, Amount: "500", PaymentMethod: "bkash",
		RedirectURL: "https://shop.example/return", MerchantID: "order-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Status, strings.HasPrefix(d.CheckoutURL, "https://pay.example/checkout/"))

	// app.Handler serves the API under /api, the checkout, payment links
	// and the console: here on a test server, usually http.ListenAndServe.
	srv := httptest.NewServer(app.Handler)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/api/openapi.json")
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode)
	// Output:
	// pending true
	// 200
}
