package httpapi

import (
	"crypto/sha256"
	"sync"
	"time"
)

// keyCache remembers, for a short while, which account a valid API key
// belongs to, so a producer posting many events does not cost a DynamoDB
// read each. It holds SHA-256 digests, never keys. A revoked key stops
// working within the TTL (30 s by default; API_KEY_CACHE_TTL=0 turns it off).
type keyCache struct {
	mu  sync.Mutex
	ttl time.Duration
	m   map[[32]byte]cachedKey
}

type cachedKey struct {
	account, keyID string
	until          time.Time
}

const keyCacheMax = 10000

func (c *keyCache) get(secret string, now time.Time) (account, keyID string, ok bool) {
	if c == nil || c.ttl <= 0 {
		return "", "", false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[sha256.Sum256([]byte(secret))]
	if !ok || now.After(e.until) {
		return "", "", false
	}
	return e.account, e.keyID, true
}

func (c *keyCache) put(secret, account, keyID string, now time.Time) {
	if c == nil || c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= keyCacheMax {
		c.m = map[[32]byte]cachedKey{}
	}
	c.m[sha256.Sum256([]byte(secret))] = cachedKey{account: account, keyID: keyID, until: now.Add(c.ttl)}
}
