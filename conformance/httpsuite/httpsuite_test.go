package httpsuite_test

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payd-engine/payd/conformance/httpsuite"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/storage/sqlite"
	"github.com/payd-engine/payd/transport"
)

// Flags to run the suite against a deployment instead of the in-process
// server (absolute paths: go test runs the suite in this package's
// directory, not where it was typed):
//
//	go test ./conformance/httpsuite/ -args -base-url http://127.0.0.1:8080/api \
//	    -payd-binary /tmp/payd -db /path/to/payd.db -webhooks
var (
	baseURL       = flag.String("base-url", "", "base URL of a deployment to check (API prefix included); empty: an in-process server")
	paydBinary    = flag.String("payd-binary", "", "payd executable whose admin commands bootstrap the deployment (with -base-url)")
	dbDSN         = flag.String("db", "", "the deployment's database for payd admin: SQLite path or postgres:// URL (with -base-url)")
	webhooks      = flag.Bool("webhooks", false, "the deployment can post to a receiver in this process (a local server needs --webhook-allow-private)")
	webhookListen = flag.String("webhook-listen", "", "listen address of the webhook receiver (default 127.0.0.1:0)")
	webhookURL    = flag.String("webhook-url", "", "URL at which the deployment reaches the receiver (default http://<listen address>/...)")
)

func TestHTTPConformance(t *testing.T) {
	if *baseURL != "" {
		if *paydBinary == "" || *dbDSN == "" {
			t.Fatal("-base-url needs -payd-binary and -db to bootstrap organizations with payd admin")
		}
		if err := checkDeploymentPaths(*dbDSN, *paydBinary); err != nil {
			t.Fatal(err)
		}
		httpsuite.Run(httpsuite.Testing(t), httpsuite.Target{
			BaseURL: *baseURL,
			Hooks:   httpsuite.CLIHooks{Binary: *paydBinary, DB: *dbDSN},
			// PAYD_MASTER_KEY and the like come from the environment.
			Webhooks: *webhooks, WebhookListenAddr: *webhookListen, WebhookURL: *webhookURL,
		})
		return
	}
	srv, eng := startServer(t)
	httpsuite.Run(httpsuite.Testing(t), httpsuite.Target{
		BaseURL:  srv.URL + "/api",
		Hooks:    httpsuite.EngineHooks{Engine: eng},
		Webhooks: true, // the in-process webhook client allows loopback
	})
}

// checkDeploymentPaths refuses a relative -db or -payd-binary: go test runs
// the suite in this package's directory, so "-db payd.db" would name a file
// there, not the deployment's (payd admin would refuse it, or worse, an
// older one would create an empty database there, whose organizations the
// deployment does not know: 401 on every request). It also refuses a SQLite
// database that does not exist.
func checkDeploymentPaths(db, binary string) error {
	dir, _ := os.Getwd()
	if !strings.HasPrefix(db, "postgres://") && !strings.HasPrefix(db, "postgresql://") {
		if !filepath.IsAbs(db) {
			return fmt.Errorf("-db %s is a relative path, and go test runs this suite in %s, not where you typed it: "+
				"give the deployment's database as an absolute path, e.g. -db \"$PWD/%s\"", db, dir, db)
		}
		if _, err := os.Stat(db); err != nil {
			return fmt.Errorf("-db %s: no database there (%v): give the database of the running deployment", db, err)
		}
	}
	if strings.ContainsRune(binary, filepath.Separator) && !filepath.IsAbs(binary) {
		return fmt.Errorf("-payd-binary %s is a relative path, and go test runs this suite in %s: give an absolute path, e.g. -payd-binary \"$PWD/%s\"",
			binary, dir, binary)
	}
	return nil
}

// startServer wires a reference server as cmd/payd's newApp does: a SQLite
// store in a temp dir, the engine on the wall clock with its workers
// running, the sandbox provider and the HTTP handler under /api.
func startServer(t *testing.T) (*httptest.Server, *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "payd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	master := make([]byte, engine.MasterKeySize)
	rand.Read(master)
	keyring, err := engine.NewKeyring(master)
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	provider, err := sandbox.New(sandbox.Config{
		PublicURL: srv.URL, Payments: sandbox.NewSQLStore(store), Payouts: sandbox.NewSQLStore(store), PayoutDelay: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{
		Store: store, Provider: provider, Keyring: keyring, APIPrefix: "/api", Logger: logger,
		Webhooks: transport.NewWebhookClient(true), PollInterval: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	handler = transport.NewHandler(transport.Config{
		Engine: eng, Prefix: "/api", Logger: logger, Sandbox: sandboxControl{provider},
		RateLimits: transport.DefaultRateLimits,
	})
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = eng.Run(runCtx)
	}()
	t.Cleanup(func() { stop(); <-stopped })
	return srv, eng
}

// sandboxControl adapts the sandbox provider to transport.Sandbox, as
// cmd/payd does.
type sandboxControl struct{ provider *sandbox.Provider }

func (c sandboxControl) RecordPayment(ctx context.Context, p transport.SandboxPayment) (*engine.ProviderTransaction, error) {
	return c.provider.RecordPayment(ctx, sandbox.PaymentParams(p))
}

func (c sandboxControl) SetOutage(organizationID string, down bool) {
	c.provider.SetOutage(organizationID, down)
}

func (c sandboxControl) SettlePayout(ctx context.Context, organizationID, withdrawalID, outcome string) error {
	_, err := c.provider.Settle(ctx, organizationID, withdrawalID, outcome)
	if errors.Is(err, sandbox.ErrAlreadySettled) {
		return engine.Errorf(engine.CodeConflict, "outcome: the payout was already settled the other way")
	}
	return err
}

// TestDeploymentPaths: the flags that name the deployment's files are
// refused when relative, or when the database is missing, with a message
// that says what to give instead.
func TestDeploymentPaths(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "payd.db")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		db, binary string
		want       string // in the error; "" for none
	}{
		{"payd.db", "/usr/local/bin/payd", `is a relative path, and go test runs this suite in`},
		{"./data/payd.db", "payd", `e.g. -db "$PWD/./data/payd.db"`},
		{filepath.Join(t.TempDir(), "missing.db"), "payd", "no database there"},
		{existing, "./payd", `-payd-binary ./payd is a relative path`},
		{existing, "payd", ""},
		{existing, "/tmp/payd", ""},
		{"postgres://payd@db.internal/payd", "payd", ""},
	} {
		err := checkDeploymentPaths(tc.db, tc.binary)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("-db %s -payd-binary %s: %v, want %q", tc.db, tc.binary, err, tc.want)
		}
	}
}
