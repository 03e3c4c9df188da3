package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/shopspring/decimal"
)

// The Postgres-specific properties: what the shared suite cannot say about
// every store (migrations, durability settings, row locks between
// connections, retries, query plans).

var base = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

func openStore(t *testing.T) (*Store, string) {
	t.Helper()
	url := pgtest.URL(t)
	s, err := Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, url
}

func write(t *testing.T, s *Store, fn func(ctx context.Context, tx engine.Tx) error) {
	t.Helper()
	if err := s.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func newOrg(id string) *engine.Organization {
	return &engine.Organization{
		ID: id, Name: "Org " + id, DepositsEnabled: true,
		InstructionsWindow: engine.DefaultInstructionsWindow, RedirectWindow: engine.DefaultRedirectWindow,
		CreatedAt: base, UpdatedAt: base,
	}
}

func newDeposit(id, orgID string) *engine.Deposit {
	return &engine.Deposit{
		ID: id, OrganizationID: orgID, MerchantID: "m_" + id,
		CheckoutMode: engine.CheckoutRedirect, Amount: decimal.RequireFromString("500"),
		PaymentMethod: "bkash", Metadata: []byte("{}"), Status: engine.StatusPending,
		Action: engine.ActionRedirect, CheckoutToken: "tok_" + id,
		VerificationState: engine.VerificationProcessing,
		ExpiresAt:         base, CreatedAt: base, UpdatedAt: base,
	}
}

func newAttempt(id, depositID, orgID string, due time.Time) *engine.Attempt {
	return &engine.Attempt{
		ID: id, DepositID: depositID, OrganizationID: orgID, Channel: engine.ChannelBkash, TransactionID: "TX" + id,
		Status: engine.AttemptProcessing, NextRunAt: due, CreatedAt: base, UpdatedAt: base,
	}
}

func schemaVersions(t *testing.T, url string) []int64 {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT version FROM payd_migrations WHERE line = 'main' ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return versions
}

func wantAllVersions(t *testing.T, url string) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, m := range ms {
		want = append(want, int64(m.Version))
	}
	if got := schemaVersions(t, url); !slices.Equal(got, want) {
		t.Errorf("payd_migrations = %v, want %v", got, want)
	}
}

func TestMigrationsMatchSQLite(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	// The two adapters evolve in step: the same numbered files.
	entries, err := os.ReadDir("../sqlite/migrations")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		want = append(want, e.Name())
	}
	if len(want) < 6 || !slices.Equal(names, want) {
		t.Errorf("migrations = %v, want %v", names, want)
	}
}

func TestMigrationsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, url := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })
	s.Close()
	for range 2 {
		s2, err := Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		err = s2.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
			_, err := tx.GetOrganization(ctx, "org_1")
			return err
		})
		s2.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	wantAllVersions(t, url)
}

// Three processes starting at once on a new database: the advisory lock
// lets one migrate while the others wait, then find it done.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	stores := make([]*Store, 3)
	errs := make([]error, 3)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(context.Background(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	// Each store can write to the schema the others see.
	for i, s := range stores {
		write(t, s, func(ctx context.Context, tx engine.Tx) error {
			return tx.CreateOrganization(ctx, newOrg(fmt.Sprintf("org_%d", i)))
		})
	}
	wantAllVersions(t, url)
}

// A failing migration leaves no trace: neither its changes nor its record.
func TestFailedMigrationRollsBack(t *testing.T) {
	t.Parallel()
	s, url := openStore(t)
	err := s.runTx(context.Background(), readWrite, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `CREATE TABLE half_done (x INT); SELECT 1/0`)
		return err
	})
	if err == nil {
		t.Fatal("division by zero succeeded")
	}
	var exists bool
	if err := s.pool.QueryRow(context.Background(), `SELECT to_regclass('half_done') IS NOT NULL`).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Error("a failed multi-statement migration left a table behind")
	}
	wantAllVersions(t, url)
}

// Durability does not depend on the server's, the database's or the URL's
// setting: every connection of the pool commits synchronously.
func TestSynchronousCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	admin := pgtest.AdminURL(t)
	name := url[strings.LastIndex(url, "/")+1:]
	if i := strings.IndexByte(name, '?'); i >= 0 {
		name = name[:i]
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` SET synchronous_commit = off`)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	weakened := withParam(url, "options=-c%20synchronous_commit%3Doff")
	s, err := Open(ctx, weakened)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Hold several connections at once, so that this is not one lucky one.
	var conns []*pgxpool.Conn
	for range 3 {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var got string
		if err := c.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != "on" {
			t.Errorf("connection %d: synchronous_commit = %s, want on", i, got)
		}
		c.Release()
	}
}

