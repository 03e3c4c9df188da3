package client_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
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

// startEnv starts a server in dir, as payd serve runs it, with short
// polling intervals. The returned function stops it.
func startEnv(dir string, o envOptions) (*env, func(), error) {
	ctx := context.Background()
	s, err := paydtest.RunMain(dir, paydtest.WithSandbox(sandbox.Config{PayoutMode: o.PayoutMode, PayoutDelay: 100 * time.Millisecond}), func(c *payd.Config) {
		c.Engine.PollInterval, c.Engine.PayoutPollInterval = 20*time.Millisecond, 50*time.Millisecond
	})
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*env, func(), error) {
		s.Close()
		return nil, nil, err
	}
	eng := s.Engine
	name, h2h, withdrawals := "Test Shop", !o.NoH2H, o.Withdrawals
	creds, err := eng.CreateOrganization(ctx, engine.OrganizationSettings{
		Name: &name, H2HEnabled: &h2h, WithdrawalsEnabled: &withdrawals,
	})
	if err != nil {
		return fail(err)
	}
	e := &env{
		URL: s.URL, Base: s.URL + "/api", Engine: eng, Sandbox: s.Sandbox,
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
	return e, s.Close, nil
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
