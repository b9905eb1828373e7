package lifecycle

import (
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// Lane is the delivery queue a message travels on. The deliver function
// reads three queues, each with its own concurrency (the event source
// mappings' maximum concurrency; make dev's POLLERS, SLOW_POLLERS and
// PACED_POLLERS): the fast lane, and the slow lane for the messages of
// endpoints that are failing (and the paced lane, below). A timed-out
// attempt holds its invocation for the whole delivery
// timeout; on one shared queue, a tenant whose endpoints hang fills the
// concurrency and every other tenant waits behind it (a quiet
// tenant's p99 went from 6 ms to 50 s with 4 pollers). On two lanes, the
// failing endpoints hold at most the slow lane's concurrency, and the fast
// lane keeps serving the healthy ones. SQS fair queues (MessageGroupId: the
// account) then order each lane's backlog by tenant on AWS.
//
// A third lane, the paced lane, takes a healthy endpoint's messages sent
// with a queue delay (an account over its rate: its slot's second is ahead,
// shared/pace), so that a backlog waiting for its seconds never holds the
// fast lane's concurrency. Such a message reaches its worker at most
// pace.Early before its second and leaves as it begins (docs/lifecycle.md
// "Lanes").
type Lane int

// The lanes.
const (
	LaneFast Lane = iota
	LaneSlow
	LanePaced
)

// LaneOf is the lane of an endpoint's messages at now: the slow lane while
// it is failing (its last attempt timed out, was refused or answered an
// error: failing_since is set, written only when it changes) or its breaker
// is not closed; the fast lane again after its first success.
func LaneOf(ep domain.Endpoint, now time.Time) Lane {
	// (Never the paced lane: that is a message's, by its slot, PacedLane.)
	if ep.FailingSince != 0 || BreakerOf(ep, now) != BreakerClosed {
		return LaneSlow
	}
	return LaneFast
}

// laneAfter is the lane a message put back now goes to: its endpoint's,
// counting the attempt just made (an attempt that failed makes the
// endpoint failing); with lanes off, or nothing loaded, the fast lane.
func laneAfter(k Known, p Policy) Lane {
	switch {
	case !p.Lanes || k.Endpoint == nil:
		return LaneFast
	case k.Answer != nil && k.Answer.Verdict != destination.Delivered:
		return LaneSlow
	}
	return LaneOf(*k.Endpoint, k.Now)
}

// PacedLane is the lane of a message on lane sent with a queue delay: the
// paced lane for a delayed fast-lane message (its slot's second is ahead,
// shared/pace), when a paced lane is deployed (paced); else lane.
func PacedLane(lane Lane, paced bool, delay time.Duration) Lane {
	if lane == LaneFast && paced && delay > 0 {
		return LanePaced
	}
	return lane
}
