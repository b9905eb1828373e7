package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/store"
)

// An account's external id is made once and read back the same every
// time after; an unknown account has none.
func TestEnsureExternalIDIsMadeOnceAndKept(t *testing.T) {
	s := newStore(t)
	a, err := s.CreateAccount(ctx, "acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.EnsureExternalID(ctx, a.ID)
	if err != nil || !strings.HasPrefix(first, "gifq-") || len(first) != len("gifq-")+32 {
		t.Fatalf("%q %v", first, err)
	}
	again, err := s.EnsureExternalID(ctx, a.ID)
	if err != nil || again != first {
		t.Fatalf("second: %q %v, want %q", again, err, first)
	}
	if got, err := s.GetAccount(ctx, a.ID); err != nil || got.AWSExternalID != first || got.Name != "acme" {
		t.Fatalf("account %+v %v", got, err)
	}
	b, _ := s.CreateAccount(ctx, "other", 0)
	if other, _ := s.EnsureExternalID(ctx, b.ID); other == first {
		t.Fatal("two accounts share an external id")
	}
	if _, err := s.EnsureExternalID(ctx, "acct_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
}
