// Package inflight hands an endpoint's in-flight slot over between the
// claims of one process.
package inflight

import (
	"context"
	"sync"
	"time"
)

// Handing an endpoint's in-flight slot over, in one process.
//
// With the per-endpoint cap, a message that finds every slot held used to go
// back to the queue for at least a second (lifecycle.CapBackoffMin and on), and the slots it
// could have used sat idle: a burst to one endpoint with the cap of 5 drained
// at a third of what 5 slots allow, and its messages went round the queue
// several times each. Now, when a claim of the same endpoint is held in this
// process (a Lambda batch holds up to 10 messages, make dev all of them), the
// message waits a little (Wait) for it: the holder, once its POST has
// answered, hands its slot to the oldest waiter instead of freeing it, and the
// waiter's claim takes the slot over from the holder's claim (store.Claim's
// From) in the one conditional write that takes a slot anyway. The cap still
// counts POSTs in flight (a slot changes hands only after its POST answered),
// DynamoDB still decides who holds it, and a process that dies loses only its
// own leases, which run out as before.

// Wait is how long a message waits in the worker for a slot handed over
// by a claim of the same endpoint in this process, before going back to the
// queue (lifecycle.CapBackoffMin and on). Several attempts to a healthy endpoint end in that
// time; an endpoint slow enough to hold its slots longer is what the
// back-off is for, and waiting longer would hold invocations idle.
const Wait = 250 * time.Millisecond

// Handed is a slot given to a waiter: its key and the claim that held it.
type Handed struct{ Slot, From string }

type slotWaiter struct{ got chan Handed }

// handoffs are the endpoints' local claims and waiters, keyed by endpoint.
type Local struct {
	mu      sync.Mutex
	holders map[string]map[string]int // endpoint -> slot -> claims holding it here (two while it is handed over)
	waiters map[string][]*slotWaiter  // oldest first
}

// Hold counts a claim of the endpoint holding slot here, from the moment it
// is taken (so that a message losing the race to it waits for it, and
// another message here picks another slot), until Release.
func (h *Local) Hold(endpoint, slot string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdLocked(endpoint, slot)
}

func (h *Local) holdLocked(endpoint, slot string) {
	if h.holders == nil {
		h.holders = map[string]map[string]int{}
	}
	if h.holders[endpoint] == nil {
		h.holders[endpoint] = map[string]int{}
	}
	h.holders[endpoint][slot]++
}

// release ends one hold of the endpoint's slot.
func (h *Local) Release(endpoint, slot string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	slots := h.holders[endpoint]
	if slots[slot]--; slots[slot] <= 0 {
		delete(slots, slot)
	}
	if len(slots) == 0 {
		delete(h.holders, endpoint)
	}
}

// takeFree holds the first of slots (seen free) that no claim here holds or
// is taking, for a claim about to take it: a snapshot may still show a slot
// free that a claim here has just taken, and a claim for it would only lose
// the race. false when every one is held here.
func (h *Local) TakeFree(endpoint string, slots []string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, slot := range slots {
		if h.holders[endpoint][slot] == 0 {
			h.holdLocked(endpoint, slot)
			return slot, true
		}
	}
	return "", false
}

// handOff gives slot, held by claim from, to the endpoint's oldest waiter;
// false when none waits (the caller frees the slot).
func (h *Local) HandOff(endpoint, slot, from string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.waiters[endpoint]
	if len(q) == 0 {
		return false
	}
	w := q[0]
	if len(q) == 1 {
		delete(h.waiters, endpoint)
	} else {
		h.waiters[endpoint] = q[1:]
	}
	w.got <- Handed{Slot: slot, From: from} // buffered: never blocks
	return true
}

// await waits until until for a slot of the endpoint Handed over here. It
// waits only when a claim of the endpoint is held here (no handoff can come
// otherwise) and fewer than max others wait already (each holds a message,
// and a Lambda invocation, idle); ok is false when it did not get one.
func (h *Local) Await(ctx context.Context, endpoint string, max int, until time.Time) (Handed, bool) {
	h.mu.Lock()
	if len(h.holders[endpoint]) == 0 || len(h.waiters[endpoint]) >= max {
		h.mu.Unlock()
		return Handed{}, false
	}
	if h.waiters == nil {
		h.waiters = map[string][]*slotWaiter{}
	}
	w := &slotWaiter{got: make(chan Handed, 1)}
	h.waiters[endpoint] = append(h.waiters[endpoint], w)
	h.mu.Unlock()

	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	select {
	case got := <-w.got:
		return got, true
	case <-ctx.Done():
	case <-timer.C:
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.waiters[endpoint]
	for i, o := range q {
		if o == w {
			h.waiters[endpoint] = append(q[:i:i], q[i+1:]...)
			if len(h.waiters[endpoint]) == 0 {
				delete(h.waiters, endpoint)
			}
			return Handed{}, false
		}
	}
	return <-w.got, true // Handed over as the wait ended: it is ours to use or pass on
}

// holds reports whether a claim of the endpoint holds a slot here.
func (h *Local) Holds(endpoint string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.holders[endpoint]) > 0
}
