package httpapi

import (
	"testing"
	"time"
)

func TestKeyCache(t *testing.T) {
	now := time.Unix(1000, 0)
	c := &keyCache{ttl: 30 * time.Second}
	if _, _, ok := c.get("gifq_a", now); ok {
		t.Fatal("empty cache hit")
	}
	c.put("gifq_a", "acct_1", "key_1", now)
	if a, k, ok := c.get("gifq_a", now.Add(29*time.Second)); !ok || a != "acct_1" || k != "key_1" {
		t.Fatalf("within the TTL: %q %q %v", a, k, ok)
	}
	if _, _, ok := c.get("gifq_a", now.Add(31*time.Second)); ok {
		t.Fatal("hit after the TTL: a revoked key would live on")
	}
	if _, _, ok := c.get("gifq_b", now); ok {
		t.Fatal("another key hit")
	}
	for k := range c.m {
		if string(k[:]) == "gifq_a" {
			t.Fatal("the cache holds the key itself")
		}
	}
	off := &keyCache{}
	off.put("gifq_a", "acct_1", "key_1", now)
	if _, _, ok := off.get("gifq_a", now); ok {
		t.Fatal("a cache with TTL 0 must not remember")
	}
	for i := 0; i < keyCacheMax+5; i++ {
		c.put(string(rune(i))+"k", "acct", "key", now)
	}
	if len(c.m) > keyCacheMax {
		t.Fatalf("cache grew to %d", len(c.m))
	}
}
