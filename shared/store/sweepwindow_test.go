package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

// windowIDs reads every shard of the sweep index for entries due in
// [from, before).
func windowIDs(t *testing.T, s *store.Store, from, before int64) []string {
	t.Helper()
	var ids []string
	for shard := 0; shard < schema.SweepShards; shard++ {
		page, err := s.DueForSweep(ctx, shard, from, before, 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, page.IDs...)
	}
	return ids
}

// A delivered delivery keeps its sweep index entry (the outcome's write
// does not touch the index), and the window reads it only where its due
// time falls.
func TestADeliveredDeliveryKeepsItsSweepEntryInItsWindow(t *testing.T) {
	s := newStore(t)
	ep, d, c, claimed := claimedOne(t, s)
	epNow, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 200}
	if err := s.RecordAttempt(ctx, claimed, &epNow, c, a, store.Outcome{Status: domain.StatusDelivered, Healthy: true}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetDelivery(ctx, d.ID)
	if got.Status != domain.StatusDelivered || got.DueAt == 0 {
		t.Fatalf("delivered: %+v, want its due_at kept", got)
	}
	if ids := windowIDs(t, s, got.DueAt, got.DueAt+1); !contains(ids, d.ID) {
		t.Fatal("the delivered delivery's entry is not in the window of its due time")
	}
	if ids := windowIDs(t, s, got.DueAt+1, got.DueAt+time.Hour.Milliseconds()); contains(ids, d.ID) {
		t.Fatal("the entry is read by a window after its due time")
	}
	if ids := windowIDs(t, s, 0, got.DueAt); contains(ids, d.ID) {
		t.Fatal("the entry is read by a window before its due time")
	}
	// An empty window (a mark at or past now less the grace: a clock that
	// went back, or no grace) reads nothing, without an error.
	if ids := windowIDs(t, s, got.DueAt, got.DueAt); len(ids) != 0 {
		t.Fatalf("an empty window read %v", ids)
	}
}

// The marks are per shard, absent until written, and may move back.
func TestSweepMarks(t *testing.T) {
	s := newStore(t)
	if m, err := s.SweepMarks(ctx); err != nil || len(m) != 0 {
		t.Fatalf("marks before any run: %v %v", m, err)
	}
	if err := s.SetSweepMarks(ctx, map[int]int64{0: 100, 15: 200}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSweepMarks(ctx, map[int]int64{0: 50}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.SweepMarks(ctx); err != nil || len(m) != 2 || m[0] != 50 || m[15] != 200 {
		t.Fatalf("marks: %v %v, want 0:50 15:200", m, err)
	}
}

// Revisit moves the entry of a delivery that still needs work to a later
// window, keeping when it was first overdue; a final delivery, or one due
// later already, is left as it is.
func TestRevisitMovesOnlyAnEntryStillNeedingWork(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	seen, _ := s.GetDelivery(ctx, d.ID)
	at := seen.DueAt + time.Hour.Milliseconds()
	if err := s.Revisit(ctx, d.ID, at); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetDelivery(ctx, d.ID)
	if got.DueAt != at || got.OverdueFrom != seen.DueAt {
		t.Fatalf("revisited: due %d overdue_from %d, want %d and %d", got.DueAt, got.OverdueFrom, at, seen.DueAt)
	}
	if err := s.Revisit(ctx, d.ID, at-1); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetDelivery(ctx, d.ID); got.DueAt != at {
		t.Fatalf("a revisit earlier than its due time moved it: %d", got.DueAt)
	}
	// Failed and dead-lettered: out of the index, nothing to revisit.
	failed, err := s.FailWithoutAttempt(ctx, got, domain.ReasonEndpointDisabled, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkDeadLettered(ctx, d.ID, failed.Gen); err != nil {
		t.Fatal(err)
	}
	if err := s.Revisit(ctx, d.ID, at+time.Hour.Milliseconds()); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetDelivery(ctx, d.ID); got.DueAt != 0 {
		t.Fatalf("a revisit put a dead-lettered delivery back in the index: due %d", got.DueAt)
	}
	if err := s.Revisit(ctx, "dlv_missing", at); err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revisit of a missing delivery: %v", err)
	}
}
