package payd_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/sqlite"
)

// A shop keeps its orders in the SQLite file payd uses, through its own
// *sql.DB, and creates each order and its deposit in one transaction:
// both commit, or neither exists.
func Example_hostTransaction() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "payd-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The host's handle. IMMEDIATE transactions take SQLite's one write
	// lock at BEGIN; busy_timeout waits for payd's writer instead of
	// failing.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "shop.db")+"?_txlock=immediate&_pragma=busy_timeout(10000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE orders (id TEXT PRIMARY KEY, deposit_id TEXT NOT NULL)`); err != nil {
		log.Fatal(err)
	}
	store, err := sqlite.New(db)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Migrate(ctx, sandbox.Migrations()); err != nil {
		log.Fatal(err)
	}
	keyring, err := engine.NewKeyring(make([]byte, engine.MasterKeySize))
	if err != nil {
		log.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		log.Fatal(err)
	}
	app, err := payd.New(payd.Config{Store: store, Keyring: keyring, Provider: sb,
		PublicURL: "https://shop.example/payments", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	creds, err := app.Engine.CreateOrganization(ctx, engine.OrganizationSettings{Name: ptr("My Shop")})
	if err != nil {
		log.Fatal(err)
	}

	// order places an order and its deposit in one transaction of the
	// host's, which commits or, with fail, rolls back.
	order := func(id string, fail bool) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback() // a no-op after Commit
		d, _, err := app.Engine.CreateDepositTx(ctx, store.HostTx(tx), engine.CreateDepositParams{
			OrganizationID: creds.Organization.ID, Amount: "500", PaymentMethod: "bkash",
			RedirectURL: "https://shop.example/orders/" + id, MerchantID: id,
		})
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id, deposit_id) VALUES (?, ?)`, id, d.ID); err != nil {
			return err
		}
		if fail {
			return fmt.Errorf("order %s: out of stock", id)
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		app.Engine.Wake() // optional: Run would find new work at its next look
		return nil
	}

	count := func(merchantID string) (orders, deposits int) {
		_ = db.QueryRowContext(ctx, `SELECT count(*) FROM orders WHERE id = ?`, merchantID).Scan(&orders)
		_ = db.QueryRowContext(ctx, `SELECT count(*) FROM deposits WHERE merchant_id = ?`, merchantID).Scan(&deposits)
		return orders, deposits
	}
	fmt.Println(order("order-1", false))
	fmt.Println(count("order-1"))
	fmt.Println(order("order-2", true))
	fmt.Println(count("order-2"))
	// Output:
	// <nil>
	// 1 1
	// order order-2: out of stock
	// 0 0
}

// On Postgres the host's pgx.Tx, from a pool configured by
// postgres.ConfigurePool, is adapted by the store built on that pool.
func Example_hostTransactionPostgres() {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	postgres.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	store := postgres.New(pool)
	var app *payd.App // payd.New(payd.Config{Store: store, ...})

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback(ctx)
	d, _, err := app.Engine.CreateDepositTx(ctx, store.HostTx(tx), engine.CreateDepositParams{
		OrganizationID: "org_...", Amount: "500", PaymentMethod: "bkash",
		RedirectURL: "https://shop.example/orders/order-1", MerchantID: "order-1",
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO orders (id, deposit_id) VALUES ($1, $2)`, "order-1", d.ID); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}
	app.Engine.Wake()
}
