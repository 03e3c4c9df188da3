package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payd-engine/payd/engine"
)

// countingStore counts read transactions: how often keys are read.
type countingStore struct {
	engine.Store
	reads atomic.Int64
}

func (s *countingStore) ReadTx(ctx context.Context, fn func(ctx context.Context, tx engine.Tx) error) error {
	s.reads.Add(1)
	return s.Store.ReadTx(ctx, fn)
}

// TestAPIKeyCache: a key that authenticated is not read again within the
// TTL; changes made through the same engine apply at once, expiry times
// apply on time from the cache, and changes made by another process apply
// once the TTL has passed.
func TestAPIKeyCache(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	store := &countingStore{Store: f.store}
	const ttl = 5 * time.Second
	eng, err := engine.New(engine.Config{Store: store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, APIKeyCacheTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	other := f.eng // another process on the same database
	creds, err := eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Cached"), H2HEnabled: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	key := creds.APIKey
	auth := func(apiKey string) (*engine.Principal, int64) {
		t.Helper()
		before := store.reads.Load()
		p, err := eng.Authenticate(f.ctx, apiKey)
		if err != nil && engine.ErrorCode(err) != engine.CodeUnauthorized {
			t.Fatal(err)
		}
		return p, store.reads.Load() - before
	}
	secrets := func(p *engine.Principal) []string {
		var out []string
		for _, s := range p.SigningSecrets {
			out = append(out, string(s))
		}
		return out
	}

	if p, reads := auth(key.APIKey); p == nil || reads != 1 || p.APIKeyID != key.APIKeyID || secrets(p)[0] != key.SigningSecret {
		t.Fatalf("first use: %+v after %d reads", p, reads)
	}
	if p, reads := auth(key.APIKey); p == nil || reads != 0 {
		t.Fatalf("second use read the key again (%d reads)", reads)
	}
	if p, reads := auth("payd_sk_unknown"); p != nil || reads != 1 {
		t.Fatalf("unknown key: %+v after %d reads", p, reads)
	}
	if _, reads := auth("payd_sk_unknown"); reads != 1 {
		t.Fatal("an unknown key must not be cached")
	}

	// A signing-secret rotation here applies at once; the previous secret
	// stays valid for its grace, decided from the cached expiry.
	fresh, err := eng.RotateSigningSecret(f.ctx, key.APIKeyID)
	if err != nil {
		t.Fatal(err)
	}
	p, reads := auth(key.APIKey)
	if got := secrets(p); reads != 1 || len(got) != 2 || got[0] != fresh || got[1] != key.SigningSecret {
		t.Fatalf("after rotation: %d secrets after %d reads", len(got), reads)
	}
	// Once the grace is over only the new secret signs; an entry is kept
	// for ttl, so the key is read again on the way.
	f.clock.Add(engine.SigningSecretGrace - time.Second)
	if p, _ := auth(key.APIKey); len(p.SigningSecrets) != 2 {
		t.Fatal("previous secret dropped before its grace ended")
	}
	f.clock.Add(time.Second)
	if p, reads := auth(key.APIKey); len(p.SigningSecrets) != 1 || reads != 0 {
		t.Fatalf("at the end of the grace: %d secrets after %d reads", len(p.SigningSecrets), reads)
	}

	// A rotation with a grace: the old key stops exactly when it ends, from
	// the cache.
	next, err := eng.RotateAPIKey(f.ctx, key.APIKeyID, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p, reads := auth(key.APIKey); p == nil || reads != 1 {
		t.Fatal("old key refused during its grace")
	}
	f.clock.Add(2 * time.Second)
	if p, reads := auth(key.APIKey); p != nil || reads != 0 {
		t.Fatalf("old key after its grace: %+v after %d reads", p, reads)
	}

	// Revocation here applies at once.
	if p, _ := auth(next.APIKey); p == nil {
		t.Fatal("new key refused")
	}
	if _, err := eng.RevokeAPIKey(f.ctx, next.APIKeyID); err != nil {
		t.Fatal(err)
	}
	if p, _ := auth(next.APIKey); p != nil {
		t.Fatal("revoked key still authenticates")
	}

	// Another process's revocation applies within the TTL.
	third, err := eng.CreateAPIKey(f.ctx, creds.Organization.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := auth(third.APIKey); p == nil {
		t.Fatal("third key refused")
	}
	if _, err := other.RevokeAPIKey(f.ctx, third.APIKeyID); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(ttl - time.Millisecond)
	if p, reads := auth(third.APIKey); p == nil || reads != 0 {
		t.Fatal("the cache was not used within its TTL")
	}
	f.clock.Add(time.Millisecond)
	if p, reads := auth(third.APIKey); p != nil || reads != 1 {
		t.Fatalf("another process's revocation unseen after the TTL: %+v after %d reads", p, reads)
	}
}

// TestAPIKeyCacheOff: a negative TTL reads the key every time.
func TestAPIKeyCacheOff(t *testing.T) {
	f := newFixtureOn(t, "sqlite")
	store := &countingStore{Store: f.store}
	eng, err := engine.New(engine.Config{Store: store, Provider: f.provider, Clock: f.clock, Keyring: f.keyring, APIKeyCacheTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := eng.CreateOrganization(f.ctx, engine.OrganizationSettings{Name: ptr("Uncached")})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := eng.Authenticate(f.ctx, creds.APIKey.APIKey); err != nil {
			t.Fatal(err)
		}
	}
	if n := store.reads.Load(); n != 3 {
		t.Fatalf("%d reads for 3 uses, want 3", n)
	}
}
