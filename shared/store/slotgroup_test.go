package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// A pool's group take, on the emulator: several slots in one conditional
// write under one claim id; against slots held by another group, the rest
// in one more write; none when the endpoint's route moved; the group's
// free, one write, leaves alone a slot another claim holds.
func TestAGroupTakesAndFreesItsSlotsInOneWrite(t *testing.T) {
	s, calls := countedStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	lease := time.Now().Add(time.Minute).UnixMilli()
	calls.Reset()
	got, err := s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: "clm_a", Slots: []string{"0", "1", "2"}, LeaseUntil: lease, Route: ep.Route})
	if err != nil || !slices.Equal(got, []string{"0", "1", "2"}) || calls.Count("DynamoDB.UpdateItem") != 1 {
		t.Fatalf("group a's take: %v, %v in %d writes; want 0, 1, 2 in one", got, err, calls.Count("DynamoDB.UpdateItem"))
	}
	calls.Reset()
	got, err = s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: "clm_b", Slots: []string{"2", "3", "4"}, LeaseUntil: lease, Route: ep.Route})
	if err != nil || !slices.Equal(got, []string{"3", "4"}) || calls.Count("DynamoDB.UpdateItem") != 2 {
		t.Fatalf("group b's take past a's slot 2: %v, %v in %d writes; want 3, 4 in two", got, err, calls.Count("DynamoDB.UpdateItem"))
	}
	if _, err := s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: "clm_c", Slots: []string{"1", "3"}, LeaseUntil: lease, Route: ep.Route}); !errors.Is(err, store.ErrSlotTaken) {
		t.Fatalf("a take of slots all held: %v, want ErrSlotTaken", err)
	}
	if got, err := s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: "clm_a", Slots: []string{"0"}, LeaseUntil: lease + 1000, Route: ep.Route}); err != nil || len(got) != 1 {
		t.Fatalf("group a taking its own slot again (a longer lease): %v, %v", got, err)
	}
	moved := "https://hooks.example.com/moved"
	if _, err := s.UpdateEndpoint(ctx, ep.AccountID, ep.ID, store.EndpointPatch{URL: &moved}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: "clm_d", Slots: []string{"5"}, LeaseUntil: lease, Route: ep.Route}); !errors.Is(err, store.ErrEndpointChanged) {
		t.Fatalf("a take for the route as read before a PATCH: %v, want ErrEndpointChanged", err)
	}
	if route, err := s.SlotRoute(ctx, ep.ID); err != nil || route == ep.Route || route == "" {
		t.Fatalf("the route read after the PATCH: %q, %v; want the new one, not %q", route, err, ep.Route)
	}
	calls.Reset()
	s.FreeSlots(ctx, ep.ID, "clm_a", []string{"0", "1", "2"}) // 2 is a's: b's take never got it
	if calls.Count("DynamoDB.UpdateItem") != 1 {
		t.Fatalf("the group's free took %d writes, want 1", calls.Count("DynamoDB.UpdateItem"))
	}
	s.FreeSlots(ctx, ep.ID, "clm_a", []string{"3"}) // b's: left alone
	leases, err := s.SlotLeases(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(leases) != 2 || leases["3"].Claim != "clm_b" || leases["4"].Claim != "clm_b" {
		t.Fatalf("leases after a's free: %+v; want b's 3 and 4 alone", leases)
	}
	var none []string
	for slot, l := range leases {
		if l.Until < domain.Millis(time.Now()) {
			none = append(none, slot)
		}
	}
	if len(none) != 0 {
		t.Fatalf("leases run out: %v", none)
	}
}

// A group's free refused once (a throttle) is tried again: its slots are
// leased to the end of the invocation, and left held they kept the
// endpoint's deliveries waiting for the cap.
func TestAGroupsFreeIsTriedAgain(t *testing.T) {
	env := testenv.New(t)
	db := &failingDB{DynamoDB: env.DB}
	s := store.New(db, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	take := store.SlotTake{Group: "clm_a", Slots: []string{"0", "1"}, LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), Route: ep.Route}
	if _, err := s.TakeSlots(ctx, ep.ID, take); err != nil {
		t.Fatal(err)
	}
	db.slotUpdates = 1
	s.FreeSlots(ctx, ep.ID, "clm_a", []string{"0", "1"})
	if db.slotUpdates != 0 {
		t.Fatal("the injected refusal did not happen")
	}
	if leases, err := s.SlotLeases(ctx, ep.ID); err != nil || len(leases) != 0 {
		t.Fatalf("after the free: %+v %v, want no slot held", leases, err)
	}
}
