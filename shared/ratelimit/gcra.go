package ratelimit

// Admission: an API key's ingest is paced by a rate (events per second) and
// a burst, so one producer's flood is answered 429 while the others' events
// go on. The same GCRA as the bookings (ratelimit.go): a key's state is tat,
// the theoretical arrival time of its next event; events are admitted while
// tat stays within burst intervals of now, and refused otherwise, where a
// booking never refuses and hands out the slot instead. The decision is the
// pure function Decide; Take keeps tat in DynamoDB, one item per key, so
// every Lambda instance shares it.

import (
	"math"
	"time"
)

// Limit is a key's allowance: Burst events at once, refilled at Rate per second.
type Limit struct {
	Rate  float64 // events per second, > 0
	Burst int     // events, >= 1
}

// Valid reports whether l can be enforced.
func (l Limit) Valid() bool { return l.Rate > 0 && !math.IsInf(l.Rate, 0) && l.Burst >= 1 }

// interval is the time one event's token takes to refill, in µs (at least
// 1), as the bookings' (Interval): a key's rate is not rounded to whole
// milliseconds, nor held under 1,000 a second.
func (l Limit) interval() int64 { return intervalUs(l.Rate) }

// Decision is what Decide says of n events.
type Decision struct {
	Allowed    bool
	TAT        int64         // the new tat (unix µs) when allowed; unchanged otherwise
	RetryAfter time.Duration // when refused: how long until these n events would be allowed
}

// Decide applies GCRA to n events at now (unix µs), given the key's tat
// (0: never used). The bucket is full when tat <= now; each event moves tat
// one interval on; events are allowed while tat stays within burst
// intervals of now. n larger than the burst is never allowed (Exceeds).
func Decide(tat, now int64, n int, l Limit) Decision {
	ivl := l.interval()
	next := advance(time.UnixMicro(tat), time.UnixMicro(now), n, time.Duration(ivl)*time.Microsecond).UnixMicro()
	limit := now + int64(l.Burst)*ivl
	if next <= limit {
		return Decision{Allowed: true, TAT: next}
	}
	return Decision{TAT: tat, RetryAfter: time.Duration(next-limit) * time.Microsecond}
}

// advance is GCRA's one rule, for admission (Decide) and booking (Book)
// alike: n events at now take the n intervals after max(tat, now); it
// returns the new tat. Admission then refuses a tat past the burst; a
// booking never refuses, and hands out the slots instead.
func advance(tat, now time.Time, n int, ivl time.Duration) time.Time {
	return later(tat, now).Add(time.Duration(n) * ivl)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Exceeds reports whether n events can never be allowed at once under l.
func Exceeds(n int, l Limit) bool { return n > l.Burst }

// RetryAfterSeconds is the Retry-After header's value for d: whole seconds,
// rounded up, at least 1 (0 would invite an immediate retry that fails).
func RetryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// Window is how long tokens an instance took ahead for a key (its lease)
// stay usable by that instance; after it they are dropped unused.
const Window = 100 * time.Millisecond

// Lease is how many tokens beyond n a take asks for, so that the next events
// of a busy key are admitted from the instance's memory with no DynamoDB
// call: as many as the instance admitted for the key in the current and the
// previous Window (its recent demand, so a lease doubles while the key stays
// busy), at most what the key's rate refills in one Window, and never past
// the burst. Tokens are only ever taken from the shared bucket, so the key's
// rate holds exactly; a lease dropped unused costs the key at most one
// Window's refill, and a token used up to a Window after it was taken lets a
// burst exceed the key's by at most as much (a tenth of a second's worth of
// its rate). A key under ten events a second has no lease at all.
func Lease(n, recent int, l Limit) int {
	refill := int(Window.Microseconds() / l.interval())
	return max(0, min(recent, refill, l.Burst-n))
}

// Fit is how many events the bucket holds at now (unix µs), given its tat.
func Fit(tat, now int64, l Limit) int {
	return int(max(0, (now+int64(l.Burst)*l.interval()-max(tat, now))/l.interval()))
}
