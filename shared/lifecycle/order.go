package lifecycle

import (
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// Ordered delivery: a keyed event's delivery to an ordered endpoint
// (domain.Delivery.PrevDelivery, set at ingest) is not attempted until the
// key's previous delivery to that endpoint is final. Held, it goes back to
// the queue without an attempt, its slot given back and its due time
// moved; once released, its attempts follow the same rules as any other.

// OrderGap: a predecessor still absent this long after its successor was
// made was never written (its ingest failed after taking its number): a gap
// in the sequence, not waited for. Longer than the api function's timeout,
// as store.OrphanAfter.
const OrderGap = 2 * time.Minute

// Waits of a held delivery: growing with each hold, at most HoldMax (or
// until the predecessor's next attempt, when that is later).
const HoldMin, HoldMax = time.Second, 30 * time.Second

// Order is what ordering asks of a delivery before its claim.
type Order int

// The answers.
const (
	OrderGo   Order = iota // not held (not ordered, or the predecessor is final or a gap)
	OrderRead              // read the predecessor first (DoPrev)
	OrderHold              // wait for the predecessor
)

// Hold decides whether delivery d may go on now. ordered is the endpoint's
// setting as resolved (endpointcfg); read tells whether the predecessor was
// read, prev what was found (nil: absent).
func Hold(d domain.Delivery, ordered, read bool, prev *domain.Delivery, now time.Time) Order {
	switch {
	case !ordered || d.PrevDelivery == "":
		return OrderGo
	case !read:
		return OrderRead
	case prev == nil && now.Sub(time.UnixMilli(d.CreatedAt)) >= OrderGap:
		return OrderGo
	case prev != nil && prev.Status != domain.StatusPending:
		return OrderGo
	}
	return OrderHold
}

// holdUntil is when a held message comes back: HoldMin doubled per hold
// already made, at most HoldMax, or just after the predecessor's next
// attempt when that is later (at most a queue delay away).
func holdUntil(k Known) time.Time {
	wait := min(HoldMin<<min(k.Msg.Deferred, 5), HoldMax)
	until := k.Now.Add(wait)
	if k.Prev != nil {
		if next := time.UnixMilli(k.Prev.NextAttemptAt).Add(time.Second); next.After(until) {
			until = minTime(next, k.Now.Add(MaxQueueDelay))
		}
	}
	return until
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// PrevFailed: the delivery is released after its predecessor failed for
// good (the receiver is told: X-Gifq-Previous).
func PrevFailed(k Known) bool { return k.Prev != nil && k.Prev.Status == domain.StatusFailed }
