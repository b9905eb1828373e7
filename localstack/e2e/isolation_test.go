package e2e

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/lifecycle"
)

// gauge counts a receiver's requests in progress and the most at once
// since it was last reset. With a timeout, a request counts as in progress
// for at most that long after it reached the receiver: the sender started
// its timer before that and has given up by then, freed its in-flight slot
// and may already be sending the next request, while the handler here
// learns of the closed connection only when the server reads it (later
// under load: a CI run once counted one request too many).
type gauge struct {
	timeout time.Duration
	mu      sync.Mutex
	open    map[int]time.Time // requests in progress, by number, when they arrived
	peak    int
	started int // requests begun since the reset
	n       int
}

func (g *gauge) enter() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = map[int]time.Time{}
	}
	g.expire()
	g.n++
	g.open[g.n] = time.Now()
	g.started++
	g.peak = max(g.peak, len(g.open))
	return g.n
}

// expire ends the requests in progress longer than the timeout.
func (g *gauge) expire() {
	for id, at := range g.open {
		if g.timeout > 0 && time.Since(at) >= g.timeout {
			delete(g.open, id)
		}
	}
}

func (g *gauge) leave(id int) { g.mu.Lock(); delete(g.open, id); g.mu.Unlock() }

func (g *gauge) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expire()
	g.peak, g.started = len(g.open), 0
}

func (g *gauge) read() (peak, started int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak, g.started
}

// hang answers nothing until the sender gives up (a dead endpoint), counting
// itself in g and in all.
func hang(g, all *gauge) respondFunc {
	return func(_ int, _ http.ResponseWriter, r *http.Request) (int, string) {
		defer g.leave(g.enter())
		defer all.leave(all.enter())
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return 0, ""
	}
}

// While account A's endpoints all time out, A holds
// at most its share of the workers, measured at its receivers as requests
// in progress: the in-flight cap per endpoint times its endpoints until the
// breakers open, then one probe per endpoint at a time; and account B's
// deliveries, posted during the outage, all complete.
//
// Without the breaker (BREAKER=off) A keeps cap x endpoints requests in
// progress for the whole outage and the second phase fails.
func TestTimingOutAccountHoldsOnlyItsShare(t *testing.T) {
	localOnly(t)
	const endpointsA, capPer, eventsA, eventsB, timeout = 4, 3, 40, 150, time.Second
	h := start(t, opts{maxInFlight: capPer, rate: 1000, retry: "1s,2s,4s,8s,16s,32s,64s",
		env: map[string]string{"DELIVERY_TIMEOUT": timeout.String()}})
	acctA, keyA := h.account(t)
	_, keyB := h.account(t)
	all := &gauge{timeout: timeout}
	per := make([]*gauge, endpointsA)
	var epIDs []string
	for i := range per {
		per[i] = &gauge{timeout: timeout}
		_, ep := h.registerReceiver(t, keyA, hang(per[i], all))
		epIDs = append(epIDs, ep.ID)
	}
	rvB, epB := h.registerReceiver(t, keyB, always(200))

	h.publishMany(t, keyA, eventsA) // 160 deliveries to dead endpoints
	// Phase 1: the breakers open; A never has more than cap x endpoints in progress.
	deadline := time.Now().Add(60 * time.Second)
	for {
		open := 0
		for _, id := range epIDs {
			ep, err := h.store.GetEndpoint(ctx, acctA, id)
			if err == nil && lifecycle.BreakerOf(ep, time.Now()) != lifecycle.BreakerClosed {
				open++
			}
		}
		if open == endpointsA {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d breakers open after 60 s", open, endpointsA)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if peak, _ := all.read(); peak > capPer*endpointsA {
		t.Fatalf("A had %d requests in progress before its breakers opened, its share is %d", peak, capPer*endpointsA)
	}
	t.Logf("phase 1: breakers open; A's peak in progress %d (share %d)", func() int { p, _ := all.read(); return p }(), capPer*endpointsA)
	// The API shows why A's deliveries wait: the breaker, and until when.
	var got struct {
		Breaker *struct {
			State     string    `json:"state"`
			OpenUntil time.Time `json:"open_until"`
		} `json:"breaker"`
	}
	if code := h.call(t, keyA, "GET", "/v1/endpoints/"+epIDs[0], nil, &got); code != 200 || got.Breaker == nil ||
		got.Breaker.State == "" || got.Breaker.OpenUntil.IsZero() {
		t.Fatalf("GET the endpoint with its breaker open: %d %+v", code, got.Breaker)
	}
	var closed struct {
		Breaker *struct{} `json:"breaker"`
	}
	if code := h.call(t, keyB, "GET", "/v1/endpoints/"+epB.ID, nil, &closed); code != 200 || closed.Breaker != nil {
		t.Fatalf("GET a healthy endpoint: %d, breaker %+v (want none shown)", code, closed.Breaker)
	}

	// B posts during the outage.
	b := h.publishMany(t, keyB, eventsB)
	// Let the attempts in flight when the breakers opened time out (1 s).
	time.Sleep(2 * time.Second)
	all.reset()
	for _, g := range per {
		g.reset()
	}
	// Phase 2: until every endpoint has been probed, at most one request
	// at a time per endpoint.
	deadline = time.Now().Add(90 * time.Second)
	for probed := 0; probed < endpointsA; {
		probed = 0
		for _, g := range per {
			if _, started := g.read(); started > 0 {
				probed++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d endpoints probed after 90 s", probed, endpointsA)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, g := range per {
		if peak, started := g.read(); peak > 1 {
			t.Errorf("endpoint %d: %d requests in progress at once with its breaker open (%d started); want one probe", i, peak, started)
		}
	}
	peak, started := all.read()
	if peak > endpointsA {
		t.Errorf("A had %d requests in progress with its breakers open; its share is one probe per endpoint, %d", peak, endpointsA)
	}
	t.Logf("phase 2: A's peak in progress %d, %d requests (probes)", peak, started)

	waitCount(t, "B delivered", eventsB, 60*time.Second, func() int { return len(rvB.requests()) })
	for _, ev := range b[:10] {
		if d := h.delivery(t, keyB, ev.Deliveries[0].ID); d.Status != "delivered" || d.AttemptCount != 1 {
			t.Fatalf("B's delivery %+v", d)
		}
	}
}
