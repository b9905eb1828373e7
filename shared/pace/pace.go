// Package pace is the account rate's whole-second buckets, in plain
// values: an account's slots (ratelimit's bookings, 1/rate apart) fall in
// wall-clock seconds, at most the rate's count in each; a delivery leaves
// during its slot's second, as soon as its message reaches a worker, not at
// the slot itself. The queue's delay (whole seconds) lands the message at
// most Early before its second begins, so a worker waits at most that long
// (the only paid wait); a message that would leave in the last SendBy of its
// second, or after it, books a new slot instead of spilling into the next
// second, whose slots are all booked already.
package pace

import "time"

const (
	// Early is how long before its second a delayed message can become
	// visible (Delay): the wait a worker pays, Early²/2 a second on average
	// less the pipeline's latency, against a message that lands late in its
	// second when the pipeline is slow.
	Early = 200 * time.Millisecond
	// MaxEarly is how early for its second a message waits in the worker;
	// an earlier one goes back to the queue (a put-back costs less than
	// a longer paid wait).
	MaxEarly = Early + 50*time.Millisecond
	// SendBy is how much of its second must be left for a slot to be used
	// (Usable): the claim's write and the POST's start, with room for a
	// loaded machine.
	SendBy = 100 * time.Millisecond
	// Cutoff: a booking made in the last Cutoff of a second takes no slot
	// in that second (ratelimit.Book): a message sent at once would reach
	// its worker too late to use it (SendBy plus a pipeline's latency).
	Cutoff = 200 * time.Millisecond
	// LeadStep is how much earlier than Early a message is sent back for
	// its next slot each time it reached a worker too late for the one it
	// carried, up to MaxLead (whole seconds: a slot's second less the lead
	// is a second too). A pipeline that is late by a steady amount (a busy
	// poller; LocalStack makes delayed messages visible once a second, at
	// a fixed point of the second) would otherwise land every message past
	// its slot, again and again: each one booked anew at the end of the
	// account's line, and none ever sent. The lead costs a worker's wait of
	// up to the lead, for that message only.
	LeadStep = time.Second
	MaxLead  = 2 * time.Second
)

// Second is the wall-clock second a slot falls in, and in which its
// delivery leaves.
func Second(slot time.Time) time.Time { return slot.Truncate(time.Second) }

// Next is the start of the second after now's.
func Next(now time.Time) time.Time { return Second(now).Add(time.Second) }

// Delay is the queue delay of a message for slot sent at now: whole
// seconds, the fewest that land it no earlier than Early before its
// second, so it becomes visible in [second - Early, second + 1 s - Early);
// 0 for a second that is (about to be) under way.
func Delay(slot, now time.Time) time.Duration {
	d := Second(slot).Add(-Early).Sub(now)
	if d <= 0 {
		return 0
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// NextLead is the lead of a message that came too late for its slot,
// whose lead was lead.
func NextLead(lead time.Duration) time.Duration { return min(lead+LeadStep, MaxLead) }

// Usable reports whether a delivery may still leave at now for slot:
// more than SendBy of its second is left. (Before its second it waits; see
// Wait.)
func Usable(slot, now time.Time) bool { return now.Before(Second(slot).Add(time.Second - SendBy)) }

// Late reports whether a delivery claimed for slot would leave too late at
// now: less than LastMoment of its second is left (the claim's write took
// longer than SendBy allowed for).
func Late(slot, now time.Time) bool { return !now.Before(Second(slot).Add(time.Second - LastMoment)) }

// LastMoment is how much of its second a claimed delivery needs left to
// leave in it (the POST's connection and its first bytes).
const LastMoment = 50 * time.Millisecond

// Wait is how long a delivery for slot must wait at now before it may
// leave: until its second begins; 0 within it.
func Wait(slot, now time.Time) time.Duration { return max(Second(slot).Sub(now), 0) }
