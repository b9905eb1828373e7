// Package inflight holds an endpoint's in-flight slots (the per-endpoint
// cap) for the messages of a process: taken in a group, shared between its
// claims, freed together.
package inflight

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

// An endpoint's slots, per process. The messages of a receive batch (or of
// make dev's process) to one endpoint join its pool; a claim that needs a
// slot uses one the pool holds idle, or the pool takes more (for every
// message then waiting, in one conditional write, store.TakeSlots), or it
// waits for one in use to be answered. A slot goes back to the pool once its
// POST has answered, so the cap still counts POSTs in flight, and DynamoDB
// still decides which process holds a slot. When the endpoint's last message
// here ends, the pool frees its slots in one write (store.FreeSlots).
//
// A pool's slots are leased to the end of the invocation plus the claim's
// lease, so every claim made in the invocation is covered; a process that
// dies holds them that much longer. A take is conditioned on the endpoint's
// route as read, so it sees a PATCH answered before it; a claim that uses a
// slot no write of its own took reads the route again, strongly, alongside
// its claim (one read unit, a fifth of a write's price).

// Wait is how long a message waits in the worker for a slot of its
// endpoint's pool in use here, before going back to the queue
// (lifecycle.CapBackoffMin and on). Several attempts to a healthy endpoint end in that
// time; an endpoint slow enough to hold its slots longer is what the
// back-off is for, and waiting longer would hold invocations idle.
const Wait = 250 * time.Millisecond

// SlotStore is what the pools need of the table.
type SlotStore interface {
	TakeSlots(ctx context.Context, endpointID string, t store.SlotTake) ([]string, error)
	FreeSlots(ctx context.Context, endpointID, group string, slots []string)
	SlotRoute(ctx context.Context, endpointID string) (string, error)
}

// Pools are a process's endpoint pools, keyed by account/endpoint.
type Pools struct {
	mu sync.Mutex
	by map[string]*pool
}

type pool struct {
	store             SlotStore
	endpointID, group string
	users             int              // messages of the endpoint here (Join to Leave)
	held              map[string]int64 // slot -> lease until (unix ms)
	idle              []string
	taking            bool
	waiters           []chan grant // oldest first
}

// grant is what a waiter is given: a slot (checked: by a take made for it),
// an error, or nothing (look again).
type grant struct {
	slot    string
	checked bool
	err     error
}

// Join counts a message of the endpoint here until its Leave.
func (ps *Pools) Join(key, endpointID string) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.get(key, endpointID).users++
}

// Leave ends a Join; the endpoint's last message here frees the pool's
// slots, in one write.
func (ps *Pools) Leave(ctx context.Context, s SlotStore, key string) {
	ps.mu.Lock()
	p := ps.by[key]
	if p == nil {
		ps.mu.Unlock()
		return
	}
	if p.users--; p.users > 0 {
		ps.mu.Unlock()
		return
	}
	delete(ps.by, key)
	ps.mu.Unlock()
	slots := make([]string, 0, len(p.held))
	for slot := range p.held {
		slots = append(slots, slot)
	}
	s.FreeSlots(context.WithoutCancel(ctx), p.endpointID, p.group, slots)
}

// Holds reports whether the endpoint's pool here holds or is taking a slot
// (a message finding every slot held waits for one of them).
func (ps *Pools) Holds(key string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.by[key]
	return p != nil && (len(p.held) > 0 || p.taking)
}

// Put gives a slot back to the pool once its POST answered (or its claim
// was not used): to the oldest waiter, or idle. It reports whether a waiter
// got it.
func (ps *Pools) Put(key, slot string) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.by[key]
	if p == nil || p.held[slot] == 0 {
		return false
	}
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		w <- grant{slot: slot} // buffered: never blocks
		return true
	}
	p.idle = append(p.idle, slot)
	return false
}

func (ps *Pools) get(key, endpointID string) *pool {
	if ps.by == nil {
		ps.by = map[string]*pool{}
	}
	p := ps.by[key]
	if p == nil {
		p = &pool{endpointID: endpointID, group: domain.NewID("clm"), held: map[string]int64{}}
		ps.by[key] = p
	}
	return p
}

// acquire gets one of the endpoint's slots (max of them) for a claim
// leased until now+leaseFor: "" when none comes by until. checked: a take
// made for this claim checked the endpoint's route; otherwise the caller
// checks it. store.ErrEndpointChanged when the take found the route moved.
func (ps *Pools) acquire(ctx context.Context, s SlotStore, key string, ep *domain.Endpoint, max int, leaseFor time.Duration, now func() time.Time, until time.Time) (string, bool, error) {
	ps.mu.Lock()
	p := ps.get(key, ep.ID)
	p.store = s
	tried := map[string]bool{} // refused by the table: held elsewhere, though the endpoint's read showed them free
	for {
		need := domain.Millis(now().Add(leaseFor))
		for len(p.idle) > 0 {
			slot := p.idle[len(p.idle)-1]
			p.idle = p.idle[:len(p.idle)-1]
			if p.held[slot] >= need {
				ps.mu.Unlock()
				return slot, false, nil
			}
			// Its lease ends too soon (a pool living past an invocation:
			// make dev): the group takes it again, for longer.
			if renewed, err := ps.renew(ctx, s, p, ep, slot, leaseFor, now); renewed || err != nil {
				return slot, renewed, err
			}
		}
		for !p.taking {
			slot, asked, err := ps.take(ctx, s, p, ep, max, leaseFor, now, tried)
			if slot != "" || err != nil {
				return slot, slot != "", err
			}
			if !asked {
				break
			}
		}
		if !(p.taking || len(p.held) > 0) || (len(p.waiters) >= 2*max && !p.taking) || !now().Before(until) {
			ps.mu.Unlock()
			return "", false, nil
		}
		w := make(chan grant, 1)
		p.waiters = append(p.waiters, w)
		ps.mu.Unlock()
		g, ok := wait(ctx, w, until)
		ps.mu.Lock()
		if !ok && !p.dropWaiter(w) {
			// Given as the wait ended (or a take made for it is under way,
			// and will lock mu to give it): ours, waited for without mu.
			ps.mu.Unlock()
			g, ok = <-w, true
			ps.mu.Lock()
		}
		switch {
		case !ok:
			ps.mu.Unlock()
			return "", false, nil
		case g.err != nil:
			ps.mu.Unlock()
			return "", false, g.err
		case g.slot != "" && (g.checked || p.held[g.slot] >= domain.Millis(now().Add(leaseFor))):
			ps.mu.Unlock()
			return g.slot, g.checked, nil
		case g.slot != "":
			p.idle = append(p.idle, g.slot) // renewed above
		}
	}
}