// withParam adds a query parameter (key=value, escaped) to a URL.
func withParam(url, param string) string {
	if strings.Contains(url, "?") {
		return url + "&" + param
	}
	return url + "?" + param
}

// payd's statements are short; JIT compilation made one of them take 400
// ms instead of 1 (a claim whose plan cost was inflated by a disabled sort,
// compiled on every run). Off, unless the URL asks for it.
func TestJITOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	for _, c := range []struct{ url, want string }{{url, "off"}, {withParam(url, "jit=on"), "on"}} {
		s, err := Open(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = s.pool.QueryRow(ctx, `SHOW jit`).Scan(&got)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: jit = %s, want %s", c.url, got, c.want)
		}
	}
}

// heldTx runs fn in an InTx of its own that stays open until release is
// called; it returns once fn has returned.
func heldTx(t *testing.T, s *Store, fn func(ctx context.Context, tx engine.Tx) error) (release func()) {
	t.Helper()
	ran := make(chan error, 1)
	done := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		first := true
		done <- s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			err := fn(ctx, tx)
			if first {
				first = false
				ran <- err
			}
			if err != nil {
				return err
			}
			<-stop
			return nil
		})
	}()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(stop)
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// startTx runs fn in an InTx in the background; done has its error.
func startTx(s *Store, fn func(ctx context.Context, tx engine.Tx) error) (done <-chan error) {
	ch := make(chan error, 1)
	go func() { ch <- s.InTx(context.Background(), fn) }()
	return ch
}

func ids[T any](rows []*T, id func(*T) string) string {
	var out []string
	for _, r := range rows {
		out = append(out, id(r))
	}
	return strings.Join(out, ",")
}

