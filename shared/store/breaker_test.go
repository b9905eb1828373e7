package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/store"
)

// recordWithBreaker makes one attempt of a fresh delivery to ep whose
// outcome carries a breaker change, and returns the endpoint as written.
func recordWithBreaker(t *testing.T, s *store.Store, ep domain.Endpoint, c lifecycle.BreakerChange) domain.Endpoint {
	t.Helper()
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	claim := store.Claim{ID: domain.NewID("clm"), LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att")}
	claimed, err := s.ClaimAttempt(ctx, d, claim)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := domain.Attempt{ID: claim.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptAuto, Series: 1, Number: 1, StartedAt: time.Now().UnixMilli(),
		ErrorClass: "timeout", Outcome: domain.OutcomeRetry, ExpiresAt: d.ExpiresAt}
	o := store.Outcome{Status: domain.StatusPending, NextAttemptAt: time.Now().Add(time.Minute).UnixMilli(), Breaker: c}
	if err := s.RecordAttempt(ctx, claimed, &cur, claim, a, o); err != nil {
		t.Fatal(err)
	}
	cur, err = s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

// The breaker's writes ride on the endpoint's update after an attempt; once
// its pause is over exactly one of several workers wins the probe; the
// probe's answer closes it.
func TestBreakerStateAndOneProbe(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	if err := s.TakeProbe(ctx, ep.AccountID, ep.ID, time.Now().Add(time.Minute).UnixMilli()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("probe of a closed breaker: %v", err)
	}
	for i := 1; i <= 2; i++ {
		if got := recordWithBreaker(t, s, ep, lifecycle.BreakerChange{On: lifecycle.BreakerFailed, Count: true}); got.BreakerFails != i {
			t.Fatalf("after %d counted failures: %d", i, got.BreakerFails)
		}
	}
	opened := recordWithBreaker(t, s, ep, lifecycle.BreakerChange{On: lifecycle.BreakerTripped, OpenUntil: time.Now().Add(time.Hour).UnixMilli(), PauseMs: 30_000})
	if lifecycle.BreakerOf(opened, time.Now()) != lifecycle.BreakerOpen || opened.BreakerFails != 0 || opened.BreakerPauseMs != 30_000 {
		t.Fatalf("not open: %+v", opened)
	}
	if err := s.TakeProbe(ctx, ep.AccountID, ep.ID, time.Now().Add(time.Minute).UnixMilli()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("probe while open: %v", err)
	}
	// The pause is over.
	recordWithBreaker(t, s, ep, lifecycle.BreakerChange{On: lifecycle.BreakerProbeBad, OpenUntil: time.Now().Add(-time.Second).UnixMilli(), PauseMs: 60_000})
	var mu sync.Mutex
	wins := 0
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.TakeProbe(ctx, ep.AccountID, ep.ID, time.Now().Add(time.Minute).UnixMilli())
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConflict):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d workers won the probe, want 1", wins)
	}
	probing, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if st := lifecycle.BreakerOf(probing, time.Now()); st != lifecycle.BreakerProbing {
		t.Fatalf("after the probe was taken: %s", st)
	}
	closed := recordWithBreaker(t, s, ep, lifecycle.BreakerChange{On: lifecycle.BreakerProbeOK, Close: true})
	if lifecycle.BreakerOf(closed, time.Now()) != lifecycle.BreakerClosed || fmt.Sprint(closed.BreakerFails, closed.BreakerPauseMs, closed.BreakerProbeUntil) != "0 0 0" {
		t.Fatalf("not closed: %+v", closed)
	}
}

// Enabling an endpoint again, or giving it a new URL, closes its breaker:
// what was learnt of the old receiver does not hold the new one back.
func TestEnableOrNewURLClosesTheBreaker(t *testing.T) {
	enabled, url := false, "https://new.example.com/hook"
	for name, patch := range map[string]store.EndpointPatch{"enabled": {Disabled: &enabled}, "new url": {URL: &url}} {
		s := newStore(t)
		ep := endpoint(t, s, account(t, s).ID)
		opened := recordWithBreaker(t, s, ep, lifecycle.BreakerChange{On: lifecycle.BreakerTripped, OpenUntil: time.Now().Add(time.Hour).UnixMilli(), PauseMs: 30_000})
		if lifecycle.BreakerOf(opened, time.Now()) != lifecycle.BreakerOpen {
			t.Fatalf("%s: not open: %+v", name, opened)
		}
		got, err := s.UpdateEndpoint(ctx, ep.AccountID, ep.ID, patch)
		if err != nil {
			t.Fatal(err)
		}
		if lifecycle.BreakerOf(got, time.Now()) != lifecycle.BreakerClosed || got.BreakerOpenUntil != 0 || got.BreakerPauseMs != 0 {
			t.Fatalf("%s: breaker not closed: %+v", name, got)
		}
	}
}
