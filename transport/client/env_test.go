package client_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/payd-engine/payd/transport"
)

// env is a real payd server running in-process: SQLite in a temporary
// directory, the sandbox provider, the engine's background workers and the
// HTTP handler under /api behind an httptest.Server.
type env struct {
	URL     string // the server's root, e.g. http://127.0.0.1:PORT
	Base    string // URL + "/api", what client.New takes
	Engine  *engine.Engine
	Sandbox *sandbox.Provider
	// The organization's credentials.
	OrgID, APIKey, Secret string
	// WalletPhone is the bkash cash_out wallet payers pay.
	WalletPhone string
}

// envOptions choose the organization's settings and the sandbox's payouts.
type envOptions struct {
	NoH2H       bool
	Withdrawals bool
	Balance     string // credited at start when set
	PayoutMode  string // sandbox.PayoutsAuto (default) or PayoutsManual
}

// sandboxControl adapts the sandbox provider to transport.Sandbox, as the
// reference server does.
type sandboxControl struct{ p *sandbox.Provider }

func (c sandboxControl) RecordPayment(ctx context.Context, p transport.SandboxPayment) (*engine.ProviderTransaction, error) {
	return c.p.RecordPayment(ctx, sandbox.PaymentParams(p))
}

func (c sandboxControl) SetOutage(organizationID string, down bool) {
	c.p.SetOutage(organizationID, down)
}

func (c sandboxControl) SettlePayout(ctx context.Context, organizationID, withdrawalID, outcome string) error {
	_, err := c.p.Settle(ctx, organizationID, withdrawalID, outcome)
	if errors.Is(err, sandbox.ErrAlreadySettled) {
		return engine.Errorf(engine.CodeConflict, "outcome: the payout was already settled the other way")
	}
	return err
}

// startEnv starts a server in dir. The returned function stops it.
func startEnv(dir string, o envOptions) (*env, func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	var stops []func()
	stop := func() {
		cancel()
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	fail := func(err error) (*env, func(), error) {
		stop()
		return nil, nil, err
	}
	store, err := sqlite.Open(ctx, filepath.Join(dir, "payd.db"))
	if err != nil {
		return fail(err)
	}
	stops = append(stops, func() { _ = store.Close() })
	master := make([]byte, 32)
	if _, err := rand.Read(master); err != nil {
		return fail(err)
	}
	keyring, err := engine.NewKeyring(master)
	if err != nil {
		return fail(err)
	}

	// The handler is set after the server starts, so that the sandbox's
	// checkout links can point at the server's own URL.
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handler.ServeHTTP(w, r)
	}))
	stops = append(stops, srv.Close)

	provider, err := sandbox.New(sandbox.Config{
		PublicURL: srv.URL, Payments: sandbox.NewSQLStore(store), Payouts: sandbox.NewSQLStore(store),
		PayoutMode: o.PayoutMode, PayoutDelay: 100 * time.Millisecond,
	})
	if err != nil {
		return fail(err)
	}
	logger := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Config{
		Store: store, Provider: provider, Keyring: keyring, APIPrefix: "/api", Logger: logger,
		Webhooks:     transport.NewWebhookClient(true),
		PollInterval: 20 * time.Millisecond, PayoutPollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		return fail(err)
	}
	handler = transport.NewHandler(transport.Config{
		Engine: eng, Prefix: "/api", Logger: logger, Sandbox: sandboxControl{provider},
	})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = eng.Run(ctx)
	}()
	stops = append(stops, func() { cancel(); wg.Wait() })

	name, h2h, withdrawals := "Test Shop", !o.NoH2H, o.Withdrawals
	creds, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{
		Name: &name, H2HEnabled: &h2h, WithdrawalsEnabled: &withdrawals,
	})
	if err != nil {
		return fail(err)
	}
	e := &env{
		URL: srv.URL, Base: srv.URL + "/api", Engine: eng, Sandbox: provider,
		OrgID: creds.Organization.ID, APIKey: creds.APIKey.APIKey, Secret: creds.APIKey.SigningSecret,
		WalletPhone: "01711000001",
	}
	if _, err := eng.AddWallet(ctx, engine.AddWalletParams{
		OrganizationID: e.OrgID, Channel: "bkash", Operation: "cash_out", Phone: e.WalletPhone, Name: "Agent Rahim",
	}); err != nil {
		return fail(err)
	}
	if o.Balance != "" {
		if _, err := eng.AdjustBalance(ctx, engine.AdjustParams{
			OrganizationID: e.OrgID, Amount: o.Balance, Reason: "opening float", Actor: "test",
		}); err != nil {
			return fail(err)
		}
	}
	return e, stop, nil
}

// newEnv starts a server for a test and stops it at cleanup.
func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e, stop, err := startEnv(t.TempDir(), o)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(stop)
	return e
}

// exampleEnv starts a server for an Example, in its own temporary
// directory.
func exampleEnv() (*env, func()) {
	dir, err := os.MkdirTemp("", "payd-client-example")
	if err != nil {
		panic(err)
	}
	e, stop, err := startEnv(dir, envOptions{})
	if err != nil {
		_ = os.RemoveAll(dir)
		panic(fmt.Sprintf("start server: %v", err))
	}
	return e, func() { stop(); _ = os.RemoveAll(dir) }
}
