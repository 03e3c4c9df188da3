package httpsuite_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/conformance/httpsuite"
	"github.com/payd-engine/payd/paydtest"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/transport"
)

// Flags to run the suite against a deployment instead of the in-process
// server (absolute paths: go test runs the suite in this package's
// directory, not where it was typed):
//
//	go test ./conformance/httpsuite/ -args -base-url http://127.0.0.1:8080/api \
//	    -payd-binary ./payd -db /path/to/payd.db -webhooks
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
	// The reference server on the wall clock with its workers, short
	// intervals and payd serve's rate limits; and the same mounted by a
	// host under a path of its own, with http.StripPrefix.
	for name, mount := range map[string]string{"Root": "", "Mounted": "/payments"} {
		t.Run(name, func(t *testing.T) {
			srv := paydtest.MustRunMain(t, paydtest.WithSandbox(sandbox.Config{PayoutDelay: 500 * time.Millisecond}), paydtest.WithMount(mount), func(c *payd.Config) {
				c.Engine.PollInterval = 100 * time.Millisecond
				c.RateLimits = transport.DefaultRateLimits
			})
			httpsuite.Run(httpsuite.Testing(t), httpsuite.Target{
				BaseURL:  srv.URL + "/api",
				Hooks:    httpsuite.EngineHooks{Engine: srv.Engine},
				Webhooks: true, // the in-process webhook client allows loopback
			})
		})
	}
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
