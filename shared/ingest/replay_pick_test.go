package ingest

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// missing picks, oldest first, the events the endpoint subscribes to and
// has no delivery for, at most max, and says how many it looked at (the
// cursor stops at the last one picked when max is reached).
func TestMissingPicksUnsentMatchingEvents(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_a", EventTypes: []string{"payout.*"}}
	refs := []store.EventRef{
		{ID: "evt_1", Type: "payout.paid"},
		{ID: "evt_2", Type: "order.paid"},                                   // not subscribed
		{ID: "evt_3", Type: "payout.failed", EndpointIDs: []string{"ep_a"}}, // had one
		{ID: "evt_4", Type: "payout.paid", EndpointIDs: []string{"ep_b"}},   // another endpoint's
		{ID: "evt_5", Type: "payout.paid"},
	}
	cases := []struct {
		max      int
		want     []string
		consumed int
	}{
		{10, []string{"evt_1", "evt_4", "evt_5"}, 5},
		{2, []string{"evt_1", "evt_4"}, 4},
		{1, []string{"evt_1"}, 1},
		{0, nil, 0},
	}
	for _, c := range cases {
		picked, consumed, _ := missing(ep, refs, c.max, time.Now())
		var got []string
		for _, r := range picked {
			got = append(got, r.ID)
		}
		if consumed != c.consumed || len(got) != len(c.want) {
			t.Errorf("max %d: picked %v consumed %d, want %v %d", c.max, got, consumed, c.want, c.consumed)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("max %d: picked %v, want %v", c.max, got, c.want)
			}
		}
	}
	// An endpoint with no filter takes every type.
	if picked, _, _ := missing(domain.Endpoint{ID: "ep_c"}, refs, 10, time.Now()); len(picked) != 5 {
		t.Errorf("no filter: %d picked", len(picked))
	}
}

// An event whose retention ends within the expiry margin (an hour) is not
// replayed: its delivery would be failed as event_expired and dead-lettered
// at once. It is passed over and counted, and the cursor moves past it.
func TestMissingSkipsEventsInTheirLastHour(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	ep := domain.Endpoint{ID: "ep_a"}
	refs := []store.EventRef{
		{ID: "evt_1", Type: "a", ExpiresAt: now.Add(59 * time.Minute).Unix()}, // its last hour
		{ID: "evt_2", Type: "a", ExpiresAt: now.Add(2 * time.Hour).Unix()},
		{ID: "evt_3", Type: "a", ExpiresAt: now.Add(-time.Minute).Unix()}, // past (DynamoDB deletes late)
		{ID: "evt_4", Type: "a", ExpiresAt: now.Add(29 * 24 * time.Hour).Unix()},
	}
	picked, consumed, expiring := missing(ep, refs, 10, now)
	if len(picked) != 2 || picked[0].ID != "evt_2" || picked[1].ID != "evt_4" || consumed != 4 || expiring != 2 {
		t.Fatalf("picked %v, consumed %d, expiring %d; want evt_2 and evt_4, 4, 2", picked, consumed, expiring)
	}
}