// A claim in one transaction, still open, and a claim in another never
// take the same attempt, and the second does not wait for the first.
func TestClaimSkipsLockedAttempts(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		if err := tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1")); err != nil {
			return err
		}
		for i := range 5 {
			if err := tx.CreateAttempt(ctx, newAttempt(fmt.Sprintf("att_%d", i), "dep_1", "org_1", base.Add(time.Duration(i)*time.Second))); err != nil {
				return err
			}
		}
		return nil
	})
	now := base.Add(time.Hour)
	claim := func(owner string, limit int) func(ctx context.Context, tx engine.Tx) ([]*engine.Attempt, error) {
		return func(ctx context.Context, tx engine.Tx) ([]*engine.Attempt, error) {
			return tx.ClaimDueAttempts(ctx, engine.ClaimParams{Now: now, Owner: owner, LeasedUntil: now.Add(time.Minute), Limit: limit})
		}
	}
	var first []*engine.Attempt
	release := heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		first, err = claim("w1", 2)(ctx, tx)
		return err
	})
	attemptID := func(a *engine.Attempt) string { return a.ID }
	if got := ids(first, attemptID); got != "att_0,att_1" {
		t.Fatalf("first claim = %s", got)
	}
	var second []*engine.Attempt
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		var err error
		second, err = claim("w2", 10)(ctx, tx)
		return err
	})
	if err != nil {
		t.Fatalf("second claim while the first is open: %v", err)
	}
	if got := ids(second, attemptID); got != "att_2,att_3,att_4" {
		t.Errorf("second claim = %s, want the rows the first did not lock", got)
	}
	release()
	// Everything is leased now.
	err = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		third, err := claim("w3", 10)(ctx, tx)
		if err == nil && len(third) != 0 {
			t.Errorf("third claim = %s, want nothing", ids(third, attemptID))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Many claimers at once, each in its own transaction: every due attempt is
// claimed exactly once.
func TestConcurrentClaimsClaimEachOnce(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	const n = 60
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		if err := tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1")); err != nil {
			return err
		}
		for i := range n {
			if err := tx.CreateAttempt(ctx, newAttempt(fmt.Sprintf("att_%02d", i), "dep_1", "org_1", base)); err != nil {
				return err
			}
		}
		return nil
	})
	now := base.Add(time.Hour)
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			owner := fmt.Sprintf("w%d", w)
			for {
				var got []*engine.Attempt
				err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
					var err error
					got, err = tx.ClaimDueAttempts(ctx, engine.ClaimParams{Now: now, Owner: owner, LeasedUntil: now.Add(time.Hour), Limit: 3})
					time.Sleep(time.Millisecond) // hold the locks a little
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, a := range got {
					if prev, ok := seen[a.ID]; ok {
						t.Errorf("%s claimed by %s and %s", a.ID, prev, owner)
					}
					seen[a.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("%d attempts claimed, want %d", len(seen), n)
	}
}

// The same for payouts and deliveries, held open as for attempts.
func TestClaimSkipsLockedPayoutsAndDeliveries(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		for i := range 4 {
			w := &engine.Withdrawal{
				ID: fmt.Sprintf("wd_%d", i), OrganizationID: "org_1", MerchantID: fmt.Sprintf("m%d", i),
				Amount: decimal.RequireFromString("10"), Metadata: []byte("{}"), Status: engine.WithdrawalProcessing,
				PayoutStep: engine.PayoutToSend, CreatedAt: base, UpdatedAt: base,
			}
			if i > 0 { // wd_0 has never been scheduled: the zero time, due first
				w.NextRunAt = base.Add(time.Duration(i) * time.Second)
			}
			if err := tx.CreateWithdrawal(ctx, w); err != nil {
				return err
			}
		}
		for _, ev := range []string{"evt_1", "evt_2"} {
			if err := tx.CreateEvent(ctx, &engine.Event{ID: ev, OrganizationID: "org_1", Type: "x", ResourceID: "r", Payload: []byte("{}"), CreatedAt: base}); err != nil {
				return err
			}
		}
		for _, ep := range []string{"whe_a", "whe_b"} {
			if err := tx.CreateWebhookEndpoint(ctx, &engine.WebhookEndpoint{ID: ep, OrganizationID: "org_1", URL: "https://x", Secret: []byte("s"), Enabled: true, CreatedAt: base, UpdatedAt: base}); err != nil {
				return err
			}
		}
		// del_0 and del_1 to whe_a, del_2 and del_3 to whe_b, in due order.
		for i, ep := range []string{"whe_a", "whe_a", "whe_b", "whe_b"} {
			d := &engine.Delivery{ID: fmt.Sprintf("del_%d", i), EventID: fmt.Sprintf("evt_%d", i%2+1), EndpointID: ep,
				OrganizationID: "org_1", Status: engine.DeliveryPending, NextAttemptAt: base.Add(time.Duration(i) * time.Second),
				CreatedAt: base, UpdatedAt: base}
			if err := tx.CreateDelivery(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	now := base.Add(time.Hour)
	params := func(owner string, limit int) engine.ClaimParams {
		return engine.ClaimParams{Now: now, Owner: owner, LeasedUntil: now.Add(time.Minute), Limit: limit}
	}
	wdID := func(w *engine.Withdrawal) string { return w.ID }
	delID := func(d *engine.Delivery) string { return d.ID }

	var payouts []*engine.Withdrawal
	var deliveries []*engine.Delivery
	heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
		var err error
		if payouts, err = tx.ClaimDuePayouts(ctx, params("w1", 2)); err != nil {
			return err
		}
		// One per endpoint: del_0 of whe_a, del_2 of whe_b.
		deliveries, err = tx.ClaimDueDeliveries(ctx, engine.ClaimDeliveriesParams{ClaimParams: params("w1", 10), PerEndpoint: 1})
		return err
	})
	if got := ids(payouts, wdID); got != "wd_0,wd_1" {
		t.Fatalf("first payout claim = %s", got)
	}
	if got := ids(deliveries, delID); got != "del_0,del_2" {
		t.Fatalf("first delivery claim = %s", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		payouts, err := tx.ClaimDuePayouts(ctx, params("w2", 10))
		if err != nil {
			return err
		}
		if got := ids(payouts, wdID); got != "wd_2,wd_3" {
			t.Errorf("second payout claim = %s", got)
		}
		// The first-ranked delivery of each endpoint is locked: with a cap
		// of one per endpoint, this claim takes nothing rather than more
		// of the endpoints the first claim is posting to.
		deliveries, err := tx.ClaimDueDeliveries(ctx, engine.ClaimDeliveriesParams{ClaimParams: params("w2", 10), PerEndpoint: 1})
		if err != nil {
			return err
		}
		if got := ids(deliveries, delID); got != "" {
			t.Errorf("second capped delivery claim = %s, want nothing", got)
		}
		deliveries, err = tx.ClaimDueDeliveries(ctx, engine.ClaimDeliveriesParams{ClaimParams: params("w2", 10)})
		if err != nil {
			return err
		}
		if got := ids(deliveries, delID); got != "del_1,del_3" {
			t.Errorf("second delivery claim = %s", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A claim skips a row another transaction is updating, and once that
// transaction commits, sees the lease it wrote.
func TestClaimSkipsRowsBeingUpdated(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		if err := tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1")); err != nil {
			return err
		}
		return tx.CreateAttempt(ctx, newAttempt("att_1", "dep_1", "org_1", base))
	})
	now := base.Add(time.Hour)
	// The first transaction updates the row (not a claim: a plain update,
	// which takes the row lock) and stays open.
	release := heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
		a, err := tx.GetAttempt(ctx, "att_1")
		if err != nil {
			return err
		}
		a.LeaseOwner, a.LeasedUntil = "w1", now.Add(time.Hour)
		return tx.UpdateAttempt(ctx, a)
	})
	// A claim now skips it (locked); once the first commits, a claim sees
	// its lease and skips it too.
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.ClaimDueAttempts(ctx, engine.ClaimParams{Now: now, Owner: "w2", LeasedUntil: now.Add(time.Minute), Limit: 10})
		if err == nil && len(got) != 0 {
			t.Errorf("claimed a row another transaction holds: %v", got[0].ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	release()
	err = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.ClaimDueAttempts(ctx, engine.ClaimParams{Now: now, Owner: "w2", LeasedUntil: now.Add(time.Minute), Limit: 10})
		if err == nil && len(got) != 0 {
			t.Errorf("claimed a leased row: %v", got[0].ID)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Two sweepers never take the same expirable deposit.
func TestListExpirableDepositsSkipsLocked(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		for i := range 4 {
			d := newDeposit(fmt.Sprintf("dep_%d", i), "org_1")
			d.ExpiresAt = base.Add(time.Duration(i) * time.Second)
			if err := tx.CreateDeposit(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	now := base.Add(time.Hour)
	depID := func(d *engine.Deposit) string { return d.ID }
	heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.ListExpirableDeposits(ctx, now, 2)
		if err == nil && ids(got, depID) != "dep_0,dep_1" {
			t.Errorf("first sweep = %s", ids(got, depID))
		}
		return err
	})
	// A deposit locked by LockDeposit (being verified) is skipped too.
	heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.LockDeposit(ctx, "dep_3")
		return err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.ListExpirableDeposits(ctx, now, 10)
		if err == nil && ids(got, depID) != "dep_2" {
			t.Errorf("second sweep = %s, want dep_2", ids(got, depID))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// In a read-only transaction nothing is locked, and nothing skipped.
	err = s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		got, err := tx.ListExpirableDeposits(ctx, now, 10)
		if err == nil && len(got) != 4 {
			t.Errorf("read-only sweep = %s, want all four", ids(got, depID))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A Lock method in a second transaction, while a first holds the lock,
// waits until the first ends, and then reads what the first wrote.
func TestLocksMakeASecondLockerWait(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1"))
	})
	for _, c := range []struct {
		name  string
		lock  func(ctx context.Context, tx engine.Tx) (string, error) // returns the field the first writes
		write func(ctx context.Context, tx engine.Tx) error
	}{
		{"LockOrganization", func(ctx context.Context, tx engine.Tx) (string, error) {
			o, err := tx.LockOrganization(ctx, "org_1")
			if err != nil {
				return "", err
			}
			return o.Name, nil
		}, func(ctx context.Context, tx engine.Tx) error {
			o := newOrg("org_1")
			o.Name = "renamed"
			return tx.UpdateOrganization(ctx, o)
		}},
		{"LockDeposit", func(ctx context.Context, tx engine.Tx) (string, error) {
			d, err := tx.LockDeposit(ctx, "dep_1")
			if err != nil {
				return "", err
			}
			return d.FailureCode, nil
		}, func(ctx context.Context, tx engine.Tx) error {
			d := newDeposit("dep_1", "org_1")
			d.FailureCode = "renamed"
			return tx.UpdateDeposit(ctx, d)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			release := heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
				if _, err := c.lock(ctx, tx); err != nil {
					return err
				}
				return c.write(ctx, tx)
			})
			var seen string
			done := startTx(s, func(ctx context.Context, tx engine.Tx) error {
				var err error
				seen, err = c.lock(ctx, tx)
				return err
			})
			select {
			case err := <-done:
				t.Fatalf("second locker returned while the first held the lock: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			release()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("second locker still waiting after the first ended")
			}
			if seen != "renamed" {
				t.Errorf("second locker read %q, want the first's write", seen)
			}
		})
	}
}

// The row lock is FOR NO KEY UPDATE: inserting a row that refers to the
// locked organization does not wait for its locker, while an update does.
func TestLockOrganizationLetsChildInsertsThrough(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })
	heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.LockOrganization(ctx, "org_1")
		return err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1"))
	})
	if err != nil {
		t.Errorf("deposit of a locked organization: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		return tx.UpdateOrganization(ctx, newOrg("org_1"))
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("update of a locked organization: %v, want to wait until the deadline", err)
	}
}

// In ReadTx the Lock methods read the snapshot: a read-only transaction
// cannot take row locks.
func TestLockMethodsInReadTx(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); err != nil {
			return err
		}
		return tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1"))
	})
	err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.LockOrganization(ctx, "org_1"); err != nil {
			return err
		}
		if _, err := tx.LockDeposit(ctx, "dep_1"); err != nil {
			return err
		}
		if _, err := tx.LockDeposit(ctx, "dep_x"); err != engine.ErrNotFound {
			return fmt.Errorf("LockDeposit(dep_x) = %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A duplicate does not abort the transaction: the engine may go on, as it
// can in SQLite.
func TestDuplicateLeavesTransactionUsable(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_1")); !errors.Is(err, engine.ErrDuplicate) {
			return fmt.Errorf("duplicate: %v", err)
		}
		if err := tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1")); err != nil {
			return err
		}
		if err := tx.CreateDeposit(ctx, newDeposit("dep_1", "org_1")); !errors.Is(err, engine.ErrDuplicate) {
			return fmt.Errorf("duplicate deposit: %v", err)
		}
		return tx.CreateOrganization(ctx, newOrg("org_2"))
	})
	err := s.ReadTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		if _, err := tx.GetDeposit(ctx, "org_1", "dep_1"); err != nil {
			return err
		}
		_, err := tx.GetOrganization(ctx, "org_2")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// interpretError also maps a raised unique violation.
	err = interpretError(&pgconn.PgError{Code: codeUniqueViolation, ConstraintName: "x"})
	if !errors.Is(err, engine.ErrDuplicate) {
		t.Errorf("interpretError(23505) = %v", err)
	}
}

