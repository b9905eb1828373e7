package e2e

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Ordered delivery per key, black-box: e1, e2, e3 on one key to an ordered
// endpoint whose receiver fails e1 twice reach it e1, e2, e3, and nothing of
// e2 or e3 is sent before e1's 2xx; e4 on another key is not held.
func TestOrderedDeliveryPerKey(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	var mu sync.Mutex
	tries := map[int]int{}
	var ok []int // the events answered 2xx, in order
	var rv *receiver
	rv = h.receiver(t, func(i int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		n := eventN(rv.requests()[i-1].body)
		mu.Lock()
		defer mu.Unlock()
		tries[n]++
		if n == 1 && tries[n] <= 2 {
			return 500, ""
		}
		ok = append(ok, n)
		return 200, ""
	})
	ep := h.createEndpoint(t, key, map[string]any{"url": rv.URL, "settings": map[string]any{"ordered": true}})
	rv.setSecret(ep.Secret)

	post := func(n int, okey string) {
		b, _ := json.Marshal(map[string]any{"event": "ledger.entry", "n": n})
		h.publish(t, key, string(b), "Ordering-Key", okey)
	}
	post(1, "account-1")
	post(2, "account-1")
	post(3, "account-1")
	post(4, "account-2")

	deadline := time.Now().Add(60 * time.Second * time.Duration(h.slower))
	for {
		mu.Lock()
		n := len(ok)
		mu.Unlock()
		if n >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s the receiver answered 2xx to %v (tries %v)", ok, tries)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	var keyed []int
	for _, n := range ok {
		if n != 4 {
			keyed = append(keyed, n)
		}
	}
	if len(keyed) != 3 || keyed[0] != 1 || keyed[1] != 2 || keyed[2] != 3 {
		t.Fatalf("the key's 2xx came as %v, want [1 2 3] (all: %v)", keyed, ok)
	}
	if ok[0] != 4 {
		t.Fatalf("e4 on another key was held behind e1: 2xx order %v", ok)
	}
	if tries[1] != 3 || tries[2] != 1 || tries[3] != 1 {
		t.Fatalf("tries %v: e2 and e3 are sent once each, after e1's 2xx", tries)
	}
	// Every attempt carries its key and number; e2 and e3 went after e1's 2xx.
	e1 := 0 // e1's requests seen so far
	for _, r := range rv.requests() {
		var b struct{ N int }
		_ = json.Unmarshal(r.body, &b)
		seq, k := r.header.Get("X-Gifq-Sequence"), r.header.Get("X-Gifq-Ordering-Key")
		want := map[int][2]string{1: {"account-1", "1"}, 2: {"account-1", "2"}, 3: {"account-1", "3"}, 4: {"account-2", "1"}}[b.N]
		if k != want[0] || seq != want[1] {
			t.Errorf("event %d carries key %q sequence %q, want %v", b.N, k, seq, want)
		}
		if r.verified != nil {
			t.Errorf("event %d: signature: %v", b.N, r.verified)
		}
		switch {
		case b.N == 1:
			e1++
		case (b.N == 2 || b.N == 3) && e1 < 3:
			t.Errorf("event %d was sent before e1's 2xx", b.N)
		}
	}
}

// eventN is a test event's "n".
func eventN(body []byte) int {
	var b struct{ N int }
	_ = json.Unmarshal(body, &b)
	return b.N
}

// A key's head that fails for good releases the next event, which says so
// (X-Gifq-Previous: failed); the head is dead-lettered as any other.
func TestOrderedHeadFailedForGoodReleasesTheNext(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	var rv *receiver
	rv = h.receiver(t, func(i int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if eventN(rv.requests()[i-1].body) == 1 {
			return 500, ""
		}
		return 200, ""
	})
	ep := h.createEndpoint(t, key, map[string]any{"url": rv.URL, "settings": map[string]any{"ordered": true}})
	rv.setSecret(ep.Secret)
	e1 := h.publish(t, key, `{"event":"ledger.entry","n":1}`, "Ordering-Key", "k")
	e2 := h.publish(t, key, `{"event":"ledger.entry","n":2}`, "Ordering-Key", "k")
	d1 := h.waitFor(t, key, e1.Deliveries[0].ID, 60*time.Second, settled)
	d2 := h.waitFor(t, key, e2.Deliveries[0].ID, 60*time.Second, settled)
	if d1.Status != "failed" || d1.AttemptCount != h.attempts || d2.Status != "delivered" {
		t.Fatalf("e1 %s after %d attempts, e2 %s", d1.Status, d1.AttemptCount, d2.Status)
	}
	e1s := 0
	for _, r := range rv.requests() {
		switch eventN(r.body) {
		case 1:
			e1s++
			if p := r.header.Get("X-Gifq-Previous"); p != "" {
				t.Errorf("the head carries X-Gifq-Previous %q", p)
			}
		case 2:
			if e1s != h.attempts || r.header.Get("X-Gifq-Previous") != "failed" || r.header.Get("X-Gifq-Sequence") != "2" {
				t.Errorf("e2 sent after %d of e1's %d attempts, X-Gifq-Previous %q, sequence %q", e1s, h.attempts,
					r.header.Get("X-Gifq-Previous"), r.header.Get("X-Gifq-Sequence"))
			}
		}
	}
}
