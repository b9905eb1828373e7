package lifecycle

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// Which attempts take an in-flight slot: all with the strict cap, none
// with no cap; with CapWhenSlow, those to an endpoint marked slow, and all
// of an account whose rate would let more than MaxOvershoot through while
// an endpoint's slowness goes unseen (rate x SlowDetection).
func TestCapNow(t *testing.T) {
	now := time.Now()
	slow := domain.Endpoint{SlowUntil: domain.Millis(now.Add(time.Minute))}
	wasSlow := domain.Endpoint{SlowUntil: domain.Millis(now.Add(-time.Second))}
	strict, none, whenSlow := Policy{MaxInFlight: 5}, Policy{}, Policy{MaxInFlight: 5, CapWhenSlow: true}
	at5, at10, unknown := 200*time.Millisecond, 100*time.Millisecond, time.Duration(0)
	for _, c := range []struct {
		name     string
		p        Policy
		ep       domain.Endpoint
		interval time.Duration
		want     bool
	}{
		{"strict, healthy", strict, domain.Endpoint{}, at5, true},
		{"no cap, slow", none, slow, at5, false},
		{"when slow, healthy, 5/s (10 at most over the cap)", whenSlow, domain.Endpoint{}, at5, false},
		{"when slow, its mark run out", whenSlow, wasSlow, at5, false},
		{"when slow, marked slow", whenSlow, slow, at5, true},
		{"when slow, healthy, 10/s (20 over: strict)", whenSlow, domain.Endpoint{}, at10, true},
		{"when slow, the rate not known yet", whenSlow, domain.Endpoint{}, unknown, true},
	} {
		if got := CapNow(c.p, c.ep, c.interval, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// Which attempts are watched for a slow answer: with CapWhenSlow and a cap
// only, and not to an endpoint already marked slow (its mark is renewed
// by the slow attempts that find it so).
func TestWatchSlow(t *testing.T) {
	now := time.Now()
	slow := domain.Endpoint{SlowUntil: domain.Millis(now.Add(time.Minute))}
	wasSlow := domain.Endpoint{SlowUntil: domain.Millis(now.Add(-time.Second))}
	whenSlow := Policy{MaxInFlight: 5, CapWhenSlow: true}
	for _, c := range []struct {
		name string
		p    Policy
		ep   domain.Endpoint
		want bool
	}{
		{"strict cap", Policy{MaxInFlight: 5}, domain.Endpoint{}, false},
		{"when slow, no cap", Policy{CapWhenSlow: true}, domain.Endpoint{}, false},
		{"when slow, healthy", whenSlow, domain.Endpoint{}, true},
		{"when slow, its mark run out", whenSlow, wasSlow, true},
		{"when slow, marked slow", whenSlow, slow, false},
	} {
		if got := WatchSlow(c.p, c.ep, now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
