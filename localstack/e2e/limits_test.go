package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/localstack/window"
	"github.com/gifq/webhooks/shared/destination/webhook"
)

// inParallel calls f(i) for i in [0, n) from workers goroutines.
func inParallel(n, workers int, f func(i int)) {
	// Buffered for every item: a worker that stops early (t.Fatal in f ends
	// its goroutine) must not leave the feeding loop blocked forever.
	next := make(chan int, n)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// publishMany posts n events for key from 8 producers at once.
func (h *harness) publishMany(t *testing.T, key string, n int) []eventOut {
	out := make([]eventOut, n)
	inParallel(n, 8, func(i int) {
		out[i] = h.publish(t, key, fmt.Sprintf(`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_%d"}}`, i))
	})
	return out
}

func waitCount(t *testing.T, what string, n int, timeout time.Duration, count func() int) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d after %s", what, count(), n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

// A burst of 500 events for one account drains at the account's rate, with
// no attempt wasted and about one SQS receive per delivery; a second
// account bursting at the same time drains at its own rate beside it.
//
// Not parallel: the burst a receiver sees grows with the processing delay
// of each attempt, which other tests' load on two cores would inflate.
func TestBurstDrainsAtTheAccountRate(t *testing.T) {
	localOnly(t)            // sets the rate and counts the app's SQS calls
	const n, rate = 500, 20 // 20/s keeps the test at ~25 s; the contract's 5/s is the default (make load shows it)
	calls := testenv.NewCalls()
	h := start(t, opts{rate: rate, calls: calls})
	_, keyA := h.account(t)
	_, keyB := h.account(t)
	rvA, _ := h.registerReceiver(t, keyA, always(200))
	rvB, _ := h.registerReceiver(t, keyB, always(200))

	start := time.Now()
	var wg sync.WaitGroup
	for _, k := range []string{keyA, keyB} {
		wg.Add(1)
		go func() { defer wg.Done(); h.publishMany(t, k, n) }()
	}
	wg.Wait()
	posted := time.Since(start)
	doneA := waitCount(t, "A delivered", n, 2*time.Minute, func() int { return len(rvA.requests()) })
	doneB := waitCount(t, "B delivered", n, 2*time.Minute, func() int { return len(rvB.requests()) })
	time.Sleep(2 * time.Second) // anything extra would show now

	pace := time.Duration(n/rate) * time.Second
	for name, rv := range map[string]*receiver{"A": rvA, "B": rvB} {
		got := rv.requests()
		events := map[string]bool{}
		var at []time.Time
		for _, r := range got {
			events[r.header.Get(webhook.HeaderEventID)] = true
			at = append(at, r.at)
			if a := r.header.Get(webhook.HeaderAttempt); a != "1" {
				t.Errorf("%s: a delivery needed attempt %s", name, a)
			}
		}
		if len(got) != n || len(events) != n {
			t.Fatalf("%s: %d requests for %d events, want %d each", name, len(got), len(events), n)
		}
		// The account's rate is whole-second buckets (shared/pace): at most
		// rate deliveries in any wall-clock second at the receiver.
		busiest := window.BusiestWallClockSecond(at)
		if busiest > rate {
			t.Errorf("%s: %d requests in one wall-clock second, limit %d", name, busiest, rate)
		}
		t.Logf("%s: %d delivered, busiest wall-clock second %d (sliding second %d)", name, n, busiest, window.Busiest(at, time.Second))
	}
	if dl := h.dlq(t); len(dl) != 0 {
		t.Fatalf("DLQ not empty: %v", dl)
	}
	received := calls.Snapshot()[testenv.MessagesReceived]
	perDelivery := float64(received) / (2 * n)
	t.Logf("posted 2x%d in %s; A drained in %s, B in %s (pace %s); %d messages received = %.2f receives per delivery",
		n, posted.Round(time.Millisecond), doneA.Sub(start).Round(time.Millisecond), doneB.Sub(start).Round(time.Millisecond), pace, received, perDelivery)
	// What a paced burst costs in Lambda time, sleeps for slots included.
	t.Logf("billed deliver time per delivery in a paced burst: %v", (h.local.DeliverBilled() / (2 * n)).Round(time.Millisecond))
	if perDelivery >= 2 {
		t.Errorf("%.2f SQS receives per delivery, want under 2", perDelivery)
	}
	// B was not slowed by A: each drained at its own pace (with room for a slow machine).
	for name, done := range map[string]time.Time{"A": doneA, "B": doneB} {
		if took := done.Sub(start); took > pace+pace/2+5*time.Second {
			t.Errorf("%s took %s to drain %d at %d/s", name, took, n, rate)
		}
	}
}

// A slow endpoint cannot take every worker: it never has more than its cap
// in flight, a fast endpoint's deliveries finish long before, and waiting
// for the cap uses no attempt.
func TestSlowEndpointIsCappedAndDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	localOnly(t) // sets the cap and the rate
	const n, capacity = 200, 4
	h := start(t, opts{rate: 200, maxInFlight: capacity})
	_, keyA := h.account(t)
	_, keyB := h.account(t)
	var slow atomic.Bool
	slow.Store(true)
	var inFlight, maxInFlight atomic.Int32
	rvA, _ := h.registerReceiver(t, keyA, func(int, http.ResponseWriter, *http.Request) (int, string) {
		now := inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if now <= m || maxInFlight.CompareAndSwap(m, now) {
				break
			}
		}
		defer inFlight.Add(-1)
		if slow.Load() {
			time.Sleep(9 * time.Second)
		}
		return 200, ""
	})
	rvB, _ := h.registerReceiver(t, keyB, always(200))
	start := time.Now()
	h.publishMany(t, keyA, n) // A's messages are ahead in the queue
	h.publishMany(t, keyB, n)
	doneB := waitCount(t, "B delivered", n, time.Minute, func() int { return len(rvB.requests()) })
	aAtB := len(rvA.requests())
	t.Logf("B's %d done in %s; A had %d requests by then", n, doneB.Sub(start).Round(time.Millisecond), aAtB)
	if aAtB > n/2 {
		t.Errorf("A got %d of %d while B finished: the slow endpoint was not held back", aAtB, n)
	}
	slow.Store(false) // let A drain
	waitCount(t, "A delivered", n, 2*time.Minute, func() int { return len(rvA.requests()) })
	time.Sleep(time.Second)
	if m := maxInFlight.Load(); m > capacity {
		t.Errorf("A had %d requests in flight, cap %d", m, capacity)
	}
	attempts := map[string]int{}
	for _, r := range rvA.requests() {
		attempts[r.header.Get(webhook.HeaderEventID)]++
		if a, _ := strconv.Atoi(r.header.Get(webhook.HeaderAttempt)); a != 1 {
			t.Errorf("an A delivery was on attempt %d: waiting for the cap must not use attempts", a)
		}
	}
	if len(attempts) != n || len(rvA.requests()) != n {
		t.Fatalf("A: %d requests for %d events", len(rvA.requests()), len(attempts))
	}
}

