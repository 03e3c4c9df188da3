package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SigningSecretGrace is how long the previous H2H signing secret stays valid
// after a rotation.
const SigningSecretGrace = 24 * time.Hour

// Prefixes of the secrets payd issues, so a leaked one is recognizable.
const (
	apiKeyPrefix        = "payd_sk_"
	signingSecretPrefix = "payd_ss_"
)

// APIKey is a bearer credential of an organization. payd keeps only the
// SHA-256 of the key (keys are 256 random bits, so a fast hash is safe) and
// the key's H2H signing secrets, sealed under the master key.
type APIKey struct {
	ID             string
	OrganizationID string
	Hash           []byte
	// Hint is the key's last four characters, to tell keys apart in lists.
	Hint string

	SigningSecret []byte // sealed
	// PreviousSigningSecret is the sealed secret before the last rotation,
	// valid until PreviousSecretExpiresAt; nil when there is none.
	PreviousSigningSecret   []byte
	PreviousSecretExpiresAt time.Time

	CreatedAt time.Time
	// ExpiresAt, when set, is when the key stops authenticating (revoked, or
	// replaced by a rotation with a grace period).
	ExpiresAt *time.Time
}

// APIKeyCredentials are the plaintext secrets of a new API key: shown once.
type APIKeyCredentials struct {
	APIKeyID      string
	APIKey        string
	SigningSecret string
}

// Principal is an authenticated caller: an API key of an organization, with
// the H2H signing secrets valid right now (current first).
type Principal struct {
	OrganizationID string
	APIKeyID       string
	SigningSecrets [][]byte
}

func hashAPIKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

func (e *Engine) issueAPIKey(ctx context.Context, tx Tx, orgID string, now time.Time) (*APIKeyCredentials, error) {
	creds := &APIKeyCredentials{
		APIKeyID:      NewID(PrefixAPIKey, now),
		APIKey:        apiKeyPrefix + RandomToken(32),
		SigningSecret: signingSecretPrefix + RandomToken(32),
	}
	key := &APIKey{
		ID:             creds.APIKeyID,
		OrganizationID: orgID,
		Hash:           hashAPIKey(creds.APIKey),
		Hint:           creds.APIKey[len(creds.APIKey)-4:],
		SigningSecret:  e.keyring.Seal([]byte(creds.SigningSecret), creds.APIKeyID),
		CreatedAt:      now,
	}
	if err := tx.CreateAPIKey(ctx, key); err != nil {
		return nil, err
	}
	return creds, nil
}

// errInvalidAPIKey is Authenticate's refusal, made once: it is the same
// for every caller, and a request should not pay for it when it succeeds.
var errInvalidAPIKey = Errorf(CodeUnauthorized, ReasonInvalidAPIKey)

// Authenticate resolves a bearer API key. Returns unauthorized with message
// invalid_api_key if the key is unknown or no longer valid. A key that
// authenticated is remembered for Config.APIKeyCacheTTL (see keyCache).
func (e *Engine) Authenticate(ctx context.Context, apiKey string) (*Principal, error) {
	invalid := errInvalidAPIKey
	if !strings.HasPrefix(apiKey, apiKeyPrefix) || len(apiKey) > 128 {
		return nil, invalid
	}
	hash := sha256.Sum256([]byte(apiKey))
	if k := e.keys.get(hash, e.clock.Now()); k != nil {
		if p := k.principal(e.now()); p != nil {
			return p, nil
		}
		return nil, invalid
	}
	gen := e.keys.generation()
	loadedAt := e.clock.Now()
	var key *APIKey
	err := e.readOne(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		key, err = tx.GetAPIKeyByHash(ctx, hash[:])
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return nil, invalid
	} else if err != nil {
		return nil, err
	}
	k, err := e.openKey(key, loadedAt)
	if err != nil {
		return nil, err
	}
	e.keys.put(hash, k, gen)
	if p := k.principal(e.now()); p != nil {
		return p, nil
	}
	return nil, invalid
}

// openKey decrypts the signing secrets of a key read at loadedAt. A
// previous secret is opened even if its grace has passed: principal leaves
// it out then.
func (e *Engine) openKey(key *APIKey, loadedAt time.Time) (*cachedKey, error) {
	k := &cachedKey{
		loadedAt: loadedAt, organizationID: key.OrganizationID, apiKeyID: key.ID,
		expiresAt: key.ExpiresAt, previousUntil: key.PreviousSecretExpiresAt,
	}
	secret, err := e.keyring.Open(key.SigningSecret, key.ID)
	if err != nil {
		return nil, fmt.Errorf("api key %s: %w", key.ID, err)
	}
	k.current = [][]byte{secret}
	if key.PreviousSigningSecret != nil {
		prev, err := e.keyring.Open(key.PreviousSigningSecret, key.ID)
		if err != nil {
			return nil, fmt.Errorf("api key %s: %w", key.ID, err)
		}
		k.both = [][]byte{secret, prev}
	}
	return k, nil
}

