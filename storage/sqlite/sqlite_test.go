package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/conformance/storetest"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/shopspring/decimal"
	_ "modernc.org/sqlite"
)

// TestStore holds the store to the suite every store must pass. The tests
// below it are of what only SQLite has: files and paths, pragmas,
// migrations of an older schema, and the write lock shared with other
// processes.
//
// The suite runs on stores a host builds from its own handle (New), then
// migrates when it decides (Migrate).
func TestStore(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) storetest.Store {
		ctx := context.Background()
		db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "payd.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := sqlite.New(db)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// base is a UTC time at microsecond precision, as the engine produces.
var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

func openStore(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "payd.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, path
}

// write and read run fn in a transaction and fail the test on error.
func write(t *testing.T, s *sqlite.Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, s *sqlite.Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.ReadTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func newOrg(id string) *engine.Organization {
	return &engine.Organization{ID: id, Name: "Org " + id, CreatedAt: base, UpdatedAt: base}
}

func createOrg(t *testing.T, s *sqlite.Store, id string) {
	t.Helper()
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg(id)) })
}

// countRows counts a table's rows through a connection of its own, so that
// nothing the store's methods filter hides a row left behind.
func countRows(t *testing.T, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMigrationsIdempotent(t *testing.T) {
	ctx := context.Background()
	s, path := openStore(t)
	createOrg(t, s, "org_1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s2, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetOrganization(ctx, "org_1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var versions, first int
	if err := db.QueryRow(`SELECT count(*), min(version) FROM payd_migrations WHERE line = 'main'`).Scan(&versions, &first); err != nil {
		t.Fatal(err)
	}
	if versions < 1 || first != 1 {
		t.Errorf("payd_migrations: %d rows from version %d", versions, first)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %s, want wal", mode)
	}
}

// A database made before 0003 gains its columns with their defaults: the
// existing organizations have no fee overrides and the existing journals no
// actor.
func TestMigrateFrom0002(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "payd.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{`CREATE TABLE schema_migrations (
		version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`}
	for _, name := range []string{"0001_init.sql", "0002_verification.sql"} {
		b, err := os.ReadFile(filepath.Join("migrations", name))
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(b))
	}
	stmts = append(stmts,
		`INSERT INTO schema_migrations VALUES (1, 0), (2, 0)`,
		fmt.Sprintf(`INSERT INTO organizations VALUES ('org_1', 'Old', 1, 0, 1, 60000000000, 60000000000,
			'1', '2', '0', '0', %d, %d)`, base.UnixMicro(), base.UnixMicro()),
		fmt.Sprintf(`INSERT INTO journals VALUES ('jnl_1', 'org_1', 'deposit_credit', 'dep_1', '', %d)`, base.UnixMicro()),
	)
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read(t, s, func(ctx context.Context, tx engine.Tx) error {
		org, err := tx.GetOrganization(ctx, "org_1")
		if err != nil {
			return err
		}
		if len(org.MethodFees.Deposit) != 0 || len(org.MethodFees.Withdraw) != 0 || org.Name != "Old" {
			t.Errorf("migrated organization: %+v", org)
		}
		js, err := tx.ListJournals(ctx, "org_1")
		if err != nil {
			return err
		}
		if len(js) != 1 || js[0].Actor != "" {
			t.Errorf("migrated journals: %+v", js)
		}
		return nil
	})
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateWithdrawal(ctx, &engine.Withdrawal{
			ID: "wdr_1", OrganizationID: "org_1", MerchantID: "m1", Amount: decimal.RequireFromString("500"),
			PaymentMethod: "bkash", Account: "01711111111", Metadata: []byte("{}"),
			Status: engine.WithdrawalProcessing, PayoutStep: engine.PayoutToSend, CreatedAt: base, UpdatedAt: base,
		})
	})
}

func TestOpenRejectsURIs(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file:x.db", "x.db?mode=ro"} {
		if s, err := sqlite.Open(context.Background(), p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
}

// TestOpenPathWithURICharacters opens a database in a directory whose name
// holds characters that mean something in a URI.
func TestOpenPathWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a#b%20c d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "payd.db")
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not where it was asked to be: %v", err)
	}
}

// Deleting an endpoint leaves no row of it behind, not even one that no
// method of the store would read (the suite checks what the methods read).
func TestDeleteWebhookEndpointLeavesNoRows(t *testing.T) {
	s, path := openStore(t)
	createOrg(t, s, "org_1")
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		return errors.Join(
			tx.CreateWebhookEndpoint(ctx, &engine.WebhookEndpoint{ID: "whe_1", OrganizationID: "org_1", URL: "https://x", Secret: []byte("s"), Enabled: true}),
			tx.CreateEvent(ctx, &engine.Event{ID: "evt_1", OrganizationID: "org_1", Payload: []byte("{}"), CreatedAt: base}),
			tx.CreateDelivery(ctx, &engine.Delivery{ID: "dlv_1", EventID: "evt_1", EndpointID: "whe_1", OrganizationID: "org_1", Status: engine.DeliveryPending}),
			tx.CreateDeliveryAttempt(ctx, &engine.DeliveryAttempt{DeliveryID: "dlv_1", AttemptedAt: base, StatusCode: 500}),
			tx.CreateDeliveryAttempt(ctx, &engine.DeliveryAttempt{DeliveryID: "dlv_1", AttemptedAt: base, StatusCode: 503}),
		)
	})
	if n := countRows(t, path, "delivery_attempts"); n != 2 {
		t.Fatalf("%d delivery attempts before the delete, want 2", n)
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.DeleteWebhookEndpoint(ctx, "whe_1") })
	for table, want := range map[string]int{"webhook_endpoints": 0, "deliveries": 0, "delivery_attempts": 0, "events": 1} {
		if n := countRows(t, path, table); n != want {
			t.Errorf("%d rows in %s after the delete, want %d", n, table, want)
		}
	}
}

// Two stores on one file stand in for two processes: the second's writes
// meet the first's write lock inside SQLite, not in database/sql's pool,
// and must still never report busy.
func TestConcurrentStoresOnOneFile(t *testing.T) {
	s1, path := openStore(t)
	s2, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	createOrg(t, s1, "org_1")
	var wg sync.WaitGroup
	for i := range 40 {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		wg.Go(func() {
			err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
				if _, err := tx.GetOrganization(ctx, "org_1"); err != nil {
					return err
				}
				return tx.CreateOrganization(ctx, newOrg(fmt.Sprintf("org_w%02d", i)))
			})
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
}

// holdWriteLock takes the database's write lock through a connection of its
// own, as another process would, and returns the function that releases it.
func holdWriteLock(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
			t.Error(err)
		}
		conn.Close()
		db.Close()
	}
}

func TestWaitsForAnotherWriter(t *testing.T) {
	s, path := openStore(t)
	release := holdWriteLock(t, path)
	time.AfterFunc(300*time.Millisecond, release)
	start := time.Now()
	createOrg(t, s, "org_1")
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("InTx finished after %v, while another connection held the write lock", d)
	}
	// Readers never wait for a writer.
	release2 := holdWriteLock(t, path)
	defer release2()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.GetOrganization(ctx, "org_1")
		return err
	}); err != nil {
		t.Errorf("ReadTx under a held write lock: %v", err)
	}
}

func TestContextEndsWait(t *testing.T) {
	s, path := openStore(t)
	release := holdWriteLock(t, path)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateOrganization(ctx, newOrg("org_1"))
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("InTx = %v, want context.DeadlineExceeded", err)
	}
}
