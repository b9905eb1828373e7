package ratelimit

import (
	"testing"
	"time"
)

// A full bucket takes the burst at once, then one event per interval.
func TestDecideBurstThenSteadyRate(t *testing.T) {
	l := Limit{Rate: 10, Burst: 5} // 100 ms an event
	now := int64(1_000_000_000)    // µs
	tat := int64(0)
	for i := 0; i < 5; i++ {
		d := Decide(tat, now, 1, l)
		if !d.Allowed {
			t.Fatalf("event %d of the burst refused", i+1)
		}
		tat = d.TAT
	}
	d := Decide(tat, now, 1, l)
	if d.Allowed || d.RetryAfter != 100*time.Millisecond {
		t.Fatalf("the sixth event at once: %+v, want refused for 100ms", d)
	}
	if d.TAT != tat {
		t.Fatalf("a refusal moved tat from %d to %d", tat, d.TAT)
	}
	// Steady: one interval later exactly one more fits.
	now += 100_000
	if d = Decide(tat, now, 1, l); !d.Allowed {
		t.Fatal("one interval later one event must fit")
	}
	tat = d.TAT
	if d = Decide(tat, now, 1, l); d.Allowed {
		t.Fatal("two events in one interval at the steady rate")
	}
}

func TestDecideRetryAfterIsWhenTheEventsFit(t *testing.T) {
	l := Limit{Rate: 2, Burst: 4} // 500 ms an event
	now := int64(50_000_000)
	tat := now + 4*500_000 // the bucket is empty
	cases := []struct {
		n    int
		want time.Duration
	}{{1, 500 * time.Millisecond}, {2, time.Second}, {4, 2 * time.Second}}
	for _, c := range cases {
		d := Decide(tat, now, c.n, l)
		if d.Allowed || d.RetryAfter != c.want {
			t.Fatalf("%d events: %+v, want refused for %s", c.n, d, c.want)
		}
		if !Decide(tat, now+c.want.Microseconds(), c.n, l).Allowed {
			t.Fatalf("%d events not allowed after the Retry-After they were given", c.n)
		}
		if Decide(tat, now+c.want.Microseconds()-1, c.n, l).Allowed {
			t.Fatalf("%d events allowed before their Retry-After", c.n)
		}
	}
}

// An idle key's bucket refills to the burst and no further: no credit piles up.
func TestDecideRefillStopsAtBurst(t *testing.T) {
	l := Limit{Rate: 1, Burst: 3}
	tat := int64(10_000_000) // drained at 7 s
	now := int64(1_000_000_000)
	if d := Decide(tat, now, 3, l); !d.Allowed || d.TAT != now+3_000_000 {
		t.Fatalf("a refilled bucket: %+v, want the burst allowed and tat %d", d, now+3_000_000)
	}
	if d := Decide(tat, now, 4, l); d.Allowed {
		t.Fatal("idle time gave credit beyond the burst")
	}
	// Half refilled: 2 s after draining, two events fit, not three.
	drained := int64(20_000_000)
	if !Decide(drained, drained-1_000_000, 2, l).Allowed || Decide(drained, drained-1_000_000, 3, l).Allowed {
		t.Fatal("a bucket two seconds into its refill must hold exactly two events")
	}
}

func TestExceedsAndRetryAfterSeconds(t *testing.T) {
	l := Limit{Rate: 5, Burst: 10}
	if Exceeds(10, l) || !Exceeds(11, l) {
		t.Fatal("a batch fits iff it is at most the burst")
	}
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 90 * time.Second: 90} {
		if got := RetryAfterSeconds(d); got != want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", d, got, want)
		}
	}
	for _, bad := range []Limit{{0, 1}, {-1, 1}, {1, 0}} {
		if bad.Valid() {
			t.Errorf("%+v is valid", bad)
		}
	}
}

// A lease is the instance's recent demand, up to one Window's refill and
// the room left in the burst; a key under ten a second has none.
func TestLeaseFollowsDemandUpToOneWindowsRefill(t *testing.T) {
	cases := []struct {
		n, recent int
		l         Limit
		want      int
	}{
		{1, 0, Limit{Rate: 1000, Burst: 1000}, 0},     // nothing admitted lately: no lease
		{1, 7, Limit{Rate: 1000, Burst: 1000}, 7},     // the recent demand
		{1, 500, Limit{Rate: 1000, Burst: 1000}, 100}, // at most 100 ms of refill at 1,000/s
		{1, 500, Limit{Rate: 9, Burst: 50}, 0},        // under 10/s: no token refills within a Window
		{1, 500, Limit{Rate: 20, Burst: 50}, 2},       // 20/s: 2 a Window
		{4, 500, Limit{Rate: 1000, Burst: 10}, 6},     // never past the burst
	}
	for _, c := range cases {
		if got := Lease(c.n, c.recent, c.l); got != c.want {
			t.Errorf("Lease(%d, %d, %+v) = %d, want %d", c.n, c.recent, c.l, got, c.want)
		}
	}
}

// Fit is the largest n Decide allows.
func TestFitIsTheLargestAllowed(t *testing.T) {
	l := Limit{Rate: 10, Burst: 5}
	now := int64(1_000_000_000)
	for _, tat := range []int64{0, now - 5_000_000, now, now + 100_000, now + 250_000, now + 500_000, now + 900_000} {
		f := Fit(tat, now, l)
		if f > 0 && !Decide(tat, now, f, l).Allowed {
			t.Errorf("tat %+d: Fit %d is not allowed", tat-now, f)
		}
		if Decide(tat, now, f+1, l).Allowed {
			t.Errorf("tat %+d: Fit %d, but %d are allowed", tat-now, f, f+1)
		}
	}
}

// A key's interval is to the microsecond, as the bookings': 2,000 events a
// second are 500 µs apart (whole milliseconds held every key under 1,000 a
// second), and 300 a second is 3,333 µs, not 3 ms (333 a second).
func TestDecideSpacesEventsToTheMicrosecond(t *testing.T) {
	for _, c := range []struct {
		rate float64
		ivl  int64
	}{{2000, 500}, {300, 3333}} {
		l := Limit{Rate: c.rate, Burst: 1}
		now := int64(1_000_000_000)
		d := Decide(0, now, 1, l)
		if !d.Allowed {
			t.Fatalf("%v/s: the first event refused", c.rate)
		}
		if Decide(d.TAT, now+c.ivl-1, 1, l).Allowed || !Decide(d.TAT, now+c.ivl, 1, l).Allowed {
			t.Fatalf("%v/s: the next event is not allowed exactly %d µs later", c.rate, c.ivl)
		}
	}
}
