package payd_test

import (
	"context"
	"database/sql"
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

// Embed payd in a host application: a store on the host's own database
// handle, migrated when the host decides, the sandbox provider, the
// background work started by App.Run, and payd's whole handler mounted
// under the host's /payments. The README shows this function's body from
// sql.Open to the deposit (TestDocsGoBlocksAreExamples in internal/doccheck keeps
// the two the same).
func Example_embed() {
	dir, err := os.MkdirTemp("", "payd-embed")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	masterKey := make([]byte, engine.MasterKeySize) // in production: 32 random bytes, kept secret
	logger := slog.New(slog.DiscardHandler)

	db, err := sql.Open("sqlite", filepath.Join(dir, "shop.db")) // the host's own handle (modernc.org/sqlite)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := sqlite.New(db) // or postgres.New(pool); changes nothing yet
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	// The host decides when the schema changes: payd's own line and its provider's.
	if _, err := store.Migrate(ctx, sandbox.Migrations()); err != nil {
		log.Fatal(err)
	}
	keyring, err := engine.NewKeyring(masterKey) // seals signing secrets at rest
	if err != nil {
		log.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{}) // test mode; smsinbox.New, bkash or your own engine.Provider for money
	if err != nil {
		log.Fatal(err)
	}
	app, err := payd.New(payd.Config{
		Store: store, Keyring: keyring, Provider: sb, Logger: logger,
		PublicURL: "https://shop.example/payments", APIPrefix: "/api",
	})
	if err != nil {
		log.Fatal(err)
	}
	worked := make(chan error, 1)
	go func() { worked <- app.Run(ctx) }() // verification, expiry, payouts, refunds, webhooks, ledger checks
	defer func() { cancel(); <-worked }()

	mux := http.NewServeMux() // the host's own routes, and payd under /payments
	mux.Handle("/payments/", http.StripPrefix("/payments", app.Handler))

	// The engine is a library too: no HTTP, no API key.
	creds, err := app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("My Shop")})
	if err != nil {
		log.Fatal(err)
	}
	dep, _, err := app.Engine.CreateDeposit(ctx, engine.CreateDepositParams{
		OrganizationID: creds.Organization.ID, Amount: "500", PaymentMethod: "bkash",
		RedirectURL: "https://shop.example/orders/1001", MerchantID: "order-1001",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dep.Status, strings.TrimPrefix(dep.CheckoutURL, "https://shop.example/payments/")[:9])

	// The same deposit through the mounted API, as another service sees it.
	srv := httptest.NewServer(mux)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/payments/api/v1/deposits/"+dep.ID, nil)
	req.Header.Set("Authorization", "Bearer "+creds.APIKey.APIKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode)
	// Output:
	// pending checkout/
	// 200
}
