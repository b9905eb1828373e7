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
// before the claim and the endpoint slot free, so the next claim of the same
// attempt succeeds and logs nothing as interrupted; only the claim's holder
// can give it back, once.
func TestYieldClaimRestoresTheDeliveryAndFreesTheSlot(t *testing.T) {
	for _, slot := range []string{"0", ""} { // with the per-endpoint cap, and without
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
		c := store.Claim{ID: "c1", AttemptID: "att_1", LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), Slot: slot, URL: ep.URL}
		claimed, err := s.ClaimAttempt(ctx, seen, c)
		if err != nil {
			t.Fatal(err)
		}
		other := c
		other.ID = "c2"
		if err := s.YieldClaim(ctx, seen, claimed, other); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("slot %q: another claim gave it back: %v", slot, err)
		}
		if err := s.YieldClaim(ctx, seen, claimed, c); err != nil {
			t.Fatalf("slot %q: %v", slot, err)
		}
		got, err := s.GetDelivery(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, seen) {
			t.Fatalf("slot %q: not restored:\n got %+v\nwant %+v", slot, got, seen)
		}
		snap, err := s.LoadForAttempt(ctx, store.Ref{DeliveryID: d.ID, AccountID: ep.AccountID, EndpointID: ep.ID, EventID: d.EventID})
		if err != nil || snap.Endpoint == nil || len(snap.Endpoint.Leases) != 0 {
			t.Fatalf("slot %q: still held (the slot item's leases): %+v %v", slot, snap.Endpoint, err)
		}
		if err := s.YieldClaim(ctx, seen, claimed, c); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("slot %q: given back twice: %v", slot, err)
		}
		again, err := s.ClaimAttempt(ctx, got, store.Claim{ID: "c3", AttemptID: "att_2", LeaseUntil: c.LeaseUntil, Slot: slot, URL: ep.URL})
		if err != nil || again.Attempts != 1 {
			t.Fatalf("slot %q: the attempt could not be claimed again: %+v %v", slot, again, err)
		}
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
	c := store.Claim{ID: "c1", AttemptID: a.ID, LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), Slot: "0", URL: ep.URL}
	if err := s.ClaimManual(ctx, d, a, c); err != nil {
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
	again := store.Claim{ID: "c2", AttemptID: a.ID, LeaseUntil: c.LeaseUntil, Slot: "0", URL: ep.URL}
	if err := s.ClaimManual(ctx, d, a, again); err != nil {
		t.Fatalf("the resend could not be claimed again (its slot freed, its attempt gone): %v", err)
	}
}
