package e2e

import (
	"testing"
	"time"
)

// An endpoint registered after events replays the ones its filter matches:
// each arrives at the receiver once, signed like any delivery; replaying the
// same window again sends nothing.
func TestReplayDeliversMissedEventsOnce(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	since := time.Now().Add(-time.Minute)
	for i := 0; i < 3; i++ {
		h.publish(t, key, payout)
	}
	h.publish(t, key, `{"event":"order.created"}`)
	rv, ep := h.registerReceiver(t, key, always(200), "payout.*")
	type replayOut struct {
		Scanned, Replayed, Skipped int
		More                       bool
	}
	var res replayOut
	body := map[string]string{"since": since.Format(time.RFC3339Nano)}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/replay", body, &res); code != 202 || res.Replayed != 3 || res.More {
		t.Fatalf("replay: %d %+v", code, res)
	}
	deadline := time.Now().Add(time.Duration(float64(20*time.Second) * h.slower))
	for len(rv.requests()) < 3 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	var again replayOut
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/replay", body, &again); code != 202 || again.Replayed != 0 {
		t.Fatalf("replay again: %d %+v", code, again)
	}
	time.Sleep(time.Second)
	if n := len(rv.requests()); n != 3 {
		t.Fatalf("receiver got %d requests, want the 3 payouts once", n)
	}
}
