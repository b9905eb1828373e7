package inflight

import (
	"context"
	"errors"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// Writes is what an attempt's claim, give-back and record need of the table.
type Writes interface {
	Claims
	YieldClaim(ctx context.Context, seen, claimed domain.Delivery, c store.Claim) error
	YieldManual(ctx context.Context, d domain.Delivery, c store.Claim) error
	RecordAttempt(context.Context, domain.Delivery, *domain.Endpoint, store.Claim, domain.Attempt, store.Outcome) error
	FinishManual(context.Context, domain.Delivery, *domain.Endpoint, store.Claim, domain.Attempt, store.Outcome) error
}

// Attempt is one message's attempt, bound once to its kind: the next of
// the delivery's automatic series (Resend ""), or a manual resend logged
// under the id the API gave it (Resend). Its three writes (Take, Yield,
// Record) are the same calls for either kind; which table writes they are
// is decided here, once, not at each call. It holds the claim it took and
// the endpoint slot the attempt uses until the answer is in.
type Attempt struct {
	Pools    *Pools
	Store    Writes
	Max      int // the endpoint's in-flight slots (0: no cap)
	LeaseFor time.Duration
	Now      func() time.Time
	Resend   string

	Claim store.Claim // the claim taken, once Take has taken it
	key   string
	slot  string
}

// Key is an endpoint's key among the pools.
func Key(accountID, endpointID string) string { return accountID + "/" + endpointID }

// Take claims the attempt (with a slot of the endpoint's pool here, unless
// uncapped).
func (a *Attempt) Take(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, uncapped bool) (Taken, error) {
	c := Claimer{Pools: a.Pools, Store: a.Store, Max: a.Max, LeaseFor: a.LeaseFor, Now: a.Now}
	if uncapped {
		c.Max = 0
	}
	take := c.Auto
	if a.Resend != "" {
		take = func(ctx context.Context, d domain.Delivery, ep *domain.Endpoint) (Taken, error) {
			return c.Manual(ctx, d, ep, a.Resend)
		}
	}
	t, err := take(ctx, d, ep)
	a.Claim, a.key, a.slot = t.Claim, Key(ep.AccountID, ep.ID), t.Slot
	return t, err
}

// Release gives the attempt's slot back to its pool, as soon as the answer
// is in (or as the message ends, if none was sent), and reports whether a
// message here waiting for one took it.
func (a *Attempt) Release() bool {
	slot := a.slot
	a.slot = ""
	return slot != "" && a.Pools.Put(a.key, slot)
}

// Yield gives the claim back unused (seen: the delivery as loaded; claimed:
// as the claim wrote it). A claim already gone counts as given back
// (store.ErrConflict, returned).
func (a *Attempt) Yield(ctx context.Context, seen, claimed domain.Delivery) error {
	if a.Resend != "" {
		return a.Store.YieldManual(ctx, seen, a.Claim)
	}
	return a.Store.YieldClaim(ctx, seen, claimed, a.Claim)
}

// Record writes the attempt's outcome. For the series' attempt a lost
// record is store.ErrConflict (the step reads the delivery again); a
// resend's record that lost its race left nothing to do and is nil.
func (a *Attempt) Record(ctx context.Context, seen, claimed domain.Delivery, ep *domain.Endpoint, entry domain.Attempt, o store.Outcome) error {
	if a.Resend == "" {
		return a.Store.RecordAttempt(ctx, claimed, ep, a.Claim, entry, o)
	}
	err := a.Store.FinishManual(ctx, seen, ep, a.Claim, entry, o)
	if errors.Is(err, store.ErrConflict) {
		return nil
	}
	return err
}
