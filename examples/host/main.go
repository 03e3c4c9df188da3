// Command host is the smallest complete host of payd: its own *sql.DB, a
// migration it runs itself, a provider of its own (its bank feed: the
// payments its bKash agent wallet received, in a table of its own), payd's
// whole handler mounted under /payments/ with http.StripPrefix, and each
// order created with its deposit in one transaction of its own.
//
//	go run ./examples/host -addr 127.0.0.1:8095 -db "$(mktemp -d)/host.db"
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/shopspring/decimal"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8095", "address to listen on")
	dbPath := flag.String("db", "host.db", "the host's SQLite file, payd's tables included")
	flag.Parse()
	h, err := open(context.Background(), *dbPath, "http://"+*addr)
	if err != nil {
		log.Fatal(err)
	}
	go func() { log.Fatal(h.app.Run(context.Background())) }()
	log.Printf("listening on http://%s/ (POST /orders?amount=500), payd under /payments/", *addr)
	log.Fatal(http.ListenAndServe(*addr, h.mux()))
}

// host is the shop: its database, payd wired on it, its organization.
type host struct {
	db    *sql.DB
	store *sqlite.Store
	app   *payd.App
	org   string
	url   string // where payers reach the shop
}

func open(ctx context.Context, path, publicURL string) (*host, error) {
	// The host's own handle: IMMEDIATE transactions take SQLite's write
	// lock at BEGIN; busy_timeout waits for payd's writer instead of failing.
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, deposit_id TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS received (trx_id TEXT PRIMARY KEY, amount TEXT NOT NULL, payer TEXT NOT NULL, wallet TEXT NOT NULL, at TEXT NOT NULL)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	store, err := sqlite.New(db)
	if err != nil {
		return nil, err
	}
	if _, err := store.Migrate(ctx); err != nil { // the host decides when payd's schema changes
		return nil, err
	}
	keyring, err := loadKeyring(path + ".key")
	if err != nil {
		return nil, err
	}
	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: &bankFeed{db: db}, PublicURL: publicURL + "/payments"})
	if err != nil {
		return nil, err
	}
	h := &host{db: db, store: store, app: app, url: publicURL}
	orgs, err := app.Engine.ListOrganizations(ctx)
	if err != nil {
		return nil, err
	}
	if len(orgs) > 0 {
		h.org = orgs[0].ID
		return h, nil
	}
	name := "Tea House"
	creds, err := app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: &name})
	if err != nil {
		return nil, err
	}
	h.org = creds.Organization.ID
	_, err = app.Engine.AddWallet(ctx, engine.AddWalletParams{OrganizationID: h.org, Channel: "bkash",
		Operation: "send_money", Phone: "01711000001", Name: "Shop wallet"})
	return h, err
}

func (h *host) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/payments/", http.StripPrefix("/payments", h.app.Handler))
	mux.HandleFunc("POST /orders", h.order)
	mux.HandleFunc("GET /orders/{id}", h.status)
	return mux
}

// order writes an order and its deposit in one transaction of the host's
// (both commit or neither exists) and sends the payer to payd's page.
func (h *host) order(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer tx.Rollback() // a no-op after Commit
	id := engine.RandomToken(8)
	d, _, err := h.app.Engine.CreateDepositTx(ctx, h.store.HostTx(tx), engine.CreateDepositParams{
		OrganizationID: h.org, Amount: r.FormValue("amount"), PaymentMethod: "bkash",
		MerchantID: id, RedirectURL: h.url + "/orders/" + id,
	})
	if err == nil {
		_, err = tx.ExecContext(ctx, `INSERT INTO orders (id, deposit_id) VALUES (?, ?)`, id, d.ID)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.app.Engine.Wake()
	http.Redirect(w, r, d.CheckoutURL, http.StatusSeeOther)
}

func (h *host) status(w http.ResponseWriter, r *http.Request) {
	var depositID string
	if err := h.db.QueryRowContext(r.Context(), `SELECT deposit_id FROM orders WHERE id = ?`, r.PathValue("id")).Scan(&depositID); err != nil {
		http.NotFound(w, r)
		return
	}
	d, err := h.app.Engine.GetDeposit(r.Context(), h.org, depositID)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintf(w, "order %s: %s\n", r.PathValue("id"), d.Status)
}

func loadKeyring(path string) (*engine.Keyring, error) {
	key, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		key = make([]byte, engine.MasterKeySize)
		rand.Read(key)
		err = os.WriteFile(path, key, 0o600)
	}
	if err != nil {
		return nil, err
	}
	return engine.NewKeyring(key)
}

// bankFeed is the host's own provider: a payment is proven by a row of
// its table received (what its wallet's statement shows, times in RFC 3339), and the payer
// pays on payd's hosted page, whose address payd tells it.
type bankFeed struct {
	db        *sql.DB
	publicURL string
}

func (f *bankFeed) SetPublicURL(u string) { f.publicURL = u }

func (f *bankFeed) StartCheckout(_ context.Context, req engine.CheckoutRequest) (*engine.Checkout, error) {
	m, _ := engine.LookupMethod(req.PaymentMethod)
	return &engine.Checkout{URL: f.publicURL + "/checkout/" + req.Token, Operation: m.CheckoutOperation}, nil
}

func (f *bankFeed) LookupTransaction(ctx context.Context, req engine.LookupRequest) (*engine.ProviderTransaction, error) {
	var amount, payer, wallet, at string
	err := f.db.QueryRowContext(ctx, `SELECT amount, payer, wallet, at FROM received WHERE trx_id = ?`, req.TransactionID).Scan(&amount, &payer, &wallet, &at)
	if err == sql.ErrNoRows {
		return nil, engine.ErrTransactionNotFound
	} else if err != nil {
		return nil, err
	}
	completed, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return nil, err
	}
	return &engine.ProviderTransaction{Channel: req.Channel, TransactionID: req.TransactionID,
		Type: engine.TransactionSendMoney, Status: engine.TransactionCompleted,
		Amount: decimal.RequireFromString(amount), Currency: engine.Currency,
		PayerPhone: payer, RecipientPhone: wallet, CompletedAt: completed}, nil
}

// This feed sees money in, not out: no payouts.
func (*bankFeed) CheckPayoutMethod(context.Context, string) error { return engine.ErrMethodUnavailable }
func (*bankFeed) SendPayout(context.Context, engine.PayoutRequest) (*engine.Payout, error) {
	return nil, engine.ErrMethodUnavailable
}
func (*bankFeed) GetPayout(context.Context, string) (*engine.Payout, error) {
	return nil, engine.ErrPayoutNotFound
}
