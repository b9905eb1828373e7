package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// With the per-endpoint cap on: a worker that read the endpoint
// before it was disabled (through the API or by its 410), deleted,
// re-pointed or its secret rotated takes no in-flight slot for it, so it makes no claim and no
// POST: the slots' take (TakeSlots, the worker's pool) is conditioned on the endpoint's route as read,
// which each of those changes moves, on the endpoint and its slot item in
// one transaction. Nothing is written by a refused take. A change that
// does not re-point (a description) keeps the route; a slot held by another
// claim is still ErrSlotTaken.
func TestASlotIsTakenOnlyForTheRouteTheWorkerRead(t *testing.T) {
	s := newStore(t)
	acct := account(t, s).ID
	moved, yes := "https://hooks.example.com/new", true
	for name, change := range map[string]func(t *testing.T, ep domain.Endpoint){
		"url": func(t *testing.T, ep domain.Endpoint) {
			if _, err := s.UpdateEndpoint(ctx, acct, ep.ID, store.EndpointPatch{URL: &moved}); err != nil {
				t.Fatal(err)
			}
		},
		"disabled": func(t *testing.T, ep domain.Endpoint) {
			if _, err := s.UpdateEndpoint(ctx, acct, ep.ID, store.EndpointPatch{Disabled: &yes}); err != nil {
				t.Fatal(err)
			}
		},
		"deleted": func(t *testing.T, ep domain.Endpoint) {
			if err := s.DeleteEndpoint(ctx, acct, ep.ID); err != nil {
				t.Fatal(err)
			}
		},
		"secret rotated": func(t *testing.T, ep domain.Endpoint) {
			// A worker's read from before it would sign with the old
			// secrets only (a load of ingest's first message may be a
			// second old).
			if _, err := s.RotateSecret(ctx, acct, ep.ID, domain.Rotation{NewSecret: signing.NewSecret(), ExpirePreviousNow: true}); err != nil {
				t.Fatal(err)
			}
		},
		"gone (410)": func(t *testing.T, ep domain.Endpoint) {
			// Another delivery's attempt answered 410: its record disables
			// the endpoint.
			_, d, err := event(t, s, ep, "")
			if err != nil {
				t.Fatal(err)
			}
			c := claim()
			if d, err = s.ClaimAttempt(ctx, d, c); err != nil {
				t.Fatal(err)
			}
			a := domain.Attempt{ID: c.AttemptID, DeliveryID: d.ID, StatusCode: 410, StartedAt: time.Now().UnixMilli(), ExpiresAt: d.ExpiresAt}
			o := store.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected, DisableEndpoint: lifecycle.GoneReason}
			if err := s.RecordAttempt(ctx, d, &ep, c, a, o); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ep := endpoint(t, s, acct)
			seen, err := s.GetEndpoint(ctx, acct, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			change(t, seen)
			if _, err := take(s, seen, "0"); !errors.Is(err, store.ErrEndpointChanged) {
				t.Fatalf("a take for the endpoint as read before it was changed: %v, want ErrEndpointChanged", err)
			}
			if leases, err := s.SlotLeases(ctx, ep.ID); err != nil || leases["0"].Claim != "" {
				t.Fatalf("slot 0 after the refused claim: %+v (%v), want it free", leases, err)
			}
			if name != "url" {
				return
			}
			now, err := s.GetEndpoint(ctx, acct, ep.ID)
			if err != nil || now.Route == "" || now.Route == seen.Route {
				t.Fatalf("route %q after the PATCH (was %q, %v): want a new one", now.Route, seen.Route, err)
			}
			if _, err := take(s, now, "0"); err != nil {
				t.Fatalf("a take for the endpoint as it is now: %v", err)
			}
		})
	}

	t.Run("description", func(t *testing.T) {
		ep := endpoint(t, s, acct)
		desc := "payouts"
		if _, err := s.UpdateEndpoint(ctx, acct, ep.ID, store.EndpointPatch{Description: &desc}); err != nil {
			t.Fatal(err)
		}
		if _, err := take(s, ep, "0"); err != nil {
			t.Fatalf("a take after a PATCH of the description only: %v", err)
		}
		if _, err := take(s, ep, "0"); !errors.Is(err, store.ErrSlotTaken) {
			t.Fatalf("a take of a slot another claim holds: %v, want ErrSlotTaken", err)
		}
	})
}

func claim() store.Claim {
	return store.Claim{ID: domain.NewID("clm"), LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att")}
}

// take is a pool's take of one of ep's slots, for its route as read.
func take(s *store.Store, ep domain.Endpoint, slot string) ([]string, error) {
	return s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: domain.NewID("clm"), Slots: []string{slot}, LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), Route: ep.Route})
}
