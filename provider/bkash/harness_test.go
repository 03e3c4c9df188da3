package bkash_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/bkash/bkashsim"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/postgres/pgtest"
	"github.com/payd-engine/payd/storage/sqlite"
)

var start = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// The merchant's credentials at the simulator; secrets the tests look for
// in logs and the database.
var app1 = bkashsim.App{AppKey: "app-key-one", AppSecret: "SECRET-app-one-s3cr3t", Username: "merchant-one",
	Password: "PASSWORD-one-p4ss", ShortCode: "01811111111"}

// sqlitePaths names each SQLite store's file, for the tests that read it.
var sqlitePaths sync.Map

// eachStore runs fn on SQLite and Postgres; open returns the same database
// to every caller in a test (two payd instances share it).
func eachStore(t *testing.T, fn func(t *testing.T, open func() payd.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "payd.db")
		fn(t, func() payd.Store {
			s, err := sqlite.Open(context.Background(), path, sandbox.Migrations(), smsinbox.Migrations(), bkash.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			sqlitePaths.Store(s, path)
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pgtest.AdminURL(t)
		t.Parallel()
		u := pgtest.URL(t)
		fn(t, func() payd.Store {
			s, err := postgres.Open(context.Background(), u, sandbox.Migrations(), smsinbox.Migrations(), bkash.Migrations())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// world is a simulated bKash, a mock clock and a master key, shared by the
// payd instances of a test.
type world struct {
	t       *testing.T
	sim     *bkashsim.Server
	clock   *clock.Mock
	keyring *engine.Keyring
	logs    *syncBuffer
}

func newWorld(t *testing.T) *world {
	mock := clock.NewMock()
	mock.Set(start)
	master := make([]byte, engine.MasterKeySize)
	_, _ = rand.Read(master)
	kr, err := engine.NewKeyring(master)
	if err != nil {
		t.Fatal(err)
	}
	sim := bkashsim.New(mock)
	t.Cleanup(sim.Close)
	sim.AddApp(app1)
	return &world{t: t, sim: sim, clock: mock, keyring: kr, logs: &syncBuffer{}}
}

// instance is one payd over the world's database.
type instance struct {
	*payd.App
	w    *world
	prov *bkash.Provider
	url  string
}

func (w *world) instance(store payd.Store) *instance {
	sb, err := sandbox.New(sandbox.Config{Clock: w.clock})
	if err != nil {
		w.t.Fatal(err)
	}
	return w.instanceOn(store, sb)
}

// instanceOn is an instance whose fallback is fb.
func (w *world) instanceOn(store payd.Store, fb engine.Provider) *instance {
	t := w.t
	logger := slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prov, err := bkash.New(bkash.Config{Keyring: w.keyring, Fallback: fb, Clock: w.clock, Logger: logger,
		HTTPClient: &http.Client{Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{w: w, prov: prov}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { in.Handler.ServeHTTP(rw, r) }))
	t.Cleanup(srv.Close)
	in.url = srv.URL
	app, err := payd.New(payd.Config{Store: store, Keyring: w.keyring, Provider: prov, PublicURL: srv.URL,
		APIPrefix: "/api", Clock: w.clock, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	in.App = app
	return in
}

// org creates an organization connected to the simulator as app1.
func (in *instance) org() *engine.OrganizationCredentials {
	t := in.w.t
	name, h2h := "Shop", true
	creds, err := in.Engine.CreateOrganization(context.Background(), engine.OrganizationSettings{Name: &name, H2HEnabled: &h2h})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.prov.Connect(context.Background(), creds.Organization.ID, bkash.Credentials{AppKey: app1.AppKey,
		AppSecret: app1.AppSecret, Username: app1.Username, Password: app1.Password, BaseURL: in.w.sim.BaseURL()}); err != nil {
		t.Fatal(err)
	}
	return creds
}

// redirect creates a bkash redirect deposit and returns it with bKash's
// payment ID.
func (in *instance) redirect(orgID, amount string) (*engine.Deposit, string) {
	t := in.w.t
	t.Helper()
	d, _, err := in.Engine.CreateDeposit(context.Background(), engine.CreateDepositParams{OrganizationID: orgID,
		Amount: amount, PaymentMethod: "bkash", RedirectURL: "https://shop.example/return", MerchantID: "M-" + amount + "-" + engine.RandomToken(4)})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(d.CheckoutURL)
	if err != nil || u.Query().Get("paymentID") == "" {
		t.Fatalf("checkout URL %q is not bKash's page", d.CheckoutURL)
	}
	return d, u.Query().Get("paymentID")
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// visit is the payer's browser at a URL (a callback).
func (in *instance) visit(u string) int {
	in.w.t.Helper()
	resp, err := noRedirects.Get(u)
	if err != nil {
		in.w.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// onInstance rewrites a callback URL (bKash's, to the first instance) to
// this instance.
func (in *instance) onInstance(cb string) string {
	u, _ := url.Parse(cb)
	v, _ := url.Parse(in.url)
	u.Host = v.Host
	return u.String()
}

func (in *instance) work() {
	t := in.w.t
	t.Helper()
	ctx := context.Background()
	if _, err := in.Engine.ProcessAttempts(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Engine.ProcessRefunds(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Engine.ExpireDeposits(ctx); err != nil {
		t.Fatal(err)
	}
}

func (in *instance) deposit(orgID, id string) *engine.Deposit {
	d, err := in.Engine.GetDeposit(context.Background(), orgID, id)
	if err != nil {
		in.w.t.Fatal(err)
	}
	return d
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}
