// Command embedded is a host application that embeds payd: its own web
// shop on its own http.ServeMux and its own SQLite file, with payd wired
// by payd.New in the same process and payd's whole handler (the API, the
// hosted checkout, payment links, the console) mounted under the shop's
// path /payments with http.StripPrefix, next to the shop's routes.
//
// The shop keeps its orders in its own table of the same SQLite file, and
// calls the engine directly (no HTTP, no API key): it creates an H2H
// deposit for an order, sends the customer to payd's hosted page for it,
// and fulfils the order only when the deposit's status is succeeded. Other
// services can still use the API with the key printed on first start.
//
//	go run ./examples/embedded -addr 127.0.0.1:8090 -db shop.db
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
)

// mount is where the shop serves payd's handler: the API under
// /payments/api, the hosted checkout under /payments/checkout/, payment
// links under /payments/pay/ and the console under /payments/console/.
const mount = "/payments"

// apiPrefix is where payd's API is under the mount (payd.Config.APIPrefix).
const apiPrefix = "/api"

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "address to listen on")
	dbPath := flag.String("db", "shop.db", "the shop's SQLite file (payd's tables live in it; the master key goes next to it as <db>.key)")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *dbPath, logger); err != nil {
		logger.Error("shop stopped", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, dbPath string, logger *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s, err := openShop(ctx, dbPath, "http://"+ln.Addr().String(), logger)
	if err != nil {
		return err
	}
	defer s.Close()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	workCtx, stopWork := context.WithCancel(context.Background())
	worked := make(chan error, 1)
	go func() { worked <- s.app.Run(workCtx) }() // verification, expiry, payouts, webhooks, ledger checks
	logger.Info("shop listening", "url", "http://"+ln.Addr().String()+"/", "api", "http://"+ln.Addr().String()+mount+apiPrefix)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = srv.Shutdown(shutdownCtx)
	}
	stopWork()
	<-worked
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// shop is the host application: its store, payd wired over it, and the
// organization the shop is in payd.
type shop struct {
	store     *sqlite.Store
	db        *sql.DB // the shop's own handle: its table, and payd's store built on it
	app       *payd.App
	engine    *engine.Engine
	orgID     string
	publicURL string
	logger    *slog.Logger
}

// openShop opens (or creates) the shop's database and wires payd into it.
// publicURL is where customers reach the shop, for checkout links.
func openShop(ctx context.Context, dbPath, publicURL string, logger *slog.Logger) (*shop, error) {
	key, err := masterKey(dbPath + ".key")
	if err != nil {
		return nil, err
	}
	keyring, err := engine.NewKeyring(key)
	if err != nil {
		return nil, err
	}
	// One file, two owners: the shop's own handle, on which payd's store is
	// built; the shop migrates payd's tables (and the sandbox's) when it
	// starts, as it does its own.
	db, err := openOrders(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	store, err := sqlite.New(db)
	if err != nil {
		db.Close()
		return nil, err
	}
	if _, err := store.Migrate(ctx, sandbox.Migrations()); err != nil {
		store.Close()
		db.Close()
		return nil, err
	}
	// payd wired as the reference server wires it: the sandbox provider
	// (test mode; payd.New gives it its store and public URL), the engine
	// and payd's HTTP handler, which links to itself under the mount.
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		store.Close()
		db.Close()
		return nil, err
	}
	app, err := payd.New(payd.Config{
		Store: store, Keyring: keyring, Provider: sb,
		PublicURL: publicURL + mount, APIPrefix: apiPrefix, Logger: logger,
	})
	if err != nil {
		store.Close()
		db.Close()
		return nil, err
	}
	s := &shop{store: store, db: db, app: app, engine: app.Engine, publicURL: publicURL, logger: logger}
	if s.orgID, err = s.bootstrap(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes payd's store (its own connections), then the shop's handle.
func (s *shop) Close() error { return errors.Join(s.store.Close(), s.db.Close()) }

// openOrders opens the shop's own handle on the file (storage/sqlite
// registers modernc.org/sqlite's "sqlite" driver) and creates its orders
// table; payd's store is built on the same handle.
func openOrders(ctx context.Context, dbPath string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS shop_orders (
		order_id     TEXT PRIMARY KEY,
		deposit_id   TEXT NOT NULL UNIQUE,
		fulfilled_at TEXT
	)`)
	if err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// bootstrap returns the shop's organization, creating it with a receiving
// wallet on first start (and printing the API credentials once).
func (s *shop) bootstrap(ctx context.Context) (string, error) {
	orgs, err := s.engine.ListOrganizations(ctx)
	if err != nil {
		return "", err
	}
	if len(orgs) > 0 {
		return orgs[0].ID, nil
	}
	creds, err := s.engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("Embedded Shop"), H2HEnabled: ptr(true)})
	if err != nil {
		return "", err
	}
	orgID := creds.Organization.ID
	if _, err := s.engine.AddWallet(ctx, engine.AddWalletParams{
		OrganizationID: orgID, Channel: "bkash", Operation: "cash_out",
		Phone: "01711000001", Name: "Agent Rahim", QRPayload: "bkash://cashout?agent=01711000001",
	}); err != nil {
		return "", err
	}
	s.logger.Info("created the shop's payd organization; the API key and signing secret are shown only now",
		"organization_id", orgID, "api_key", creds.APIKey.APIKey, "signing_secret", creds.APIKey.SigningSecret)
	return orgID, nil
}

// Handler is the shop's mux: its own routes, and payd's whole handler
// under the mount.
func (s *shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.home)
	mux.HandleFunc("POST /orders", s.createOrder)
	mux.HandleFunc("GET /orders/{id}", s.order)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle(mount+"/", http.StripPrefix(mount, s.app.Handler))
	return mux
}

var page = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Embedded Shop</title></head>
<body>
<h1>Embedded Shop</h1>
{{if .Order}}
<p>Order <code>{{.Order.MerchantID}}</code>: {{.Order.Amount}} BDT, payment <strong id="status">{{.Order.Status}}</strong>.</p>
{{if eq .Order.Status "succeeded"}}<p id="fulfilled">Paid: your order ships today.</p>
{{else if .Pending}}<p><a href="{{.CheckoutURL}}">Pay now</a> · <a href="">Refresh</a></p>{{end}}
{{else}}
<form method="post" action="/orders">
<p>Tea set, 750.50 BDT</p>
<label>Your bKash number <input name="phone" value="01712345678"></label>
<button>Buy with bKash</button>
</form>
{{end}}
</body></html>
`))

func (s *shop) home(w http.ResponseWriter, _ *http.Request) {
	_ = page.Execute(w, map[string]any{})
}

// createOrder creates an H2H deposit for a new order through the engine
// and sends the customer to payd's hosted page for it.
func (s *shop) createOrder(w http.ResponseWriter, r *http.Request) {
	orderID := "order-" + hex.EncodeToString(randomBytes(6))
	d, _, err := s.engine.CreateDeposit(r.Context(), engine.CreateDepositParams{
		OrganizationID: s.orgID, CheckoutMode: engine.CheckoutH2H, Amount: "750.50",
		PaymentMethod: "bkash_agent", MerchantID: orderID, PayerPhone: r.FormValue("phone"),
		RedirectURL: s.publicURL + "/orders/" + orderID,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, err := s.db.ExecContext(r.Context(), `INSERT INTO shop_orders (order_id, deposit_id) VALUES (?, ?)`, orderID, d.ID); err != nil {
		http.Error(w, "could not save the order", http.StatusInternalServerError)
		return
	}
	http.Redirect(w, r, mount+"/checkout/"+d.CheckoutToken, http.StatusSeeOther)
}

// order shows an order and fulfils it only when its deposit's status is
// succeeded: the customer arriving here from the checkout (with
// ?deposit_id=...&status=...) proves nothing by itself.
func (s *shop) order(w http.ResponseWriter, r *http.Request) {
	orderID := r.PathValue("id")
	var depositID string
	err := s.db.QueryRowContext(r.Context(), `SELECT deposit_id FROM shop_orders WHERE order_id = ?`, orderID).Scan(&depositID)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	d, err := s.engine.GetDeposit(r.Context(), s.orgID, depositID)
	if err != nil {
		http.Error(w, "payment lookup failed", http.StatusInternalServerError)
		return
	}
	if d.Status == engine.StatusSucceeded {
		res, err := s.db.ExecContext(r.Context(), `UPDATE shop_orders SET fulfilled_at = ? WHERE order_id = ? AND fulfilled_at IS NULL`,
			time.Now().UTC().Format(time.RFC3339), orderID)
		if err != nil {
			http.Error(w, "could not fulfil the order", http.StatusInternalServerError)
			return
		}
		if n, _ := res.RowsAffected(); n == 1 {
			s.logger.Info("fulfil order", "order", orderID, "deposit", d.ID)
		}
	}
	_ = page.Execute(w, map[string]any{
		"Order":   map[string]string{"MerchantID": d.MerchantID, "Amount": engine.FormatAmount(d.Amount), "Status": d.Status},
		"Pending": !d.IsTerminal(), "CheckoutURL": mount + "/checkout/" + d.CheckoutToken,
	})
}

// masterKey reads the hex master key at path, creating it on first start.
func masterKey(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return hex.DecodeString(strings.TrimSpace(string(b)))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := randomBytes(engine.MasterKeySize)
	return key, os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return b
}

func ptr[T any](v T) *T { return &v }