// A 429 with Retry-After pauses the endpoint for that long and uses no attempt.
func TestRetryAfterPausesTheEndpoint(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, func(n int, w http.ResponseWriter, _ *http.Request) (int, string) {
		if n == 1 {
			w.Header().Set("Retry-After", "3")
			return http.StatusTooManyRequests, "slow down"
		}
		return 200, ""
	})
	first := h.publish(t, key, payout)
	time.Sleep(200 * time.Millisecond)
	second := h.publish(t, key, payout)
	d1 := h.waitFor(t, key, first.Deliveries[0].ID, 20*time.Second, settled)
	h.waitFor(t, key, second.Deliveries[0].ID, 20*time.Second, settled)
	if d1.Status != "delivered" || d1.AttemptCount != 1 || len(d1.Attempts) != 2 ||
		d1.Attempts[0].StatusCode != 429 || d1.Attempts[0].Outcome != "throttled" || d1.Attempts[1].StatusCode != 200 {
		t.Fatalf("throttled delivery: %+v", d1)
	}
	got := rv.requests()
	if len(got) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(got))
	}
	for _, r := range got[1:] {
		if gap := r.at.Sub(got[0].at); gap < 3*time.Second {
			t.Errorf("a request came %s after the 429 asked for 3 s", gap)
		}
	}
}

// GET /v1/events/{id} bounds its answer: each delivery shows its newest 10
// attempts and a cursor to the rest (a delivery recovered or
// resent often would otherwise make the answer grow past Lambda's limit);
// GET /v1/deliveries/{id} has its newest 20, here all of them.
func TestEventShowsTheNewestTenAttemptsOfEachDelivery(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	h.registerReceiver(t, key, always(200))
	ev := h.publish(t, key, payout)
	id := ev.Deliveries[0].ID
	h.waitFor(t, key, id, 15*time.Second, settled)
	const resends = 12 // 13 attempts in all
	for i := 0; i < resends; i++ {
		if code := h.call(t, key, "POST", "/v1/deliveries/"+id+"/resend", nil, nil); code != 202 {
			t.Fatalf("resend %d: %d", i, code)
		}
	}
	type attempts struct {
		ID                 string `json:"id"`
		AttemptsNextCursor string `json:"attempts_next_cursor"`
		Attempts           []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"attempts"`
	}
	var all attempts
	deadline := time.Now().Add(30 * time.Second)
	for len(all.Attempts) < 1+resends {
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts of %d after 30 s", len(all.Attempts), 1+resends)
		}
		time.Sleep(100 * time.Millisecond)
		if code := h.call(t, key, "GET", "/v1/deliveries/"+id, nil, &all); code != 200 {
			t.Fatalf("GET delivery: %d", code)
		}
	}
	var got struct {
		Deliveries []attempts `json:"deliveries"`
	}
	if code := h.call(t, key, "GET", "/v1/events/"+ev.ID, nil, &got); code != 200 || len(got.Deliveries) != 1 {
		t.Fatalf("GET event: %d %+v", code, got)
	}
	shown := got.Deliveries[0]
	if all.AttemptsNextCursor != "" || len(all.Attempts) != 1+resends {
		t.Fatalf("GET /v1/deliveries/{id} must have every attempt (at most 20): %d, cursor %q", len(all.Attempts), all.AttemptsNextCursor)
	}
	slices.Reverse(all.Attempts) // the delivery shows them newest first, the event oldest first
	if len(shown.Attempts) != 10 || shown.AttemptsNextCursor == "" {
		t.Fatalf("the event shows %d attempts, cursor %q; want 10 and a cursor to the %d older", len(shown.Attempts), shown.AttemptsNextCursor, 1+resends-10)
	}
	newest := all.Attempts[len(all.Attempts)-10:]
	for i, a := range shown.Attempts {
		if a.ID != newest[i].ID {
			t.Fatalf("attempt %d shown is %s, want the newest ten in order: %s", i, a.ID, newest[i].ID)
		}
	}
}
