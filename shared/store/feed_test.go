package store_test

import (
	"testing"
	"time"
)

// Newest first, the same listing goes back across day partitions, bounded
// and resumable before a cursor; test events and other accounts' are not in it.
func TestAccountEventsNewestFirst(t *testing.T) {
	s := newStore(t)
	a, b := account(t, s), account(t, s)
	now := time.Now()
	e1 := eventAt(t, s, a.ID, now.Add(-50*time.Hour), "order.paid", false)
	e2 := eventAt(t, s, a.ID, now.Add(-26*time.Hour), "payout.paid", false)
	eventAt(t, s, a.ID, now.Add(-25*time.Hour), "webhook.test", true, "ep_x")
	e3 := eventAt(t, s, a.ID, now.Add(-2*time.Minute), "order.paid", false)
	e4 := eventAt(t, s, a.ID, now.Add(-time.Minute), "order.paid", false)
	eventAt(t, s, b.ID, now.Add(-time.Minute), "order.paid", false)
	since, until := now.Add(-72*time.Hour).UnixMilli(), now.UnixMilli()

	var got []string
	after := ""
	for range 10 {
		page, more, err := s.AccountEventsNewestFirst(ctx, a.ID, after, since, until, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page)...)
		if !more {
			break
		}
		after = page[len(page)-1].ID
	}
	want := []string{e4.ID, e3.ID, e2.ID, e1.ID}
	if len(got) != len(want) {
		t.Fatalf("pages: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pages: %v, want %v", got, want)
		}
	}
	window, _, err := s.AccountEventsNewestFirst(ctx, a.ID, "", now.Add(-30*time.Hour).UnixMilli(), now.Add(-10*time.Hour).UnixMilli(), 10)
	if err != nil || len(window) != 1 || window[0].ID != e2.ID {
		t.Fatalf("window: %v %v", ids(window), err)
	}
	if before, more, err := s.AccountEventsNewestFirst(ctx, a.ID, e1.ID, since, until, 10); err != nil || more || len(before) != 0 {
		t.Fatalf("before the oldest: %v %v %v", ids(before), more, err)
	}
}
