package main

import (
	"context"
	"errors"
	"flag"
	"os"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
)

// The bKash provider's admin commands: an organization's API credentials,
// sealed with the master key.

func init() {
	adminCommands["bkash connect"] = adminCommand{summary: "store an organization's bKash API credentials (sealed); its bkash deposits then pay through bKash's API", bkash: bkashConnect}
	adminCommands["bkash disconnect"] = adminCommand{summary: "forget an organization's bKash API credentials and token", bkash: bkashDisconnect}
}

func bkashConnect(fs *flag.FlagSet) func(context.Context, *bkash.Provider, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	var c bkash.Credentials
	fs.StringVar(&c.AppKey, "app-key", "", "bKash app key")
	fs.StringVar(&c.AppSecret, "app-secret", "", "bKash app secret (or env PAYD_BKASH_APP_SECRET, kept out of the shell's history)")
	fs.StringVar(&c.Username, "username", "", "bKash API username")
	fs.StringVar(&c.Password, "password", "", "bKash API password (or env PAYD_BKASH_PASSWORD)")
	fs.StringVar(&c.BaseURL, "base-url", bkash.DefaultBaseURL, "bKash's tokenized checkout URL with its version (its sandbox, or a test server)")
	return func(ctx context.Context, p *bkash.Provider, eng *engine.Engine) (any, error) {
		if c.AppSecret == "" {
			c.AppSecret = os.Getenv("PAYD_BKASH_APP_SECRET")
		}
		if c.Password == "" {
			c.Password = os.Getenv("PAYD_BKASH_PASSWORD")
		}
		if _, err := eng.GetOrganization(ctx, *org); err != nil {
			return nil, err
		}
		if err := p.Connect(ctx, *org, c); err != nil {
			return nil, err
		}
		// The answer names the connection, never a secret.
		return map[string]any{"organization_id": *org, "connected": true, "app_key": c.AppKey, "base_url": c.BaseURL}, nil
	}
}

func bkashDisconnect(fs *flag.FlagSet) func(context.Context, *bkash.Provider, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, p *bkash.Provider, _ *engine.Engine) (any, error) {
		ok, err := p.Disconnect(ctx, *org)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errors.New("the organization has no bKash credentials")
		}
		return map[string]any{"organization_id": *org, "connected": false}, nil
	}
}
