package delivery

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/inflight"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/store"
)

// claimAuto takes the delivery's next attempt (store.ClaimAttempt) on an
// endpoint slot seen free, or one handed over by a claim of this process
// (shared/inflight) when every slot is held. The endpoint is read again as the
// claim is made (and again after a wait for a handoff), the read and the
// write at the same time so that it costs no round trip of its own: if the
// endpoint changed, the claim is given back (lifecycle: DoYield) and no
// request follows.
func (r *run) claimAuto(ctx context.Context) error {
	k, d, ep := &r.k, *r.k.Delivery, r.k.Endpoint
	c := store.Claim{ID: domain.NewID("clm"), AttemptID: domain.NewID("att"), URL: ep.URL}
	// The previous attempt's worker died after claiming it: log it, under
	// the id it would have sent (the receiver may have seen it).
	c.Interrupted = lifecycle.Interrupted(d, domain.NewID("att"))
	waitUntil := r.Now().Add(inflight.Wait)
	var check chan bool
	for tried := map[string]bool{}; ; {
		c.From = ""
		if r.MaxInFlight > 0 {
			var free bool
			// A slot seen free that no claim here holds or is taking.
			c.Slot, free = r.local.TakeFree(r.key(), lifecycle.FreeSlots(*ep, r.MaxInFlight, r.Now(), rand.IntN(r.MaxInFlight), tried))
			if !free {
				got, ok := r.local.Await(ctx, r.key(), 2*r.MaxInFlight, waitUntil)
				if !ok {
					k.Claim = lifecycle.ClaimFull
					return nil
				}
				c.Slot, c.From, check = got.Slot, got.From, nil
				r.local.Hold(r.key(), c.Slot)
			}
		}
		if check == nil {
			check = r.endpointCheck(ctx)
		}
		c.LeaseUntil = domain.Millis(r.Now().Add(r.LeaseFor))
		claimed, err := r.Store.ClaimAttempt(ctx, d, c)
		if err != nil && c.Slot != "" {
			r.local.Release(r.key(), c.Slot)
		}
		if changed := <-check; changed {
			r.unclaim(ctx, c, claimed, err)
			return nil
		}
		check = closed
		switch {
		case errors.Is(err, store.ErrSlotTaken):
			tried[c.Slot] = true // another worker took it a moment ago: try the others seen free
			continue
		case errors.Is(err, store.ErrConflict):
			k.Claim = lifecycle.ClaimConflict
			return nil
		case err != nil:
			return err
		}
		r.taken(c, claimed)
		r.held = c.Slot
		return nil
	}
}

// closed is a check already made: it reads "unchanged".
var closed = func() chan bool { c := make(chan bool); close(c); return c }()

// unclaim undoes a claim whose endpoint changed while it was made (err: the
// claim's own outcome): a claim taken is to be given back, its slot first
// to a message here waiting for one; a slot handed over and not taken is
// passed on.
func (r *run) unclaim(ctx context.Context, c store.Claim, claimed domain.Delivery, err error) {
	switch {
	case err == nil:
		if c.Slot != "" {
			r.local.Release(r.key(), c.Slot)
			if r.local.HandOff(r.key(), c.Slot, c.ID) {
				c.Slot = "" // a waiter here takes it over from this claim: not ours to free
			}
		}
		r.taken(c, claimed)
		r.k.ClaimHeld = true
	case errors.Is(err, store.ErrSlotTaken) && c.From != "":
		if !r.local.HandOff(r.key(), c.Slot, c.From) {
			r.Store.FreeSlot(ctx, r.msg.EndpointID, c.Slot, c.From)
		}
	}
	r.k.Claim = lifecycle.ClaimChanged
}

// claimManual takes a resend's attempt (store.ClaimManual) on a free slot,
// after reading the endpoint again (a PATCH answered since the load).
func (r *run) claimManual(ctx context.Context) error {
	k, d, ep := &r.k, *r.k.Delivery, r.k.Endpoint
	if <-r.endpointCheck(ctx) {
		k.Claim = lifecycle.ClaimChanged
		return nil
	}
	c := store.Claim{ID: domain.NewID("clm"), LeaseUntil: domain.Millis(r.Now().Add(r.LeaseFor)), URL: ep.URL, AttemptID: r.msg.AttemptID}
	if r.MaxInFlight > 0 {
		if free := lifecycle.FreeSlots(*ep, r.MaxInFlight, r.Now(), 0, nil); len(free) > 0 {
			c.Slot = free[0]
		}
	}
	a := domain.Attempt{ID: r.msg.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptManual, Series: d.Series, StartedAt: domain.Millis(r.Now()), ExpiresAt: d.ExpiresAt}
	switch err := r.Store.ClaimManual(ctx, d, a, c); {
	case errors.Is(err, store.ErrDuplicate):
		k.Claim = lifecycle.ClaimDuplicate
	case errors.Is(err, store.ErrConflict):
		k.Claim = lifecycle.ClaimConflict // the endpoint slot was taken meanwhile
	case err != nil:
		return err
	default:
		r.taken(c, d)
	}
	return nil
}

func (r *run) taken(c store.Claim, claimed domain.Delivery) {
	r.claim = c
	r.k.Claim, r.k.Claimed, r.k.ClaimID, r.k.AttemptID = lifecycle.ClaimTaken, claimed, c.ID, c.AttemptID
	r.k.LeaseUntil = millis(c.LeaseUntil)
}

// endpointCheck reads the endpoint again while the claim is written; the
// channel says whether it was disabled, deleted or given a new URL since it
// was read (a read that fails counts as changed: look again shortly). The
// claim writes only the delivery and the slot, so this strongly consistent
// read is what sees a PATCH answered before this point.
func (r *run) endpointCheck(ctx context.Context) chan bool {
	check := make(chan bool, 1)
	seen := r.k.Endpoint
	go func() {
		now, err := r.Store.GetEndpoint(ctx, seen.AccountID, seen.ID)
		changed := err != nil || now.Disabled || now.URL != seen.URL
		if changed {
			r.log.Info("endpoint changed before the claim; looking again", "error", err)
		}
		check <- changed
	}()
	return check
}
