package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/sender"
)

// TestIsolationFigures is the scripted run behind docs/scale.md's
// isolation figures (never asserted): account B posts 10 events a second
// for 30 s to one healthy endpoint while account A's 16 endpoints (1,600
// deliveries queued first) time out after the 10 s delivery timeout, with
// the breaker on and off, and once with no outage; it prints B's
// ingest-to-delivered p50/p99.
//
//	GIFQ_FIGURES=1 go test -count=1 -run TestIsolationFigures -v -timeout 20m ./localstack/e2e/
func TestIsolationFigures(t *testing.T) {
	if os.Getenv("GIFQ_FIGURES") == "" {
		t.Skip("a scripted run for docs/scale.md; set GIFQ_FIGURES=1")
	}
	localOnly(t)
	for _, run := range []struct {
		name    string
		outage  bool
		breaker string
	}{{"no outage", false, "on"}, {"outage, breaker on", true, "on"}, {"outage, breaker off", true, "off"}} {
		p50, p99, n := isolationRun(t, run.outage, run.breaker)
		t.Logf("measured: %-20s B: %d delivered, ingest-to-delivered p50 %v, p99 %v", run.name, n, p50, p99)
	}
}

func isolationRun(t *testing.T, outage bool, breaker string) (p50, p99 time.Duration, n int) {
	const endpointsA, eventsA, rateB, secondsB = 16, 100, 10, 30
	h := start(t, opts{rate: 1000, retry: "1s,16s,81s,256s,625s,1296s,2401s", env: map[string]string{"BREAKER": breaker}})
	_, keyA := h.account(t)
	_, keyB := h.account(t)
	if outage {
		for i := 0; i < endpointsA; i++ {
			h.registerReceiver(t, keyA, func(_ int, _ http.ResponseWriter, r *http.Request) (int, string) {
				select {
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
				return 0, ""
			})
		}
		h.publishMany(t, keyA, eventsA)
	}
	var mu sync.Mutex
	posted := map[string]time.Time{}
	var lat []time.Duration
	rvB := h.receiver(t, always(200))
	epB := h.endpoint(t, keyB, rvB.URL)
	rvB.setSecret(epB.Secret)
	tick := time.NewTicker(time.Second / rateB)
	for i := 0; i < rateB*secondsB; i++ {
		<-tick.C
		go func(i int) {
			// The post time is taken before the call: ingest is part of it.
			id := fmt.Sprintf("b_%d", i)
			mu.Lock()
			posted[id] = time.Now()
			mu.Unlock()
			h.publish(t, keyB, fmt.Sprintf(`{"event":"payout.fulfilled","data":{"id":%q}}`, id))
		}(i)
	}
	tick.Stop()
	waitCount(t, "B delivered", rateB*secondsB, 3*time.Minute, func() int { return len(rvB.requests()) })
	mu.Lock()
	defer mu.Unlock()
	for _, r := range rvB.requests() {
		var body struct {
			Data struct{ ID string } `json:"data"`
		}
		_ = json.Unmarshal(r.body, &body)
		if p, ok := posted[body.Data.ID]; ok && r.header.Get(sender.HeaderAttempt) == "1" {
			lat = append(lat, r.at.Sub(p))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) == 0 {
		return 0, 0, 0
	}
	pct := func(p float64) time.Duration {
		return lat[min(len(lat)-1, int(p*float64(len(lat))))].Round(time.Millisecond)
	}
	return pct(0.50), pct(0.99), len(lat)
}
