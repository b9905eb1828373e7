package main

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// traffic is the producers: single events, batches and fan-outs, each
// posted with idempotency keys and retried until accepted (the API is down
// while a killed process restarts).
type traffic struct {
	api    *client
	rng    *rand.Rand // the mix, from the seed
	keys   []string
	kindOf map[string]string // endpoint id -> kind
	pathOf map[string]string // endpoint id -> its path at the receiver

	mu       sync.Mutex
	accepted []acceptedEvent
	refused  int // never accepted within a producer's patience
	retried  atomic.Int64
}

type acceptedEvent struct {
	ID         string `json:"id"`
	Deliveries []struct {
		ID         string `json:"id"`
		EndpointID string `json:"endpoint_id"`
	} `json:"deliveries"`
}

// tracked is one accepted delivery as the checker looks it up.
type tracked struct{ id, eventID, endpointID string }

const (
	batchSize = 5
	patience  = 3 * time.Minute // a producer retries this long
)

// run posts at rate requests a second for d: 60 % single events to one
// kind of endpoint, 20 % batches of 5, 20 % fan-outs to every endpoint of
// the account.
func (t *traffic) run(rate float64, d time.Duration) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end); i++ {
		<-tick.C
		roll, key := t.rng.IntN(10), t.keys[t.rng.IntN(len(t.keys))]
		var bodies []string
		switch {
		case roll < 6:
			bodies = []string{t.body(kinds[t.rng.IntN(len(kinds))], i, 0)}
		case roll < 8:
			for j := range batchSize {
				bodies = append(bodies, t.body(kinds[t.rng.IntN(len(kinds))], i, j))
			}
		default:
			bodies = []string{t.body("fanout", i, 0)}
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			t.post(key, i, bodies)
		}()
	}
	wg.Wait()
}

func (t *traffic) body(kind string, i, j int) string {
	return fmt.Sprintf(`{"event":"soak.%s","n":%d,"j":%d,"data":{"id":"soak-%d-%d"}}`, kind, i, j, i, j)
}

// post sends one event (one body) or a batch until every event is accepted.
func (t *traffic) post(key string, i int, bodies []string) {
	idem := func(j int) string { return fmt.Sprintf("soak-%d-%d", i, j) }
	for start := time.Now(); time.Since(start) < patience; time.Sleep(200 * time.Millisecond) {
		if len(bodies) == 1 {
			var ev acceptedEvent
			if code, _ := t.api.doRaw(key, "/v1/events", bodies[0], idem(0), &ev); code == 202 {
				t.accept(ev)
				return
			}
		} else {
			var ans struct {
				Results []struct {
					Status int           `json:"status"`
					Event  acceptedEvent `json:"event"`
				} `json:"results"`
			}
			items := make([]map[string]any, len(bodies))
			for j, b := range bodies {
				items[j] = map[string]any{"body": rawJSON(b), "idempotency_key": idem(j)}
			}
			code, _ := t.api.do(key, "POST", "/v1/events/batch", map[string]any{"events": items}, &ans)
			all := code == 200 && len(ans.Results) == len(bodies)
			for _, r := range ans.Results {
				all = all && r.Status == 202
			}
			if all {
				for _, r := range ans.Results {
					t.accept(r.Event)
				}
				return
			}
		}
		t.retried.Add(1)
	}
	t.mu.Lock()
	t.refused += len(bodies)
	t.mu.Unlock()
}

func (t *traffic) accept(ev acceptedEvent) {
	t.mu.Lock()
	t.accepted = append(t.accepted, ev)
	t.mu.Unlock()
}

func (t *traffic) deliveries() []tracked {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []tracked
	for _, ev := range t.accepted {
		for _, d := range ev.Deliveries {
			out = append(out, tracked{id: d.ID, eventID: ev.ID, endpointID: d.EndpointID})
		}
	}
	return out
}
