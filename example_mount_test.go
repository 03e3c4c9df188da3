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
	"github.com/payd-engine/payd/transport/client"
)

// Mount payd's whole handler under a path of the host's own mux with
// http.StripPrefix. PublicURL names the mount; when the listener's address
// is known only later, New takes the path alone and App.SetPublicURL
// completes it. Every URL payd writes then points under the mount.
func Example_mount() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "payd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "payd.db"), sandbox.Migrations())
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		log.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		log.Fatal(err)
	}
	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: sb,
		PublicURL: "/payments", APIPrefix: "/api", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "the host's shop") })
	mux.Handle("/payments/", http.StripPrefix("/payments", app.Handler))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if err := app.SetPublicURL(srv.URL + "/payments"); err != nil {
		log.Fatal(err)
	}

	creds, err := app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("My Shop")})
	if err != nil {
		log.Fatal(err)
	}
	api := client.New(srv.URL+"/payments/api", creds.APIKey.APIKey, creds.APIKey.SigningSecret)
	d, err := api.CreateRedirectDeposit(ctx, client.RedirectDepositRequest{
		Amount: "500", PaymentMethod: "bkash", RedirectURL: "https://shop.example/return", MerchantID: "order-1"})
	if err != nil {
		log.Fatal(err)
	}
	checkout := strings.TrimPrefix(*d.RedirectURL, srv.URL)
	fmt.Println(checkout[:len("/payments/checkout/")])
	res, err := http.Get(*d.RedirectURL)
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode)
	// Output:
	// /payments/checkout/
	// 200
}
