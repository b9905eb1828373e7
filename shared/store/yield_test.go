package store_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// A claim given back (its rate slot was far) leaves the delivery as it was
// before the claim, so the next claim of the same attempt succeeds and logs
// nothing as interrupted; only the claim's holder can give it back, once.
func TestYieldClaimRestoresTheDelivery(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	seen, err := s.GetDelivery(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := store.Claim{ID: "c1", AttemptID: "att_1", LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
	claimed, err := s.ClaimAttempt(ctx, seen, c)
	if err != nil {
		t.Fatal(err)
	}
	other := c
	other.ID = "c2"
	if err := s.YieldClaim(ctx, seen, claimed, other); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another claim gave it back: %v", err)
	}
	if err := s.YieldClaim(ctx, seen, claimed, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetDelivery(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, seen) {
		t.Fatalf("not restored:\n got %+v\nwant %+v", got, seen)
	}
	if err := s.YieldClaim(ctx, seen, claimed, c); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("given back twice: %v", err)
	}
	again, err := s.ClaimAttempt(ctx, got, store.Claim{ID: "c3", AttemptID: "att_2", LeaseUntil: c.LeaseUntil})
	if err != nil || again.Attempts != 1 {
		t.Fatalf("the attempt could not be claimed again: %+v %v", again, err)
	}
}

// A resend's claim given back (claimed too late for its slot's second)
// deletes its in-progress attempt, so the message, put back for a new slot,
// claims the same attempt again; before, it found the attempt taken and the
// accepted resend was dropped. Only the claim's holder can give it back.
func TestYieldManualLetsTheResendBeClaimedAgain(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	a := domain.Attempt{ID: "att_manual", DeliveryID: d.ID, Kind: domain.AttemptManual, StartedAt: time.Now().UnixMilli()}
	c := store.Claim{ID: "c1", AttemptID: a.ID, LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
	if err := s.ClaimManual(ctx, a, c); err != nil {
		t.Fatal(err)
	}
	other := c
	other.LeaseUntil++
	if err := s.YieldManual(ctx, d, other); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another claim gave it back: %v", err)
	}
	if err := s.YieldManual(ctx, d, c); err != nil {
		t.Fatal(err)
	}
	again := store.Claim{ID: "c2", AttemptID: a.ID, LeaseUntil: c.LeaseUntil}
	if err := s.ClaimManual(ctx, a, again); err != nil {
		t.Fatalf("the resend could not be claimed again (its attempt gone): %v", err)
	}
}