// Two transactions locking two organizations in opposite orders deadlock;
// Postgres aborts one, and InTx runs it again, so both succeed.
func TestInTxRetriesDeadlocks(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, newOrg("org_a")); err != nil {
			return err
		}
		return tx.CreateOrganization(ctx, newOrg("org_b"))
	})
	var calls atomic.Int32
	var both sync.WaitGroup
	both.Add(2)
	lockBoth := func(first, second string) error {
		return s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
			n := calls.Add(1)
			if _, err := tx.LockOrganization(ctx, first); err != nil {
				return err
			}
			if n <= 2 { // the first run of each: make sure both hold one lock
				both.Done()
				both.Wait()
			}
			_, err := tx.LockOrganization(ctx, second)
			return err
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = lockBoth("org_a", "org_b") })
	wg.Go(func() { errs[1] = lockBoth("org_b", "org_a") })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("transaction %d: %v", i, err)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("fn ran %d times, want 3 (one deadlock victim retried)", n)
	}
}

// A serialization failure is retried; other errors come back unchanged,
// after one run.
func TestInTxRetryPolicy(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	runs := 0
	err := s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		runs++
		if runs < 3 {
			return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: codeSerializationFailure})
		}
		return tx.CreateOrganization(ctx, newOrg("org_1"))
	})
	if err != nil || runs != 3 {
		t.Errorf("InTx = %v after %d runs, want success after 3", err, runs)
	}
	runs = 0
	sentinel := errors.New("no")
	err = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		runs++
		return sentinel
	})
	if err != sentinel || runs != 1 {
		t.Errorf("InTx = %v after %d runs, want the sentinel after 1", err, runs)
	}
	// Bounded: a failure that never clears ends with it.
	runs = 0
	err = s.InTx(context.Background(), func(ctx context.Context, tx engine.Tx) error {
		runs++
		return &pgconn.PgError{Code: codeDeadlockDetected}
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || runs != maxAttempts {
		t.Errorf("InTx = %v after %d runs, want the deadlock after %d", err, runs, maxAttempts)
	}
}

func TestContextEndsWait(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_1")) })
	heldTx(t, s, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.LockOrganization(ctx, "org_1")
		return err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.InTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		_, err := tx.LockOrganization(ctx, "org_1")
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("InTx = %v, want context.DeadlineExceeded", err)
	}
	// The pool is still usable.
	write(t, s, func(ctx context.Context, tx engine.Tx) error { return tx.CreateOrganization(ctx, newOrg("org_2")) })
}

// IDs order bytewise, as in SQLite, even in a database whose default
// collation would put "org_a" before "org_B".
func TestIDsOrderBytewise(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := pgtest.AdminURL(t)
	name := "payd_test_icu_" + strings.ReplaceAll(t.Name(), "/", "_")
	name = strings.ToLower(name)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()+
		` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`)
	if err != nil {
		t.Skipf("no ICU collation to test with: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), `DROP DATABASE `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			t.Error(err)
		}
	})
	url, err := pgtest.WithDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var icuOrder string
	if err := s.pool.QueryRow(ctx, `SELECT string_agg(x, ',' ORDER BY x) FROM unnest(ARRAY['org_a', 'org_B']) x`).Scan(&icuOrder); err != nil {
		t.Fatal(err)
	}
	if icuOrder != "org_a,org_B" {
		t.Skipf("the database's collation orders %s: nothing to tell apart", icuOrder)
	}
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		for _, id := range []string{"org_a", "org_B", "org_c"} {
			if err := tx.CreateOrganization(ctx, newOrg(id)); err != nil {
				return err
			}
		}
		return nil
	})
	err = s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		orgs, err := tx.ListOrganizations(ctx)
		if err == nil && ids(orgs, func(o *engine.Organization) string { return o.ID }) != "org_B,org_a,org_c" {
			t.Errorf("ListOrganizations = %s, want byte order", ids(orgs, func(o *engine.Organization) string { return o.ID }))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The claims and the balance sum can use their indexes: with sequential
// scans priced out, the plan reads the partial index in order. (On tiny
// tables the planner may rightly prefer a scan, so the test forbids it.)
func TestQueryPlansUseIndexes(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	now := base
	for _, c := range []struct {
		name, query, index string
		args               []any
	}{
		{"attempts", claimQuery, "attempts_due", []any{"w", now, now, 5}},
		{"payouts", claimPayoutsQuery, "withdrawals_due", []any{"w", now, now, 5}},
		{"deliveries", claimDeliveriesQuery, "deliveries_due", []any{"w", now, now, []string{"whe_x"}, 3, 5, []string{"whe_y"}, 8}},
		// The queue gauges, read on every scrape: one query, each queue through its claim's index.
		{"queue attempts", countQueuesQuery, "attempts_due", nil},
		{"queue payouts", countQueuesQuery, "withdrawals_due", nil},
		{"queue deliveries", countQueuesQuery, "deliveries_due", nil},
		{"balances", balancesQuery, "account_balances_pkey", []any{"org_1"}},
		{"entry sums", sumEntriesQuery, "ledger_entries_account", []any{"org_1"}},
		{"expirable", expirableQuery, "deposits_expirable", []any{now, 5}},
		// A read by ID goes through the primary key, never an index that
		// starts with organization_id, which the planner found as cheap on
		// a table not yet analyzed: it read all the organization's rows
		// to find one (a withdrawal's payout steps, 1.7 million index
		// entries in one 3 s benchmark run).
		{"deposit by ID", getDepositQuery, "deposits_pkey", []any{"dep_1", "org_1"}},
		{"deposits by ID, a batch of reads", getDepositsQuery, "deposits_pkey", []any{[]string{"dep_1", "dep_2"}}},
		{"withdrawal by ID", getWithdrawalQuery, "withdrawals_pkey", []any{"wd_1", "org_1"}},
		{"withdrawal by ID, locked", lockWithdrawalQuery, "withdrawals_pkey", []any{"wd_1", "org_1"}},
		{"balance transaction by ID", getBalanceTransactionQuery, "balance_transactions_pkey", []any{"btx_1", "org_1"}},
		{"wallet by ID", getWalletQuery, "wallets_pkey", []any{"wal_1", "org_1"}},
		{"wallet by ID, locked", lockWalletQuery, "wallets_pkey", []any{"wal_1", "org_1"}},
	} {
		err := s.runTx(ctx, readWrite, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `EXPLAIN `+c.query, c.args...)
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan := strings.Join(lines, "\n")
			if !strings.Contains(plan, c.index) || strings.Contains(plan, "Seq Scan") {
				t.Errorf("%s plan:\n%s", c.name, plan)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}

// Zero times, nil and empty byte slices and NUMERIC scales come back as
// storage/sqlite gives them.
func TestEncodings(t *testing.T) {
	t.Parallel()
	s, _ := openStore(t)
	ctx := context.Background()
	local := time.FixedZone("BDT", 6*3600)
	org := newOrg("org_1")
	org.CreatedAt = base.In(local).Add(789 * time.Nanosecond) // truncated to the microsecond
	org.DepositFeePercent = decimal.RequireFromString("1.2500")
	org.WithdrawCommissionFixed = decimal.New(12, 3) // 12000, a positive exponent
	write(t, s, func(ctx context.Context, tx engine.Tx) error {
		if err := tx.CreateOrganization(ctx, org); err != nil {
			return err
		}
		return tx.CreateWebhookEndpoint(ctx, &engine.WebhookEndpoint{ID: "whe_1", OrganizationID: "org_1", Secret: nil,
			PreviousSecret: []byte{}, CreatedAt: time.Time{}, UpdatedAt: base})
	})
	err := s.ReadTx(ctx, func(ctx context.Context, tx engine.Tx) error {
		o, err := tx.GetOrganization(ctx, "org_1")
		if err != nil {
			return err
		}
		if o.CreatedAt != base || o.CreatedAt.Location() != time.UTC {
			t.Errorf("created_at = %v, want %v in UTC", o.CreatedAt, base)
		}
		if o.DepositFeePercent.String() != "1.25" || o.WithdrawCommissionFixed.String() != "12000" {
			t.Errorf("decimals = %s, %s", o.DepositFeePercent, o.WithdrawCommissionFixed)
		}
		ep, err := tx.GetWebhookEndpoint(ctx, "whe_1")
		if err != nil {
			return err
		}
		if ep.Secret != nil || ep.PreviousSecret != nil {
			t.Errorf("empty secrets read back as %#v, %#v, want nil", ep.Secret, ep.PreviousSecret)
		}
		if ep.CreatedAt != (time.Time{}) || !ep.FailingSince.IsZero() || ep.FailingSince != (time.Time{}) {
			t.Errorf("zero times read back as %#v, %#v", ep.CreatedAt, ep.FailingSince)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var failingSince *time.Time
	if err := s.pool.QueryRow(ctx, `SELECT failing_since FROM webhook_endpoints`).Scan(&failingSince); err != nil {
		t.Fatal(err)
	}
	if failingSince != nil {
		t.Errorf("the zero time is stored as %v, not NULL", failingSince)
	}
}

// The pool has DefaultMaxConns connections unless the URL says otherwise,
// and the engine writes as many batches of a kind at once as a quarter of
// them (at least 1, at most 8).
func TestPoolSize(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	for _, c := range []struct {
		url     string
		want    int32
		batches int
	}{
		{url, DefaultMaxConns, DefaultMaxConns / 4},
		{url + sep + "pool_max_conns=5", 5, 1},
		{url + sep + "pool_max_conns=2", 2, 1},
		{url + sep + "pool_max_conns=64", 64, 8},
	} {
		s, err := Open(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.pool.Config().MaxConns; got != c.want {
			t.Errorf("%s: pool of %d connections, want %d", c.url, got, c.want)
		}
		if got := s.ConcurrentWrites(); got != c.batches {
			t.Errorf("%s: %d batches at once, want %d", c.url, got, c.batches)
		}
		s.Close()
	}
}
