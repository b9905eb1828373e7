package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination/webhook"
)

// One endpoint that never answers and one
// that refuses connections, 30 events each, a 1 s x 7 schedule. Before, the
// breaker held their deliveries without using attempts (0 of 60 failed 207
// s after the last post; with the real schedule, all still pending after
// 24 h). Now every delivery fails (and is dead-lettered) by the time its
// schedule would have ended, sum(schedule) + 8 x the timeout + 2 min at
// most, and no delivery reaches the receiver more than 8 times. The
// timeout is 2 s here; the contract's 10 s makes the same run take 3
// minutes, a scripted run whose result docs/lifecycle.md records:
//
//	E2E_DEADLINE_TIMEOUT=10s go test -count=1 -v -run TestDeadEndpointsDeliveriesAllFailByTheirDeadline ./localstack/e2e/
func TestDeadEndpointsDeliveriesAllFailByTheirDeadline(t *testing.T) {
	localOnly(t) // sets the schedule and the timeout
	const events = 30
	timeout := 2 * time.Second
	if v := os.Getenv("E2E_DEADLINE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("E2E_DEADLINE_TIMEOUT=%q: %v", v, err)
		}
		timeout = d
	}
	schedule := 7 * time.Second
	h := start(t, opts{rate: 1000, retry: "1s,1s,1s,1s,1s,1s,1s", env: map[string]string{"DELIVERY_TIMEOUT": timeout.String()}})
	_, key := h.account(t)

	var mu sync.Mutex
	perDelivery := map[string]int{} // requests the hanging receiver saw, by delivery
	g, all := &gauge{}, &gauge{}
	hangs := hang(g, all)
	h.registerReceiver(t, key, func(i int, w http.ResponseWriter, r *http.Request) (int, string) {
		mu.Lock()
		perDelivery[r.Header.Get(webhook.HeaderDelivery)]++
		mu.Unlock()
		return hangs(i, w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := fmt.Sprintf("http://%s/hook", l.Addr())
	l.Close() // nothing listens there now: every connection is refused
	h.endpoint(t, key, refused)

	posted := h.publishMany(t, key, events)
	last := time.Now()
	bound := schedule + 8*timeout + 2*time.Minute
	failed := map[string]int{}
	for _, ev := range posted {
		for _, d := range ev.Deliveries {
			got := h.waitFor(t, key, d.ID, time.Until(last.Add(bound)), settled)
			if got.Status != "failed" || got.AttemptCount > 8 {
				t.Fatalf("delivery %s: %s (%s) after %d attempts, want failed within 8", d.ID, got.Status, got.FailReason, got.AttemptCount)
			}
			failed[got.FailReason]++
		}
	}
	took := time.Since(last)
	mu.Lock()
	most := 0
	for _, n := range perDelivery {
		most = max(most, n)
	}
	mu.Unlock()
	if most > 8 {
		t.Fatalf("a delivery reached the hanging receiver %d times, want at most 8", most)
	}
	if dl := h.dlq(t); len(dl) != 2*events {
		t.Fatalf("%d deliveries in the DLQ, want %d", len(dl), 2*events)
	}
	t.Logf("%d deliveries failed %s after the last post (bound %s), by reason %v; at most %d requests for one delivery",
		2*events, took.Round(time.Second), bound, failed, most)
}
