package lifecycle_test

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
)

// The hold of ordered delivery, one row per rule: a keyed delivery to an
// ordered endpoint goes on only once its predecessor is final (or a gap).
func TestOrderedHold(t *testing.T) {
	keyed := func(ordered bool, f func(*lifecycle.Known)) func() lifecycle.Known {
		return func() lifecycle.Known {
			k := booked() // next, without ordering: the claim
			k.Delivery.PrevDelivery = "dlv_prev"
			k.Endpoint.Settings.Ordered = ordered
			if f != nil {
				f(&k)
			}
			return k
		}
	}
	read := func(status domain.Status, f func(*domain.Delivery)) func(*lifecycle.Known) {
		return func(k *lifecycle.Known) {
			k.PrevRead = true
			if status == "" {
				return
			}
			p := domain.Delivery{ID: "dlv_prev", Status: status, NextAttemptAt: domain.Millis(now)}
			if f != nil {
				f(&p)
			}
			k.Prev = &p
		}
	}
	cases := []struct {
		name      string
		known     func() lifecycle.Known
		do        lifecycle.Do
		until     time.Duration // DoPutBack: from now
		prevFaild bool
	}{
		{"an endpoint that did not opt in is not held", keyed(false, nil), lifecycle.DoClaim, 0, false},
		{"an event without a key is not held", func() lifecycle.Known { k := keyed(true, nil)(); k.Delivery.PrevDelivery = ""; return k },
			lifecycle.DoClaim, 0, false},
		{"an ordered keyed delivery reads its predecessor first", keyed(true, nil), lifecycle.DoPrev, 0, false},
		{"a pending predecessor holds it, without an attempt", keyed(true, read(domain.StatusPending, nil)), lifecycle.DoPutBack, time.Second, false},
		{"each hold waits longer, at most 30 s", keyed(true, func(k *lifecycle.Known) { read(domain.StatusPending, nil)(k); k.Msg.Deferred = 9 }),
			lifecycle.DoPutBack, 30 * time.Second, false},
		{"a predecessor waiting for its retry holds it until just after that retry",
			keyed(true, read(domain.StatusPending, func(p *domain.Delivery) { p.NextAttemptAt = domain.Millis(now.Add(5 * time.Minute)) })),
			lifecycle.DoPutBack, 5*time.Minute + time.Second, false},
		{"a predecessor delivered releases it", keyed(true, read(domain.StatusDelivered, nil)), lifecycle.DoClaim, 0, false},
		{"a predecessor failed for good releases it", keyed(true, read(domain.StatusFailed, nil)), lifecycle.DoClaim, 0, false},
		{"a predecessor not written yet holds it", keyed(true, read("", nil)), lifecycle.DoPutBack, time.Second, false},
		{"a predecessor never written is a gap", keyed(true, func(k *lifecycle.Known) {
			read("", nil)(k)
			k.Delivery.CreatedAt = domain.Millis(now.Add(-lifecycle.OrderGap))
		}), lifecycle.DoClaim, 0, false},
		{"released after a failure, the attempt says so", func() lifecycle.Known {
			k := claimed()
			k.Delivery.PrevDelivery, k.Endpoint.Settings.Ordered = "dlv_prev", true
			read(domain.StatusFailed, nil)(&k)
			return k
		}, lifecycle.DoSend, 0, true},
		{"released after a success, the attempt has nothing to say", func() lifecycle.Known {
			k := claimed()
			k.Delivery.PrevDelivery, k.Endpoint.Settings.Ordered = "dlv_prev", true
			read(domain.StatusDelivered, nil)(&k)
			return k
		}, lifecycle.DoSend, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := lifecycle.Step(c.known(), policy)
			if e.Do != c.do || e.PrevFailed != c.prevFaild {
				t.Fatalf("got %v (prev failed %v), want %v (%v): %+v", e.Do, e.PrevFailed, c.do, c.prevFaild, e)
			}
			if e.Do == lifecycle.DoPutBack {
				if got := e.Until.Sub(now); got != c.until {
					t.Fatalf("back in %v, want %v", got, c.until)
				}
				if !e.Unslot || e.Park || e.Metric != obs.MetricOrderedHolds {
					t.Fatalf("a hold goes back without its slot, in the queue: %+v", e)
				}
			}
		})
	}
}

// A hold longer than the sweeper's half grace moves the due time, so the
// sweeper does not take the held delivery for lost.
func TestOrderedHoldMovesDue(t *testing.T) {
	k := booked()
	k.Delivery.PrevDelivery, k.Endpoint.Settings.Ordered, k.PrevRead = "dlv_prev", true, true
	k.Prev = &domain.Delivery{Status: domain.StatusPending, NextAttemptAt: domain.Millis(now.Add(10 * time.Minute))}
	e := lifecycle.Step(k, policy)
	if e.Do != lifecycle.DoPutBack || !e.MoveDue.Equal(e.Until) || e.Until.Sub(now) != 10*time.Minute+time.Second {
		t.Fatalf("%+v", e)
	}
}