// CreateAPIKey issues an additional API key (with its own signing secret)
// for an organization.
func (e *Engine) CreateAPIKey(ctx context.Context, orgID string) (*APIKeyCredentials, error) {
	var creds *APIKeyCredentials
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		if creds, err = e.issueAPIKey(ctx, tx, orgID, e.now()); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditKeyCreate, orgID, creds.APIKeyID, nil)
	})
	return creds, err
}

// RotateAPIKey replaces an API key: it issues a new key with a new signing
// secret and lets the old one work for grace more (zero revokes it now).
func (e *Engine) RotateAPIKey(ctx context.Context, keyID string, grace time.Duration) (*APIKeyCredentials, error) {
	if grace < 0 || grace > 30*24*time.Hour {
		return nil, Invalid("grace", "must be between 0 and 720h")
	}
	var creds *APIKeyCredentials
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		old, err := tx.GetAPIKey(ctx, keyID)
		if err != nil {
			return notFound(err, "api key")
		}
		now := e.now()
		if old.ExpiresAt != nil && !now.Before(*old.ExpiresAt) {
			return Errorf(CodeInvalidRequest, "key: %s is already revoked", keyID)
		}
		until := now.Add(grace)
		if old.ExpiresAt == nil || until.Before(*old.ExpiresAt) {
			old.ExpiresAt = &until
		}
		if err := tx.UpdateAPIKey(ctx, old); err != nil {
			return err
		}
		if creds, err = e.issueAPIKey(ctx, tx, old.OrganizationID, now); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditKeyRotate, old.OrganizationID, old.ID, map[string]string{
			"new_api_key_id": creds.APIKeyID, "grace": grace.String(), "old_key_expires_at": FormatTime(*old.ExpiresAt),
		})
	})
	e.keys.invalidate()
	return creds, err
}

// RevokeAPIKey stops an API key from authenticating, now.
func (e *Engine) RevokeAPIKey(ctx context.Context, keyID string) (*APIKey, error) {
	var key *APIKey
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if key, err = tx.GetAPIKey(ctx, keyID); err != nil {
			return notFound(err, "api key")
		}
		now := e.now()
		if key.ExpiresAt == nil || now.Before(*key.ExpiresAt) {
			key.ExpiresAt = &now
		}
		if err := tx.UpdateAPIKey(ctx, key); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditKeyRevoke, key.OrganizationID, key.ID, nil)
	})
	e.keys.invalidate()
	return key, err
}

// RotateSigningSecret issues a new H2H signing secret for an API key and
// returns it (shown once). The previous secret stays valid for
// SigningSecretGrace.
func (e *Engine) RotateSigningSecret(ctx context.Context, keyID string) (string, error) {
	secret := signingSecretPrefix + RandomToken(32)
	err := e.inTx(ctx, func(ctx context.Context, tx Tx) error {
		key, err := tx.GetAPIKey(ctx, keyID)
		if err != nil {
			return notFound(err, "api key")
		}
		now := e.now()
		key.PreviousSigningSecret = key.SigningSecret
		key.PreviousSecretExpiresAt = now.Add(SigningSecretGrace)
		key.SigningSecret = e.keyring.Seal([]byte(secret), key.ID)
		if err := tx.UpdateAPIKey(ctx, key); err != nil {
			return err
		}
		return e.audit(ctx, tx, AuditSigningSecretRotate, key.OrganizationID, key.ID, map[string]string{
			"previous_valid_until": FormatTime(key.PreviousSecretExpiresAt),
		})
	})
	e.keys.invalidate()
	if err != nil {
		return "", err
	}
	return secret, nil
}

// ListAPIKeys returns the API keys of an organization (hashes and sealed
// secrets only; nothing that authenticates).
func (e *Engine) ListAPIKeys(ctx context.Context, orgID string) ([]*APIKey, error) {
	var keys []*APIKey
	err := e.store.ReadTx(ctx, func(ctx context.Context, tx Tx) error {
		if _, err := tx.GetOrganization(ctx, orgID); err != nil {
			return notFound(err, "organization")
		}
		var err error
		keys, err = tx.ListAPIKeys(ctx, orgID)
		return err
	})
	return keys, err
}
