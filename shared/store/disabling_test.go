package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// An endpoint about to be disabled is marked warned once per failing
// period: of concurrent and duplicate attempts one wins; an attempt that
// read an older failing period wins nothing; a success ends the period
// and clears the mark, so the next period is warned again.
func TestDisablingIsWarnedOncePerFailingPeriod(t *testing.T) {
	s := newStore(t)
	ep, d, c, claimed := claimedOne(t, s)
	a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 500}
	if err := s.RecordAttempt(ctx, claimed, &ep, c, a, store.Outcome{Status: domain.StatusPending, NextAttemptAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	failing, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if failing.FailingSince == 0 {
		t.Fatal("the failure set no failing_since")
	}
	stale := failing
	stale.FailingSince--
	if won, err := s.WarnDisabling(ctx, stale, time.Now()); won || err != nil {
		t.Fatalf("a warning for another failing period: %v %v", won, err)
	}
	var wins sync.Map
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			won, err := s.WarnDisabling(ctx, failing, time.Now())
			if err != nil {
				t.Error(err)
			}
			wins.Store(i, won)
		})
	}
	wg.Wait()
	n := 0
	wins.Range(func(_, won any) bool {
		if won.(bool) {
			n++
		}
		return true
	})
	if n != 1 {
		t.Fatalf("%d of 4 concurrent warnings won, want 1", n)
	}
	if won, _ := s.WarnDisabling(ctx, failing, time.Now()); won {
		t.Fatal("a duplicate warned again")
	}
	warned, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if warned.DisableWarnedAt == 0 || warned.FailingSince != failing.FailingSince {
		t.Fatalf("after the warning: %+v", warned)
	}

	// A success ends the period and clears the mark.
	_, d2, _ := event(t, s, ep, "")
	c2 := store.Claim{ID: "c2", LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
	claimed2, err := s.ClaimAttempt(ctx, d2, c2)
	if err != nil {
		t.Fatal(err)
	}
	ok := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d2.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 200}
	if err := s.RecordAttempt(ctx, claimed2, &warned, c2, ok, store.Outcome{Status: domain.StatusDelivered, Healthy: true}); err != nil {
		t.Fatal(err)
	}
	healthy, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if healthy.FailingSince != 0 || healthy.DisableWarnedAt != 0 {
		t.Fatalf("after recovering: failing since %d, warned at %d", healthy.FailingSince, healthy.DisableWarnedAt)
	}
	if won, _ := s.WarnDisabling(ctx, warned, time.Now()); won {
		t.Fatal("a recovered endpoint warned")
	}

	// The next failing period is warned again; enabling the endpoint
	// again ends it too.
	_, d3, _ := event(t, s, ep, "")
	c3 := store.Claim{ID: "c3", LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
	claimed3, err := s.ClaimAttempt(ctx, d3, c3)
	if err != nil {
		t.Fatal(err)
	}
	a3 := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d3.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), ErrorClass: "timeout"}
	if err := s.RecordAttempt(ctx, claimed3, &healthy, c3, a3, store.Outcome{Status: domain.StatusPending, NextAttemptAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	again, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if won, err := s.WarnDisabling(ctx, again, time.Now()); !won || err != nil {
		t.Fatalf("the next failing period: %v %v", won, err)
	}
	for _, disabled := range []bool{true, false} {
		if _, err := s.UpdateEndpoint(ctx, ep.AccountID, ep.ID, store.EndpointPatch{Disabled: &disabled}); err != nil {
			t.Fatal(err)
		}
	}
	if enabled, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID); enabled.FailingSince != 0 || enabled.DisableWarnedAt != 0 {
		t.Fatalf("after enabling: failing since %d, warned at %d", enabled.FailingSince, enabled.DisableWarnedAt)
	}
}
