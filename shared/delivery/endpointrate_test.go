package delivery

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// keyedLimiter books every key at once, but the first farFor reservations
// of the key far are farAway out; it keeps what was booked and refunded.
type keyedLimiter struct {
	mu       sync.Mutex
	far      string
	farFor   int
	reserved map[string][]float64 // key -> the rate of each reservation
	refunded map[string]int
	now      func() time.Time // the worker's clock
}

func (l *keyedLimiter) Reserve(_ context.Context, key string, n int, perSecond float64) (ratelimit.Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reserved[key] = append(l.reserved[key], perSecond)
	var ahead time.Duration
	if key == l.far && l.farFor > 0 {
		l.farFor--
		ahead = 10 * time.Second
	}
	first := firstSlot(l.now(), ahead)
	return ratelimit.Reservation{First: first, Interval: time.Millisecond}, nil
}

func (l *keyedLimiter) Refund(_ context.Context, key string, r ratelimit.Reservation) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Interval > 0 {
		l.refunded[key]++
	}
	return nil
}

func rateRig(t *testing.T, rate float64) (*rig, *keyedLimiter, string) {
	r := newRig(t, 200)
	key := r.d.AccountID + "/" + r.d.EndpointID
	ep := r.st.endpoints[key]
	ep.Settings = domain.EndpointSettings{RatePerSecond: rate}
	r.st.endpoints[key] = ep
	lim := &keyedLimiter{reserved: map[string][]float64{}, refunded: map[string]int{}, now: r.w.Now}
	r.w.Limiter = lim
	return r, lim, key
}

// An endpoint with a rate of its own books a slot of its own limiter, at its
// rate, besides the account's; one without books the account's only.
func TestEndpointRateBooksItsOwnSlot(t *testing.T) {
	r, lim, key := rateRig(t, 2)
	r.deliver(t, queue.For(r.d))
	if len(r.recv.got) != 1 {
		t.Fatalf("%d POSTs", len(r.recv.got))
	}
	if got := lim.reserved[key]; len(got) != 1 || got[0] != 2 {
		t.Errorf("endpoint reservations %v, want one at 2/s", got)
	}
	if got := lim.reserved[r.d.AccountID]; len(got) != 1 {
		t.Errorf("account reservations %v, want one", got)
	}

	r, lim, key = rateRig(t, 0)
	r.deliver(t, queue.For(r.d))
	if len(r.recv.got) != 1 || len(lim.reserved[key]) != 0 || len(lim.reserved[r.d.AccountID]) != 1 {
		t.Errorf("no endpoint rate: %d POSTs, reservations %v", len(r.recv.got), lim.reserved)
	}
}

// A far endpoint slot sends the message back with no POST, both slots
// given back, to book again when it returns: then the POST goes, once.
func TestFarEndpointSlotGivesBothSlotsBackAndComesBack(t *testing.T) {
	r, lim, key := rateRig(t, 1)
	lim.far, lim.farFor = key, 1
	r.deliver(t, queue.For(r.d))
	if len(r.recv.got) != 1 {
		t.Fatalf("%d POSTs, want 1", len(r.recv.got))
	}
	if len(r.q.sent) != 1 || r.q.sent[0].SlotAt != 0 {
		t.Fatalf("sent back %+v, want one message carrying no slot", r.q.sent)
	}
	if d := r.q.delays[0]; d <= 0 || d > 10*time.Second {
		t.Errorf("sent back with delay %s, want before the 10 s slot", d)
	}
	if lim.refunded[key] != 1 || lim.refunded[r.d.AccountID] != 1 {
		t.Errorf("refunds %v, want one of each", lim.refunded)
	}
	if len(lim.reserved[key]) != 2 || len(lim.reserved[r.d.AccountID]) != 2 {
		t.Errorf("reservations %v, want two of each (the far one, then the one used)", lim.reserved)
	}
}
