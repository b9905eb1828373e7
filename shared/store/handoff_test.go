package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// The worker's in-process handoff, on the emulator: a claim may take over a
// slot that another live claim holds only when it names that claim (From);
// the holder, recording with its slot handed over, leaves the new holder's
// lease alone; a slot handed over and not used is freed by FreeSlot, naming
// the claim that still holds it.
func TestClaimTakesOverOnlyTheSlotHandedToIt(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d1, _ := event(t, s, ep, "")
	_, d2, _ := event(t, s, ep, "")
	_, d3, _ := event(t, s, ep, "")
	lease := time.Now().Add(time.Minute).UnixMilli()
	a := store.Claim{ID: "clm_a", LeaseUntil: lease, Slot: "0", URL: ep.URL}
	claimedA, err := s.ClaimAttempt(ctx, d1, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimAttempt(ctx, d2, store.Claim{ID: "clm_x", LeaseUntil: lease, Slot: "0", From: "clm_other", URL: ep.URL}); !errors.Is(err, store.ErrSlotTaken) {
		t.Fatalf("a claim naming another holder took the slot: %v", err)
	}
	b := store.Claim{ID: "clm_b", LeaseUntil: lease, Slot: "0", From: "clm_a", URL: ep.URL}
	if _, err := s.ClaimAttempt(ctx, d2, b); err != nil {
		t.Fatalf("the claim the slot was handed to: %v", err)
	}
	if leases, _ := s.SlotLeases(ctx, ep.ID); leases["0"].Claim != "clm_b" {
		t.Fatalf("slot 0 after the handoff: %+v", leases)
	}
	handed := a
	handed.Slot = "" // what the worker records with once it handed the slot over
	att := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d1.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 200}
	if err := s.RecordAttempt(ctx, claimedA, &ep, handed, att, store.Outcome{Status: domain.StatusDelivered, Healthy: true}); err != nil {
		t.Fatal(err)
	}
	if leases, _ := s.SlotLeases(ctx, ep.ID); leases["0"].Claim != "clm_b" {
		t.Fatalf("the old holder's record freed the new holder's slot: %+v", leases)
	}
	s.FreeSlot(ctx, ep.ID, "0", "clm_a") // names a claim that no longer holds it: nothing
	if leases, _ := s.SlotLeases(ctx, ep.ID); leases["0"].Claim != "clm_b" {
		t.Fatalf("FreeSlot of a former holder freed the slot: %+v", leases)
	}
	s.FreeSlot(ctx, ep.ID, "0", "clm_b")
	if leases, _ := s.SlotLeases(ctx, ep.ID); len(leases) != 0 {
		t.Fatalf("FreeSlot of its holder left %+v", leases)
	}
	if _, err := s.ClaimAttempt(ctx, d3, store.Claim{ID: "clm_c", LeaseUntil: lease, Slot: "0", URL: ep.URL}); err != nil {
		t.Fatalf("a free slot: %v", err)
	}
}
