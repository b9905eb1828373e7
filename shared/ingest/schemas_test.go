package ingest

import (
	"testing"

	"github.com/gifq/webhooks/shared/catalog"
)

func TestSchemaCacheIsPerCatalogVersionAndBounded(t *testing.T) {
	var c schemaCache
	s, err := catalog.Compile([]byte(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	c.store("acct_a", 3, "payout.sent", s, 100)
	c.store("acct_a", 3, "payout.free", nil, 10) // no schema: cached as such
	if got, ok := c.lookup("acct_a", 3, "payout.sent"); !ok || got != s {
		t.Fatal("a cached schema is not found")
	}
	if got, ok := c.lookup("acct_a", 3, "payout.free"); !ok || got != nil {
		t.Fatal("a type without a schema is not remembered as such")
	}
	if _, ok := c.lookup("acct_a", 4, "payout.sent"); ok {
		t.Fatal("a newer catalog version found the old schema")
	}
	if _, ok := c.lookup("acct_b", 3, "payout.sent"); ok {
		t.Fatal("another account found acct_a's schema")
	}
	// A newer version replaces the account's entries.
	c.store("acct_a", 4, "payout.other", nil, 10)
	if _, ok := c.lookup("acct_a", 3, "payout.sent"); ok {
		t.Fatal("the old version's schema outlived the new version")
	}
	// Past the byte budget the cache starts again empty.
	c.store("acct_b", 1, "big", s, maxCachedSchemaBytes)
	if _, ok := c.lookup("acct_a", 4, "payout.other"); ok {
		t.Fatal("the cache grew past its bound")
	}
	if _, ok := c.lookup("acct_b", 1, "big"); !ok {
		t.Fatal("the entry that reset the cache is not in it")
	}
}
