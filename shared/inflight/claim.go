package inflight

import (
	"context"
	"errors"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/store"
)

// Claims is what taking an attempt with an endpoint slot needs of the table.
type Claims interface {
	SlotStore
	ClaimAttempt(context.Context, domain.Delivery, store.Claim) (domain.Delivery, error)
	ClaimManual(context.Context, domain.Attempt, store.Claim) error
	GetEndpoint(ctx context.Context, accountID, id string) (domain.Endpoint, error)
}

// Claimer takes a delivery's attempt together with one of its endpoint's
// in-flight slots (Max of them; 0: no cap), the endpoint's route checked
// alongside: the protocol of the per-endpoint cap. What to do with the
// result is the step's (lifecycle.Step).
type Claimer struct {
	Pools    *Pools
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
	Slot    string // the pool's slot the attempt uses, to Put back once answered
}

// Auto takes the delivery's next attempt (store.ClaimAttempt) with a slot of
// its endpoint's pool here (take).
func (c *Claimer) Auto(ctx context.Context, d domain.Delivery, ep *domain.Endpoint) (Taken, error) {
	cl := store.Claim{ID: domain.NewID("clm"), AttemptID: domain.NewID("att")}
	// The previous attempt's worker died after claiming it: log it, under
	// the id it would have sent (the receiver may have seen it).
	cl.Interrupted = lifecycle.Interrupted(d, domain.NewID("att"))
	return c.take(ctx, ep, cl, func(cl store.Claim) (domain.Delivery, error) { return c.Store.ClaimAttempt(ctx, d, cl) })
}

// Manual takes a resend's attempt (store.ClaimManual, which logs it in
// progress under the id the API gave it) with a slot of its endpoint's pool
// here, as Auto does: the resends of a batch share the pool's slots rather
// than race for the one the endpoint's read showed free.
func (c *Claimer) Manual(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, attemptID string) (Taken, error) {
	cl := store.Claim{ID: domain.NewID("clm"), AttemptID: attemptID}
	return c.take(ctx, ep, cl, func(cl store.Claim) (domain.Delivery, error) {
		a := domain.Attempt{ID: attemptID, DeliveryID: d.ID, Kind: domain.AttemptManual, Series: d.Series, StartedAt: domain.Millis(c.Now()), ExpiresAt: d.ExpiresAt}
		return d, c.Store.ClaimManual(ctx, a, cl)
	})
}

// take makes a claim (claim, leased from now) with a slot of the endpoint's
// pool here. What sees a PATCH answered before this point (disabled,
// deleted, a new URL, a rotated secret): with the cap on, the pool's take of
// the slot, made only for the endpoint's route as read
// (store.ErrEndpointChanged, nothing written), or, for a slot the pool
// already held, the route read again strongly alongside the claim; with the
// cap off, the endpoint read again alongside the claim. The read and the
// claim go at the same time (no round trip of their own); a claim made
// meanwhile is given back.
func (c *Claimer) take(ctx context.Context, ep *domain.Endpoint, cl store.Claim, claim func(store.Claim) (domain.Delivery, error)) (Taken, error) {
	key := Key(ep.AccountID, ep.ID)
	check := closed
	var slot string
	if c.Max == 0 {
		check = c.endpointCheck(ctx, ep)
	} else {
		var checked bool
		var err error
		slot, checked, err = c.Pools.acquire(ctx, c.Store, key, ep, c.Max, c.LeaseFor, c.Now, c.Now().Add(Wait))
		switch {
		case errors.Is(err, store.ErrEndpointChanged):
			return Taken{Result: lifecycle.ClaimChanged}, nil
		case err != nil:
			return Taken{}, err
		case slot == "":
			return Taken{Result: lifecycle.ClaimFull}, nil
		case !checked:
			check = c.routeCheck(ctx, ep)
		}
	}
	cl.LeaseUntil = domain.Millis(c.Now().Add(c.LeaseFor))
	claimed, err := claim(cl)
	changed := <-check
	if changed || err != nil {
		if slot != "" {
			c.Pools.Put(key, slot) // no POST follows
		}
	}
	switch {
	case changed && err == nil:
		return Taken{Result: lifecycle.ClaimChanged, Held: true, Claim: cl, Claimed: claimed}, nil
	case changed:
		return Taken{Result: lifecycle.ClaimChanged}, nil
	case errors.Is(err, store.ErrDuplicate):
		return Taken{Result: lifecycle.ClaimDuplicate}, nil // this resend was already made
	case errors.Is(err, store.ErrConflict):
		return Taken{Result: lifecycle.ClaimConflict}, nil
	case err != nil:
		return Taken{}, err
	}
	return Taken{Result: lifecycle.ClaimTaken, Claim: cl, Claimed: claimed, Slot: slot}, nil
}

// closed is a check already made, or none to make: it reads "unchanged".
var closed = func() chan bool { c := make(chan bool); close(c); return c }()

// routeCheck reads the endpoint's route on its slot item again, strongly;
// the channel says whether it moved since seen (a read that fails counts as
// moved: the step looks again shortly).
func (c *Claimer) routeCheck(ctx context.Context, seen *domain.Endpoint) chan bool {
	check := make(chan bool, 1)
	go func() {
		route, err := c.Store.SlotRoute(ctx, seen.ID)
		check <- err != nil || (route != "" && route != seen.Route)
	}()
	return check
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
