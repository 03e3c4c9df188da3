package main

import (
	"context"
	"flag"
	"time"

	"github.com/payd-engine/payd/engine"
)

func credentialsView(c *engine.APIKeyCredentials) map[string]string {
	return map[string]string{"api_key_id": c.APIKeyID, "api_key": c.APIKey, "signing_secret": c.SigningSecret}
}

func keyCreate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		c, err := eng.CreateAPIKey(ctx, *org)
		if err != nil {
			return nil, err
		}
		return credentialsView(c), nil
	}
}

// keyView is an API key as listed: never anything that authenticates.
type keyView struct {
	APIKeyID                string  `json:"api_key_id"`
	Hint                    string  `json:"hint"`
	CreatedAt               string  `json:"created_at"`
	ExpiresAt               *string `json:"expires_at"`
	PreviousSecretExpiresAt *string `json:"previous_signing_secret_valid_until"`
}

func keyList(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		keys, err := eng.ListAPIKeys(ctx, *org)
		if err != nil {
			return nil, err
		}
		views := make([]keyView, len(keys))
		for i, k := range keys {
			views[i] = keyView{APIKeyID: k.ID, Hint: "..." + k.Hint, CreatedAt: engine.FormatTime(k.CreatedAt)}
			if k.ExpiresAt != nil {
				s := engine.FormatTime(*k.ExpiresAt)
				views[i].ExpiresAt = &s
			}
			if k.PreviousSigningSecret != nil {
				s := engine.FormatTime(k.PreviousSecretExpiresAt)
				views[i].PreviousSecretExpiresAt = &s
			}
		}
		return map[string]any{"api_keys": views}, nil
	}
}

func keyRotate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	key := fs.String("key", "", "API key ID to replace")
	grace := fs.Duration("grace", 24*time.Hour, "how long the old key keeps working (0 revokes it now)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		c, err := eng.RotateAPIKey(ctx, *key, *grace)
		if err != nil {
			return nil, err
		}
		out := credentialsView(c)
		out["replaced_api_key_id"] = *key
		return out, nil
	}
}

func keyRevoke(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	key := fs.String("key", "", "API key ID")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		k, err := eng.RevokeAPIKey(ctx, *key)
		if err != nil {
			return nil, err
		}
		return map[string]string{"api_key_id": k.ID, "revoked_at": engine.FormatTime(*k.ExpiresAt)}, nil
	}
}

func signingSecretRotate(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	key := fs.String("key", "", "API key ID whose signing secret to rotate")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		secret, err := eng.RotateSigningSecret(ctx, *key)
		if err != nil {
			return nil, err
		}
		return map[string]string{
			"api_key_id":                          *key,
			"signing_secret":                      secret,
			"previous_signing_secret_valid_until": engine.FormatTime(eng.Now().Add(engine.SigningSecretGrace)),
		}, nil
	}
}
