package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/payd-engine/payd/conformance/httpsuite"
)

// conformance runs the black-box HTTP conformance suite against a running
// deployment, bootstrapping it with this binary's admin commands on the
// deployment's database, and prints one line per check.
func conformance(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("payd conformance", flag.ContinueOnError)
	baseURL := fs.String("base-url", env("PAYD_CONFORMANCE_BASE_URL", ""), "base URL of the deployment, API prefix included, e.g. http://127.0.0.1:8080/api (env PAYD_CONFORMANCE_BASE_URL)")
	db := fs.String("db", env("PAYD_DB", "payd.db"), "the deployment's database, for the admin commands that bootstrap it: a SQLite file path or a postgres:// URL (env PAYD_DB)")
	masterKeyFile := fs.String("master-key-file", env("PAYD_MASTER_KEY_FILE", ""), "the deployment's master key file, if not the default (PAYD_MASTER_KEY takes precedence) (env PAYD_MASTER_KEY_FILE)")
	webhooks := fs.Bool("webhooks", false, "check webhooks: the deployment can post to a receiver in this process (a local server needs --webhook-allow-private)")
	webhookListen := fs.String("webhook-listen", "127.0.0.1:0", "listen address of the webhook receiver")
	webhookURL := fs.String("webhook-url", "", "URL at which the deployment reaches the receiver (default http://<listen address>/...)")
	waitTimeout := fs.Duration("wait-timeout", 30*time.Second, "how long to wait for background work: a verification, a payout, a webhook")
	verbose := fs.Bool("v", false, "print the log of passing checks too")
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *baseURL == "" {
		fs.Usage()
		return errors.New("--base-url is required")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the payd executable for the admin commands: %w", err)
	}
	hooks := httpsuite.CLIHooks{Binary: self, DB: *db}
	if *masterKeyFile != "" {
		hooks.Env = append(hooks.Env, "PAYD_MASTER_KEY_FILE="+*masterKeyFile)
	}
	target := httpsuite.Target{
		BaseURL: *baseURL, Hooks: hooks, Webhooks: *webhooks,
		WebhookListenAddr: *webhookListen, WebhookURL: *webhookURL, WaitTimeout: *waitTimeout,
	}
	r := httpsuite.NewReporter(stdout)
	r.Verbose, r.Context = *verbose, ctx
	r.Run("conformance", func(t httpsuite.T) { httpsuite.Run(t, target) })
	if !r.Summary() {
		return errors.New("conformance: some checks failed")
	}
	return nil
}
