package engine

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"time"
)

// WebhookEndpoint is a URL of an organization that receives its events,
// signed with the endpoint's secret (Standard Webhooks).
type WebhookEndpoint struct {
	ID             string
	OrganizationID string
	URL            string
	// Secret is the sealed "whsec_..." secret; PreviousSecret, while
	// PreviousSecretExpiresAt is ahead, still signs too (rotation).
	Secret                  []byte
	PreviousSecret          []byte
	PreviousSecretExpiresAt time.Time
	Enabled                 bool
	// DisabledReason says why a disabled endpoint was disabled.
	DisabledReason string
	// FailingSince is when the endpoint's current run of failures began;
	// zero while it is healthy.
	FailingSince time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WebhookSecretGrace is how long an endpoint's previous secret keeps
// signing after a rotation.
const WebhookSecretGrace = 24 * time.Hour

// AddWebhookEndpoint registers a URL to receive an organization's events
// and returns it with its secret, shown once.
func (e *Engine) AddWebhookEndpoint(ctx context.Context, orgID, rawURL string) (*WebhookEndpoint, string, error) {
	if err := checkAbsoluteURL("url", rawURL); err != nil {
		return nil, "", err
	}
	if u, _ := url.Parse(rawURL); u.User != nil {
		return nil, "", Invalid("url", "must not carry credentials")
	}
	now := e.now()
	secret := newWebhookSecret()
	ep := &WebhookEndpoint{
		ID: NewID(PrefixEndpoint, now), OrganizationID: orgID, URL: rawURL, Enabled: true,
		CreatedAt: now, UpdatedAt: now,
	}
	ep.Secret = e.keyring.Seal([]byte(secret), ep.ID)
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		if err := tx.CreateWebhookEndpoint(ctx, ep); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditWebhookAdd, orgID, ep.ID, map[string]string{"url": RedactURL(ep.URL)})
	})
	if err != nil {
		return nil, "", err
	}
	return ep, secret, nil
}

// ListWebhookEndpoints returns an organization's endpoints.
func (e *Engine) ListWebhookEndpoints(ctx context.Context, orgID string) ([]*WebhookEndpoint, error) {
	var eps []*WebhookEndpoint
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		eps, err = tx.ListWebhookEndpoints(ctx, orgID, false)
		return err
	})
	return eps, err
}

// RemoveWebhookEndpoint deletes an endpoint and its deliveries.
func (e *Engine) RemoveWebhookEndpoint(ctx context.Context, id string) error {
	return e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		ep, err := tx.GetWebhookEndpoint(ctx, id)
		if err != nil {
			return notFound(err, "webhook endpoint")
		}
		if err := tx.DeleteWebhookEndpoint(ctx, id); err != nil {
			return notFound(err, "webhook endpoint")
		}
		return e.audit(ctx, tx, AuditWebhookRemove, ep.OrganizationID, ep.ID, map[string]string{"url": RedactURL(ep.URL)})
	})
}

// RotateWebhookSecret gives an endpoint a new secret, returned once; the
// previous one keeps signing (both signatures in the header) for
// WebhookSecretGrace so the receiver can switch without losing events.
func (e *Engine) RotateWebhookSecret(ctx context.Context, id string) (string, error) {
	secret := newWebhookSecret()
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		ep, err := tx.LockWebhookEndpoint(ctx, id)
		if err != nil {
			return notFound(err, "webhook endpoint")
		}
		now := e.now()
		ep.PreviousSecret, ep.PreviousSecretExpiresAt = ep.Secret, now.Add(WebhookSecretGrace)
		ep.Secret = e.keyring.Seal([]byte(secret), ep.ID)
		ep.UpdatedAt = now
		if err := tx.UpdateWebhookEndpoint(ctx, ep); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditWebhookRotateSecret, ep.OrganizationID, ep.ID, map[string]string{
			"previous_valid_until": FormatTime(ep.PreviousSecretExpiresAt),
		})
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// EnableWebhookEndpoint puts a disabled endpoint back in service; its
// pending deliveries resume.
func (e *Engine) EnableWebhookEndpoint(ctx context.Context, id string) (*WebhookEndpoint, error) {
	var ep *WebhookEndpoint
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if ep, err = tx.LockWebhookEndpoint(ctx, id); err != nil {
			return notFound(err, "webhook endpoint")
		}
		details := map[string]string{"was_enabled": fmt.Sprint(ep.Enabled), "disabled_reason": ep.DisabledReason}
		ep.Enabled, ep.DisabledReason, ep.FailingSince, ep.UpdatedAt = true, "", time.Time{}, e.now()
		if err := tx.UpdateWebhookEndpoint(ctx, ep); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditWebhookEnable, ep.OrganizationID, ep.ID, details)
	})
	if err == nil {
		e.wakeWorkers()
	}
	return ep, err
}

// newWebhookSecret returns a Standard Webhooks secret: "whsec_" and the
// base64 of 32 random bytes (transport/webhook verifies such secrets).
func newWebhookSecret() string {
	key := make([]byte, 32)
	if _, err := cryptorand.Read(key); err != nil {
		panic("payd: crypto/rand failed: " + err.Error())
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// endpointSecrets opens the secrets an endpoint signs with now.
func (e *Engine) endpointSecrets(ep *WebhookEndpoint) ([]string, error) {
	cur, err := e.keyring.Open(ep.Secret, ep.ID)
	if err != nil {
		return nil, fmt.Errorf("webhook endpoint %s: %w", ep.ID, err)
	}
	secrets := []string{string(cur)}
	if ep.PreviousSecret != nil && e.now().Before(ep.PreviousSecretExpiresAt) {
		prev, err := e.keyring.Open(ep.PreviousSecret, ep.ID)
		if err != nil {
			return nil, fmt.Errorf("webhook endpoint %s: %w", ep.ID, err)
		}
		secrets = append(secrets, string(prev))
	}
	return secrets, nil
}

// RedactURL is a webhook URL as payd shows it (the audit log, delivery
// errors, the operator console): without user info, query and fragment,
// which may carry a receiver's token. "" if raw is not a URL.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
