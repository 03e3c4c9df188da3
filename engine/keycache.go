package engine

import (
	"sync"
	"time"
)

// keyCacheMaxEntries bounds the cache. Only keys that authenticated are
// kept, so reaching it takes that many valid keys in use at once; it is then
// emptied and fills again.
const keyCacheMaxEntries = 10000

// keyCache keeps API keys that authenticated, by the SHA-256 of the key,
// with their signing secrets already opened, so that a request does not
// read the key's row and decrypt its secrets every time. An entry is used
// for at most ttl after it was read. Whether the key and its previous secret
// are still valid is decided at each use from the expiry times read with
// it, so revocations and grace periods that were known when it was read
// take effect on time. Rotations and revocations made through this engine
// empty the cache as they commit; ttl bounds how long one made by another
// process (payd admin, another instance) goes unseen.
type keyCache struct {
	ttl time.Duration // <= 0: nothing is cached

	mu      sync.Mutex
	entries map[[32]byte]*cachedKey
	// gen changes on every invalidation: a key read from the store before
	// one is not stored after it.
	gen uint64
}

// cachedKey is an API key as it authenticated at loadedAt.
type cachedKey struct {
	loadedAt       time.Time
	organizationID string
	apiKeyID       string
	expiresAt      *time.Time
	// current holds the current secret; both also the previous one, used
	// until previousUntil.
	current, both [][]byte
	previousUntil time.Time
}

// principal is the caller the entry authenticates at now, or nil if the key
// no longer authenticates.
func (k *cachedKey) principal(now time.Time) *Principal {
	if k.expiresAt != nil && !now.Before(*k.expiresAt) {
		return nil
	}
	p := &Principal{OrganizationID: k.organizationID, APIKeyID: k.apiKeyID, SigningSecrets: k.current}
	if k.both != nil && now.Before(k.previousUntil) {
		p.SigningSecrets = k.both
	}
	return p
}

// get returns the entry for hash if it is younger than ttl at now.
func (c *keyCache) get(hash [32]byte, now time.Time) *cachedKey {
	if c.ttl <= 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.entries[hash]
	if k == nil {
		return nil
	}
	if now.Sub(k.loadedAt) >= c.ttl || now.Before(k.loadedAt) {
		delete(c.entries, hash)
		return nil
	}
	return k
}

// generation is the value to pass to put for a key about to be read.
func (c *keyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores k unless the cache was invalidated since gen was taken.
func (c *keyCache) put(hash [32]byte, k *cachedKey, gen uint64) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.entries == nil || len(c.entries) >= keyCacheMaxEntries {
		c.entries = map[[32]byte]*cachedKey{}
	}
	c.entries[hash] = k
}

// invalidate forgets every entry: called after a change to any API key
// commits.
func (c *keyCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.entries = nil
}
