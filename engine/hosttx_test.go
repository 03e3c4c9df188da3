package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/sqlite"
)

// host is an application with its own orders table on payd's database,
// reached through its own handle, as a host embedding payd has.
type host struct {
	t     *testing.T
	f     *fixture
	db    *sql.DB       // SQLite
	pool  *pgxpool.Pool // Postgres
	param func(n int) string
}

// hostTxn is one of the host's transactions.
type hostTxn struct {
	h    *host
	sql  *sql.Tx
	pg   pgx.Tx
	payd engine.HostTx
}

func newHost(t *testing.T, f *fixture) *host {
	t.Helper()
	h := &host{t: t, f: f}
	ctx := f.ctx
	if f.kind == "postgres" {
		cfg, err := pgxpool.ParseConfig(f.dsn)
		if err != nil {
			t.Fatal(err)
		}
		postgres.ConfigurePool(cfg)
		if h.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.pool.Close)
		h.param = func(n int) string { return fmt.Sprintf("$%d", n) }
	} else {
		var err error
		h.db, err = sql.Open("sqlite", "file:"+f.dsn+"?_txlock=immediate&_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.db.Close() })
		h.param = func(int) string { return "?" }
	}
	h.exec(`CREATE TABLE orders (id TEXT PRIMARY KEY, deposit_id TEXT NOT NULL)`)
	return h
}

func (h *host) exec(q string, args ...any) {
	h.t.Helper()
	var err error
	if h.pool != nil {
		_, err = h.pool.Exec(h.f.ctx, q, args...)
	} else {
		_, err = h.db.ExecContext(h.f.ctx, q, args...)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) begin() (*hostTxn, error) {
	x := &hostTxn{h: h}
	var err error
	if h.pool != nil {
		if x.pg, err = h.pool.Begin(h.f.ctx); err == nil {
			x.payd = h.f.store.(*postgres.Store).HostTx(x.pg)
		}
	} else if x.sql, err = h.db.BeginTx(h.f.ctx, nil); err == nil {
		x.payd = h.f.store.(*sqlite.Store).HostTx(x.sql)
	}
	return x, err
}

func (x *hostTxn) insertOrder(id, depositID string) error {
	q := `INSERT INTO orders (id, deposit_id) VALUES (` + x.h.param(1) + `, ` + x.h.param(2) + `)`
	var err error
	if x.pg != nil {
		_, err = x.pg.Exec(x.h.f.ctx, q, id, depositID)
	} else {
		_, err = x.sql.ExecContext(x.h.f.ctx, q, id, depositID)
	}
	return err
}

func (x *hostTxn) commit() error {
	if x.pg != nil {
		return x.pg.Commit(x.h.f.ctx)
	}
	return x.sql.Commit()
}

func (x *hostTxn) rollback() {
	if x.pg != nil {
		_ = x.pg.Rollback(x.h.f.ctx)
	} else {
		_ = x.sql.Rollback()
	}
}

// dump is every row of every table of the database, as text, by table:
// whatever payd writes anywhere shows in it.
func (h *host) dump() map[string][]string {
	h.t.Helper()
	ctx := h.f.ctx
	out := map[string][]string{}
	var tables []string
	if h.pool != nil {
		rows, err := h.pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
		if err != nil {
			h.t.Fatal(err)
		}
		if tables, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			h.t.Fatal(err)
		}
		for _, tb := range tables {
			rows, err := h.pool.Query(ctx, `SELECT * FROM `+tb)
			if err != nil {
				h.t.Fatal(err)
			}
			for rows.Next() {
				v, err := rows.Values()
				if err != nil {
					h.t.Fatal(err)
				}
				out[tb] = append(out[tb], fmt.Sprint(v...))
			}
			if rows.Err() != nil {
				h.t.Fatal(rows.Err())
			}
			sort.Strings(out[tb])
		}
		return out
	}
	rows, err := h.db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		h.t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			h.t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	for _, tb := range tables {
		rows, err := h.db.QueryContext(ctx, `SELECT * FROM "`+tb+`"`)
		if err != nil {
			h.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			v := make([]any, len(cols))
			p := make([]any, len(cols))
			for i := range v {
				p[i] = &v[i]
			}
			if err := rows.Scan(p...); err != nil {
				h.t.Fatal(err)
			}
			out[tb] = append(out[tb], fmt.Sprint(v...))
		}
		rows.Close()
		sort.Strings(out[tb])
	}
	if len(out) == 0 || len(tables) < 10 {
		h.t.Fatalf("dump found only tables %v", tables)
	}
	return out
}

