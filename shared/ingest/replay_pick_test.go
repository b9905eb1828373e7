package ingest

import (
	"testing"

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
		picked, consumed := missing(ep, refs, c.max)
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
	if picked, _ := missing(domain.Endpoint{ID: "ep_c"}, refs, 10); len(picked) != 5 {
		t.Errorf("no filter: %d picked", len(picked))
	}
}
