package inflight

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/store"
)

// Claims is what taking an attempt with an endpoint slot needs of the table.
type Claims interface {
	ClaimAttempt(context.Context, domain.Delivery, store.Claim) (domain.Delivery, error)
	ClaimManual(context.Context, domain.Delivery, domain.Attempt, store.Claim) error
	GetEndpoint(ctx context.Context, accountID, id string) (domain.Endpoint, error)
	FreeSlot(ctx context.Context, endpointID, slot, claim string)
}

// Claimer takes a delivery's attempt together with one of its endpoint's
// in-flight slots (Max of them; 0: no cap), the endpoint read again
// alongside: the protocol of the per-endpoint cap. What to do with the
// result is the step's (lifecycle.Step).
type Claimer struct {
	*Local
	Store    Claims
	Max      int
	LeaseFor time.Duration
	Now      func() time.Time
}

// Taken is what a claim came to.
type Taken struct {
	Result  lifecycle.ClaimResult
	Held    bool // with ClaimChanged: the claim was taken and is to be given back
	Claim   store.Claim
	Claimed domain.Delivery
	Slot    string // the slot held here until the attempt ends (Release)
}

// Auto takes the delivery's next attempt (store.ClaimAttempt) on a slot seen
// free, or one handed over by a claim of this process when every slot is
// held. What sees a PATCH answered before this point (disabled, deleted, a
// new URL): with the cap on, the slot's take, made only for the endpoint's
// route as read (store.ErrEndpointChanged, nothing written); with it off,
// the endpoint read again, strongly consistent, alongside the claim (the
// read and the write at the same time, so it costs no round trip of its
// own), a claim made meanwhile given back.
func (c *Claimer) Auto(ctx context.Context, d domain.Delivery, ep *domain.Endpoint) (Taken, error) {
	key := ep.AccountID + "/" + ep.ID
	cl := store.Claim{ID: domain.NewID("clm"), AttemptID: domain.NewID("att"), URL: ep.URL, Route: ep.Route}
	// The previous attempt's worker died after claiming it: log it, under
	// the id it would have sent (the receiver may have seen it).
	cl.Interrupted = lifecycle.Interrupted(d, domain.NewID("att"))
	waitUntil := c.Now().Add(Wait)
	check := closed // with the cap on, the slot's take checks the route
	if c.Max == 0 {
		check = c.endpointCheck(ctx, ep)
	}
	for tried := map[string]bool{}; ; {
		cl.From = ""
		if c.Max > 0 {
			var free bool
			// A slot seen free that no claim here holds or is taking.
			cl.Slot, free = c.TakeFree(key, lifecycle.FreeSlots(*ep, c.Max, c.Now(), rand.IntN(c.Max), tried))
			if !free {
				got, ok := c.Await(ctx, key, 2*c.Max, waitUntil)
				if !ok {
					return Taken{Result: lifecycle.ClaimFull}, nil
				}
				cl.Slot, cl.From = got.Slot, got.From
				c.Hold(key, cl.Slot)
			}
		}
		cl.LeaseUntil = domain.Millis(c.Now().Add(c.LeaseFor))
		claimed, err := c.Store.ClaimAttempt(ctx, d, cl)
		if err != nil && cl.Slot != "" {
			c.Release(key, cl.Slot)
		}
		if changed := <-check; changed {
			return c.unclaim(ctx, key, cl, claimed, err), nil
		}
		switch {
		case errors.Is(err, store.ErrSlotTaken):
			tried[cl.Slot] = true // another worker took it a moment ago: try the others seen free
			continue
		case errors.Is(err, store.ErrEndpointChanged):
			return c.unclaim(ctx, key, cl, claimed, err), nil
		case errors.Is(err, store.ErrConflict):
			return Taken{Result: lifecycle.ClaimConflict}, nil
		case err != nil:
			return Taken{}, err
		}
		return Taken{Result: lifecycle.ClaimTaken, Claim: cl, Claimed: claimed, Slot: cl.Slot}, nil
	}
}

// closed is a check already made, or none to make: it reads "unchanged".
var closed = func() chan bool { c := make(chan bool); close(c); return c }()

// unclaim undoes a claim whose endpoint changed while it was made (err: the
// claim's own outcome): a claim taken is to be given back, its slot first
// to a message here waiting for one; a slot handed over and not taken is
// passed on.
func (c *Claimer) unclaim(ctx context.Context, key string, cl store.Claim, claimed domain.Delivery, err error) Taken {
	t := Taken{Result: lifecycle.ClaimChanged}
	switch {
	case err == nil:
		if cl.Slot != "" {
			c.Release(key, cl.Slot)
			if c.HandOff(key, cl.Slot, cl.ID) {
				cl.Slot = "" // a waiter here takes it over from this claim: not ours to free
			}
		}
		t.Held, t.Claim, t.Claimed = true, cl, claimed
	case (errors.Is(err, store.ErrSlotTaken) || errors.Is(err, store.ErrEndpointChanged)) && cl.From != "":
		if !c.HandOff(key, cl.Slot, cl.From) {
			c.Store.FreeSlot(ctx, claimed.EndpointID, cl.Slot, cl.From)
		}
	}
	return t
}

// Manual takes a resend's attempt (store.ClaimManual, which logs it in
// progress) on a free slot, after reading the endpoint again.
func (c *Claimer) Manual(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, attemptID string) (Taken, error) {
	if <-c.endpointCheck(ctx, ep) {
		return Taken{Result: lifecycle.ClaimChanged}, nil
	}
	cl := store.Claim{ID: domain.NewID("clm"), LeaseUntil: domain.Millis(c.Now().Add(c.LeaseFor)), URL: ep.URL, Route: ep.Route, AttemptID: attemptID}
	if free := lifecycle.FreeSlots(*ep, c.Max, c.Now(), 0, nil); len(free) > 0 {
		cl.Slot = free[0]
	}
	a := domain.Attempt{ID: attemptID, DeliveryID: d.ID, Kind: domain.AttemptManual, Series: d.Series, StartedAt: domain.Millis(c.Now()), ExpiresAt: d.ExpiresAt}
	switch err := c.Store.ClaimManual(ctx, d, a, cl); {
	case errors.Is(err, store.ErrDuplicate):
		return Taken{Result: lifecycle.ClaimDuplicate}, nil
	case errors.Is(err, store.ErrConflict):
		return Taken{Result: lifecycle.ClaimConflict}, nil // the slot was taken meanwhile
	case err != nil:
		return Taken{}, err
	}
	return Taken{Result: lifecycle.ClaimTaken, Claim: cl, Claimed: d}, nil
}

// endpointCheck reads the endpoint again; the channel says whether it was
// disabled, deleted or re-pointed since seen (a read that fails counts as
// changed: the step looks again shortly).
func (c *Claimer) endpointCheck(ctx context.Context, seen *domain.Endpoint) chan bool {
	check := make(chan bool, 1)
	go func() {
		now, err := c.Store.GetEndpoint(ctx, seen.AccountID, seen.ID)
		check <- err != nil || now.Disabled || now.URL != seen.URL || now.Route != seen.Route
	}()
	return check
}