// webhookLog is a WebhookClient that records what it is given, and
// whether the host had committed when it was.
type webhookLog struct {
	mu        sync.Mutex
	bodies    []string
	committed *atomic.Bool
	early     []string // deliveries made before the host committed
}

func (l *webhookLog) Deliver(_ context.Context, req engine.WebhookRequest) engine.WebhookResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bodies = append(l.bodies, string(req.Body))
	if l.committed != nil && !l.committed.Load() {
		l.early = append(l.early, string(req.Body))
	}
	return engine.WebhookResult{StatusCode: 200}
}

func (l *webhookLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range l.bodies {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

// withWebhooks rebuilds f's engine with hooks as its webhook sender.
func (f *fixture) withWebhooks(hooks engine.WebhookClient) {
	f.t.Helper()
	var err error
	f.eng, err = engine.New(engine.Config{Store: f.store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, Webhooks: hooks})
	if err != nil {
		f.t.Fatal(err)
	}
}

func h2hParams(orgID, merchantID string) engine.CreateDepositParams {
	return engine.CreateDepositParams{
		OrganizationID: orgID, CheckoutMode: "h2h", Amount: "500", PaymentMethod: "bkash_agent",
		RedirectURL: "https://shop.example/r", MerchantID: merchantID, PayerPhone: "01712345678",
	}
}

// The order and the deposit commit together; before the commit no one
// else sees the deposit; after it, it is paid and its webhook delivered.
// A withdrawal created in a host transaction is paid out and announced
// only after the commit, with Run working throughout.
func TestCreateDepositTxCommit(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		committed := new(atomic.Bool)
		hooks := &webhookLog{committed: committed}
		f.withWebhooks(hooks)
		orgID := f.withdrawalOrg("1000")
		if _, err := f.eng.UpdateOrganization(f.ctx, orgID, engine.OrganizationSettings{H2HEnabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		f.addWallet(orgID, "bkash", "cash_out", "01822222222")
		if _, _, err := f.eng.AddWebhookEndpoint(f.ctx, orgID, "https://shop.example/hooks"); err != nil {
			t.Fatal(err)
		}
		h := newHost(t, f)

		x, err := h.begin()
		if err != nil {
			t.Fatal(err)
		}
		d, created, err := f.eng.CreateDepositTx(f.ctx, x.payd, h2hParams(orgID, "order-1"))
		if err != nil || !created {
			t.Fatalf("CreateDepositTx: %v, created %v", err, created)
		}
		redirect, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, engine.CreateDepositParams{
			OrganizationID: orgID, Amount: "300", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "order-2",
		})
		if err != nil || redirect.CheckoutURL == "" {
			t.Fatalf("redirect CreateDepositTx: %v, %+v", err, redirect)
		}
		// The same merchant_id again in the same transaction is a replay.
		if again, created, err := f.eng.CreateDepositTx(f.ctx, x.payd, h2hParams(orgID, "order-1")); err != nil || created || again.ID != d.ID {
			t.Fatalf("replay in the transaction: %v, created %v", err, created)
		}
		w, err := f.eng.CreateWithdrawalTx(f.ctx, x.payd, engine.CreateWithdrawalParams{
			OrganizationID: orgID, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-1",
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := x.insertOrder("order-1", d.ID); err != nil {
			t.Fatal(err)
		}
		// Uncommitted: invisible to payd's own reads and API.
		if _, err := f.eng.GetDeposit(f.ctx, orgID, d.ID); !isCode(err, engine.CodeNotFound) {
			t.Fatalf("GetDeposit before the commit: %v, want not_found", err)
		}
		// Run works meanwhile (on SQLite it waits for the write lock the
		// host holds): it must neither pay nor announce the withdrawal.
		ctx, stop := context.WithCancel(f.ctx)
		ran := make(chan error, 1)
		go func() { ran <- f.eng.Run(ctx) }()
		defer func() { stop(); <-ran }()
		if f.kind == "postgres" {
			if n, err := f.eng.DeliverWebhooks(f.ctx); err != nil || n != 0 {
				t.Fatalf("DeliverWebhooks before the commit: %d, %v", n, err)
			}
		}
		time.Sleep(50 * time.Millisecond)
		committed.Store(true)
		if err := x.commit(); err != nil {
			t.Fatal(err)
		}
		f.eng.Wake()

		got, err := f.eng.GetDeposit(f.ctx, orgID, d.ID)
		if err != nil || got.WalletID == "" {
			t.Fatalf("GetDeposit after the commit: %v %+v", err, got)
		}
		waitFor(t, "withdraw.created delivered", func() bool { return hooks.has(`"withdraw.created"`) && hooks.has(w.ID) })
		f.provider.pay(f.payment(got, "TXN0000001"))
		f.mustSubmit(got, "TXN0000001")
		waitFor(t, "deposit.succeeded delivered", func() bool { return hooks.has(`"deposit.succeeded"`) && hooks.has(d.ID) })
		if len(hooks.early) > 0 {
			t.Fatalf("delivered before the host committed: %v", hooks.early)
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isCode(err error, code string) bool {
	var e *engine.Error
	return errors.As(err, &e) && e.Code == code
}

// A rollback leaves nothing anywhere: every row of every table is as it
// was, the wallet's assignment and the balance's hold included.
func TestCreateDepositTxRollback(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		orgID := f.withdrawalOrg("1000")
		if _, err := f.eng.UpdateOrganization(f.ctx, orgID, engine.OrganizationSettings{H2HEnabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		f.addWallet(orgID, "bkash", "cash_out", "01822222222")
		if _, _, err := f.eng.AddWebhookEndpoint(f.ctx, orgID, "https://shop.example/hooks"); err != nil {
			t.Fatal(err)
		}
		h := newHost(t, f)
		before := h.dump()

		x, err := h.begin()
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, h2hParams(orgID, "order-1"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, engine.CreateDepositParams{
			OrganizationID: orgID, Amount: "300", PaymentMethod: "bkash", RedirectURL: "https://shop.example/r", MerchantID: "order-2",
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.eng.CreateWithdrawalTx(f.ctx, x.payd, engine.CreateWithdrawalParams{
			OrganizationID: orgID, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-1",
		}); err != nil {
			t.Fatal(err)
		}
		if err := x.insertOrder("order-1", d.ID); err != nil {
			t.Fatal(err)
		}
		x.rollback()
		f.eng.Wake()

		if after := h.dump(); !reflect.DeepEqual(before, after) {
			for tb := range after {
				if !reflect.DeepEqual(before[tb], after[tb]) {
					t.Errorf("table %s changed:\nbefore %v\nafter  %v", tb, before[tb], after[tb])
				}
			}
			t.Fatal("a rolled-back host transaction left rows")
		}
		if n, err := f.eng.DeliverWebhooks(f.ctx); err != nil || n != 0 {
			t.Fatalf("DeliverWebhooks after the rollback: %d, %v", n, err)
		}
		if n := f.payouts(); n != 0 {
			t.Fatalf("ProcessPayouts after the rollback claimed %d", n)
		}
		// The merchant_ids are free again.
		if _, created, err := f.eng.CreateDeposit(f.ctx, h2hParams(orgID, "order-1")); err != nil || !created {
			t.Fatalf("CreateDeposit after the rollback: %v, created %v", err, created)
		}
	})
}

// A refused or failed call leaves the host's transaction usable and
// unchanged: it commits its order without a trace of payd's attempt.
func TestCreateDepositTxErrorLeavesHostTx(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		h := newHost(t, f)
		if _, _, err := f.eng.CreateDeposit(f.ctx, h2hParams(f.org.ID, "taken")); err != nil {
			t.Fatal(err)
		}
		off := []string{"upi"}
		if _, err := f.eng.UpdateOrganization(f.ctx, f.org.ID, engine.OrganizationSettings{DisabledMethods: &off}); err != nil {
			t.Fatal(err)
		}
		before := h.dump()
		x, err := h.begin()
		if err != nil {
			t.Fatal(err)
		}
		other := h2hParams(f.org.ID, "taken")
		other.Amount = "600"
		if _, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, other); !isCode(err, engine.CodeMerchantIDConflict) {
			t.Fatalf("a different request: %v, want merchant_id_conflict", err)
		}
		// No wallet for nagad: refused after the lookups, inside payd's
		// savepoint.
		nagad := h2hParams(f.org.ID, "order-9")
		nagad.PaymentMethod = "nagad_agent"
		if _, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, nagad); err == nil {
			t.Fatal("a deposit with no wallet to pay into was created")
		}
		// A method the organization turned off: refused, nothing written.
		if _, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, engine.CreateDepositParams{
			OrganizationID: f.org.ID, Amount: "300", PaymentMethod: "upi", RedirectURL: "https://shop.example/r", MerchantID: "upi-1",
		}); !isCode(err, engine.CodeForbidden) {
			t.Fatalf("a deposit by a method turned off: %v, want forbidden", err)
		}
		// Withdrawals are not enabled: refused, nothing written.
		if _, err := f.eng.CreateWithdrawalTx(f.ctx, x.payd, engine.CreateWithdrawalParams{
			OrganizationID: f.org.ID, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "p",
		}); !isCode(err, engine.CodeForbidden) {
			t.Fatalf("withdrawal of a disabled organization: %v", err)
		}
		if err := x.insertOrder("order-9", ""); err != nil {
			t.Fatalf("the host's transaction is not usable after payd's errors: %v", err)
		}
		if err := x.commit(); err != nil {
			t.Fatal(err)
		}
		after := h.dump()
		if len(after["orders"]) != 1 {
			t.Fatalf("orders %v", after["orders"])
		}
		delete(after, "orders")
		delete(before, "orders")
		if !reflect.DeepEqual(before, after) {
			t.Fatal("payd's failed calls left rows in the committed transaction")
		}
	})
}

// A HostTx of another store is refused before anything is written.
func TestCreateDepositTxForeignStore(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	other, err := sqlite.Open(f.ctx, filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	x, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Rollback()
	if _, _, err := f.eng.CreateDepositTx(f.ctx, other.HostTx(x), h2hParams(f.org.ID, "o")); !errors.Is(err, engine.ErrForeignHostTx) {
		t.Fatalf("HostTx of another store: %v", err)
	}
	// The engine's store adapting a transaction on another file.
	own := f.store.(*sqlite.Store).HostTx(x)
	if _, _, err := f.eng.CreateDepositTx(f.ctx, own, h2hParams(f.org.ID, "o")); err == nil || !strings.Contains(err.Error(), "the transaction is on") {
		t.Fatalf("HostTx on another file: %v", err)
	}
}

// On SQLite the host's transaction holds the one write lock; payd's calls
// in it never wait for payd's own writer, which waits for that lock.
func TestCreateDepositTxSQLiteWriteLock(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	orgID := f.withdrawalOrg("1000")
	h := newHost(t, f)
	x, err := h.begin() // IMMEDIATE: the write lock from here
	if err != nil {
		t.Fatal(err)
	}
	defer x.rollback()
	start := time.Now()
	if _, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, h2hParams(f.org.ID, "order-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.CreateWithdrawalTx(f.ctx, x.payd, engine.CreateWithdrawalParams{
		OrganizationID: orgID, Amount: "100", Phone: "01712345678", PaymentMethod: "bkash", MerchantID: "payout-1",
	}); err != nil {
		t.Fatal(err)
	}
	// busy_timeout is 10 s: a wait for the writer would show.
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the calls took %v under the host's write lock", d)
	}
}

// Host transactions racing with one merchant_id, each with its own order:
// one deposit exists, every committed order names it, and the one that
// created it is the only one told created.
func TestCreateDepositTxConcurrentMerchantID(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		h := newHost(t, f)
		const n = 8
		var created atomic.Int32
		ids := make([]string, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				for try := 0; ; try++ {
					x, err := h.begin()
					if err != nil {
						t.Error(err)
						return
					}
					f.clock.Add(time.Second) // each try assigns the wallet at a time of its own
					d, c, err := f.eng.CreateDepositTx(f.ctx, x.payd, h2hParams(f.org.ID, "same-order"))
					if err == nil {
						err = x.insertOrder(fmt.Sprintf("order-%d", i), d.ID)
					}
					if err == nil {
						err = x.commit()
					} else {
						x.rollback()
					}
					if err != nil && try < 20 {
						continue // the host retries its transaction
					} else if err != nil {
						t.Error(err)
						return
					}
					if c {
						created.Add(1)
					}
					ids[i] = d.ID
					return
				}
			})
		}
		close(start)
		wg.Wait()
		if created.Load() != 1 {
			t.Fatalf("%d transactions created the deposit, want 1", created.Load())
		}
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("orders name deposits %v", ids)
			}
		}
		dump := h.dump()
		if len(dump["orders"]) != n || len(dump["deposits"]) != 1 {
			t.Fatalf("%d orders, %d deposits", len(dump["orders"]), len(dump["deposits"]))
		}
		// The losers' wallet assignments went with their savepoints: the
		// wallet was last assigned to the one deposit.
		d, err := f.eng.GetDeposit(f.ctx, f.org.ID, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		ws, err := f.eng.ListWallets(f.ctx, f.org.ID)
		if err != nil || len(ws) != 1 {
			t.Fatal(err, len(ws))
		}
		w := ws[0]
		if w.LastAssignedAt == nil || !w.LastAssignedAt.Equal(d.CreatedAt) {
			t.Fatalf("wallet last assigned at %v, its one deposit was created at %v", w.LastAssignedAt, d.CreatedAt)
		}
	})
}

