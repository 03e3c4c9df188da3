package main

import (
	"context"
	"flag"
	"maps"

	"github.com/payd-engine/payd/engine"
)

// The UddoktaPay-compatible checkout's key: it opens only /api/checkout-v2
// and /api/verify-payment, and is shown once.
var compatCommands = map[string]adminCommand{
	"compat enable":  {summary: "issue the organization's UddoktaPay-compatible API key (replacing any), shown once", setup: compatEnable},
	"compat disable": {summary: "revoke the organization's UddoktaPay-compatible API key", setup: compatDisable},
}

func init() { maps.Copy(adminCommands, compatCommands) }

func compatEnable(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		key, err := eng.EnableCompat(ctx, *org)
		if err != nil {
			return nil, err
		}
		return map[string]string{"api_key": key}, nil
	}
}

func compatDisable(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		if err := eng.DisableCompat(ctx, *org); err != nil {
			return nil, err
		}
		return map[string]string{"organization_id": *org, "compat": "disabled"}, nil
	}
}