// take takes, in one write, a slot for this claim and one for each waiter,
// of those seen free that the pool does not hold and has not been refused
// (mu held on entry, and on return unless a slot or an error is returned);
// asked: a take was made (none when no slot is left to try).
// Its results go to the waiters it was made for; one still waiting after
// it is woken to take for those that came meanwhile.
func (ps *Pools) take(ctx context.Context, s SlotStore, p *pool, ep *domain.Endpoint, max int, leaseFor time.Duration, now func() time.Time, tried map[string]bool) (mine string, asked bool, err error) {
	skip := map[string]bool{}
	for slot := range p.held {
		skip[slot] = true
	}
	for slot := range tried {
		skip[slot] = true
	}
	// The group's own leases as read are free to it (a slot it gave back
	// and takes again).
	seen := *ep
	seen.Leases = map[string]domain.Lease{}
	for slot, l := range ep.Leases {
		if l.Claim != p.group {
			seen.Leases[slot] = l
		}
	}
	want := lifecycle.FreeSlots(seen, max, now(), rand.IntN(max), skip)
	if len(want) == 0 {
		return "", false, nil
	}
	want = want[:min(len(want), 1+len(p.waiters))]
	covered := p.waiters
	p.waiters, p.taking = nil, true
	ps.mu.Unlock()
	lease := leaseUntil(ctx, now, leaseFor)
	got, err := s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: p.group, Slots: want, LeaseUntil: lease, Route: ep.Route})
	ps.mu.Lock()
	p.taking = false
	for _, slot := range want {
		tried[slot] = true
	}
	for _, slot := range got {
		p.held[slot] = lease
	}
	if errors.Is(err, store.ErrSlotTaken) {
		err = nil
	}
	if len(got) > 0 && err == nil {
		mine, got = got[0], got[1:]
	}
	for _, w := range covered {
		g := grant{err: err}
		if len(got) > 0 && err == nil {
			g = grant{slot: got[0], checked: true}
			got = got[1:]
		}
		w <- g
	}
	p.idle = append(p.idle, got...)
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters = p.waiters[1:]
		w <- grant{} // came during the take: take for them
	}
	if mine != "" || err != nil {
		ps.mu.Unlock()
	}
	return mine, true, err
}

// leaseUntil is a pool's lease on the slots it takes: past the invocation's
// end, so that a claim made at its very end is covered as long as its own
// lease.
func leaseUntil(ctx context.Context, now func() time.Time, leaseFor time.Duration) int64 {
	end := now().Add(schema.FunctionTimeout)
	if d, ok := ctx.Deadline(); ok {
		end = d
	}
	return domain.Millis(end.Add(leaseFor))
}

// renew takes slot, held by the pool with a lease too short, again for the
// group (mu held on entry; on return only when neither renewed nor an
// error): false when another claim holds it now (its lease ran out), and
// the pool lets it go.
func (ps *Pools) renew(ctx context.Context, s SlotStore, p *pool, ep *domain.Endpoint, slot string, leaseFor time.Duration, now func() time.Time) (bool, error) {
	lease := leaseUntil(ctx, now, leaseFor)
	ps.mu.Unlock()
	_, err := s.TakeSlots(ctx, ep.ID, store.SlotTake{Group: p.group, Slots: []string{slot}, LeaseUntil: lease, Route: ep.Route})
	ps.mu.Lock()
	switch {
	case err == nil:
		p.held[slot] = lease
		ps.mu.Unlock()
		return true, nil
	case errors.Is(err, store.ErrSlotTaken):
		delete(p.held, slot)
		return false, nil
	}
	p.idle = append(p.idle, slot) // still the group's: freed with the pool
	ps.mu.Unlock()
	return false, err
}

func (p *pool) dropWaiter(w chan grant) bool {
	for i, o := range p.waiters {
		if o == w {
			p.waiters = append(p.waiters[:i:i], p.waiters[i+1:]...)
			return true
		}
	}
	return false
}

func wait(ctx context.Context, w chan grant, until time.Time) (grant, bool) {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	select {
	case g := <-w:
		return g, true
	case <-ctx.Done():
	case <-timer.C:
	}
	return grant{}, false
}