// A host that dies with its transaction open (its connection gone, or its
// process: the database files as a crash leaves them) leaves neither its
// order nor the deposit.
func TestCreateDepositTxCrash(t *testing.T) {
	onEachStore(t, func(t *testing.T, newFixture func(t *testing.T) *fixture) {
		f := newFixture(t)
		h := newHost(t, f)
		x, err := h.begin()
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := f.eng.CreateDepositTx(f.ctx, x.payd, h2hParams(f.org.ID, "order-1"))
		if err != nil {
			t.Fatal(err)
		}
		if err := x.insertOrder("order-1", d.ID); err != nil {
			t.Fatal(err)
		}
		var orders, deposits int
		if f.kind == "postgres" {
			// The host's backend killed mid-transaction.
			if _, err := h.pool.Exec(f.ctx, `SELECT pg_terminate_backend($1)`, x.pg.Conn().PgConn().PID()); err != nil {
				t.Fatal(err)
			}
			x.rollback()
			count := func(q string) (n int) {
				if err := h.pool.QueryRow(f.ctx, q).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			orders, deposits = count(`SELECT count(*) FROM orders`), count(`SELECT count(*) FROM deposits`)
		} else {
			// The files as they are now, uncommitted pages and all, are
			// what a crash of the whole process leaves.
			crash := filepath.Join(t.TempDir(), "crash.db")
			for _, suffix := range []string{"", "-wal"} {
				copyFile(t, f.dsn+suffix, crash+suffix)
			}
			x.rollback()
			db, err := sql.Open("sqlite", crash)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.QueryRow(`SELECT count(*) FROM orders`).Scan(&orders); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(`SELECT count(*) FROM deposits`).Scan(&deposits); err != nil {
				t.Fatal(err)
			}
		}
		if orders != 0 || deposits != 0 {
			t.Fatalf("after the crash: %d orders, %d deposits", orders, deposits)
		}
		if _, err := f.eng.GetDeposit(f.ctx, f.org.ID, d.ID); !isCode(err, engine.CodeNotFound) {
			t.Fatalf("GetDeposit: %v", err)
		}
	})
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
}
