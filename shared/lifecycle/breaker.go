package lifecycle

import (
	"math/rand/v2"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// The per-endpoint circuit breaker: an endpoint
// that keeps timing out or refusing connections holds a worker for the whole
// timeout per attempt; the breaker stops sending to it, so one customer's
// outage cannot take the workers every other customer needs.
const (
	BreakerAfter      = 5                // consecutive timeouts or connection failures that open it
	BreakerFirstPause = 30 * time.Second // the first pause before a probe
	BreakerMaxPause   = 5 * time.Minute  // pauses double up to this
	BreakerJitter     = 0.2              // each pause ±20 %, so breakers opened together do not probe together
)

// BreakerState is where an endpoint's breaker is.
type BreakerState string

// The breaker states.
const (
	BreakerClosed   BreakerState = "Closed"   // attempts go as usual; consecutive transport failures are counted
	BreakerOpen     BreakerState = "Open"     // no attempts until the pause ends; deliveries wait without using attempts
	BreakerHalfOpen BreakerState = "HalfOpen" // the pause is over: the next attempt is the one probe
	BreakerProbing  BreakerState = "Probing"  // one worker holds the probe (a conditional write on the endpoint); the rest wait
)

// BreakerEvent moves a breaker.
type BreakerEvent string

// The breaker events.
const (
	BreakerFailed    BreakerEvent = "transport_failure" // a timeout or connection failure, fewer than BreakerAfter in a row
	BreakerTripped   BreakerEvent = "tripped"           // the BreakerAfter-th in a row
	BreakerAnswered  BreakerEvent = "answered"          // any HTTP answer: the count starts again
	BreakerPauseOver BreakerEvent = "pause_over"        // BreakerOpenUntil passed (a time, no write)
	BreakerProbeTook BreakerEvent = "probe_taken"       // a worker won the probe
	BreakerProbeLost BreakerEvent = "probe_lost"        // the probe's worker died: its lease ran out (a time, no write)
	BreakerProbeOK   BreakerEvent = "probe_answered"    // the probe got an HTTP answer: closed
	BreakerProbeBad  BreakerEvent = "probe_failed"      // the probe timed out or could not connect: open again, pause doubled
)

// BreakerTransitions is the breaker's life, drawn in docs/lifecycle.md.
var BreakerTransitions = []Transition{
	{State(BreakerClosed), Event(BreakerFailed), State(BreakerClosed), "RecordAttempt", "breaker_fails + 1 (with the endpoint update after the attempt)"},
	{State(BreakerClosed), Event(BreakerAnswered), State(BreakerClosed), "RecordAttempt", "breaker_fails removed"},
	{State(BreakerClosed), Event(BreakerTripped), State(BreakerOpen), "RecordAttempt", "breaker_open_until = now + 30 s ±20 %, breaker_pause_ms = 30 s"},
	{State(BreakerOpen), Event(BreakerPauseOver), State(BreakerHalfOpen), "", "breaker_open_until <= now"},
	{State(BreakerHalfOpen), Event(BreakerProbeTook), State(BreakerProbing), "TakeProbe", "breaker_open_until <= now AND (breaker_probe_until absent or < now): one winner"},
	{State(BreakerProbing), Event(BreakerProbeLost), State(BreakerHalfOpen), "", "breaker_probe_until < now (the probe's worker died)"},
	{State(BreakerProbing), Event(BreakerProbeOK), State(BreakerClosed), "RecordAttempt", "every breaker_* attribute removed"},
	{State(BreakerProbing), Event(BreakerProbeBad), State(BreakerOpen), "RecordAttempt", "breaker_pause_ms doubled (at most 5 min), breaker_open_until = now + it ±20 %, breaker_probe_until removed"},
}

// BreakerOf is the state of an endpoint's breaker at now.
func BreakerOf(ep domain.Endpoint, now time.Time) BreakerState {
	t := domain.Millis(now)
	switch {
	case ep.BreakerOpenUntil == 0:
		return BreakerClosed
	case ep.BreakerOpenUntil > t:
		return BreakerOpen
	case ep.BreakerProbeUntil > t:
		return BreakerProbing
	}
	return BreakerHalfOpen
}

// BreakerChange is what one attempt's answer does to its endpoint's
// breaker; the store writes it with the endpoint's update after the attempt.
type BreakerChange struct {
	On        BreakerEvent // "" when nothing changes
	Count     bool         // add one to breaker_fails
	Close     bool         // remove every breaker attribute
	OpenUntil int64        // open (again) until then (unix ms), with pause PauseMs
	PauseMs   int64
}

// BreakerAfterAttempt decides what an attempt's answer does to the breaker
// of its endpoint ep (as read before the attempt); probe: this attempt was
// the half-open probe. Any answer (an HTTP status, an AWS error) counts as the endpoint being back:
// the breaker guards against endpoints that hold workers without answering;
// an endpoint answering 5xx quickly is the retry schedule's business. rnd
// draws the jitter (nil: a shared source).
func BreakerAfterAttempt(ep domain.Endpoint, r destination.Outcome, probe bool, now time.Time, rnd *rand.Rand) BreakerChange {
	// The endpoint did not answer at all: it holds a worker for the
	// timeout, or refuses connections.
	failed := r.NoAnswer
	switch {
	case probe && failed:
		pause := min(2*max(time.Duration(ep.BreakerPauseMs)*time.Millisecond, BreakerFirstPause), BreakerMaxPause)
		return BreakerChange{On: BreakerProbeBad, OpenUntil: domain.Millis(now.Add(jitter(pause, rnd))), PauseMs: pause.Milliseconds()}
	case probe:
		return BreakerChange{On: BreakerProbeOK, Close: true}
	case BreakerOf(ep, now) != BreakerClosed:
		// An attempt that was already in flight when the breaker opened: its
		// answer does not move it (the probe decides).
		return BreakerChange{}
	case failed && ep.BreakerFails+1 >= BreakerAfter:
		return BreakerChange{On: BreakerTripped, OpenUntil: domain.Millis(now.Add(jitter(BreakerFirstPause, rnd))), PauseMs: BreakerFirstPause.Milliseconds()}
	case failed:
		return BreakerChange{On: BreakerFailed, Count: true}
	case r.Answered() && ep.BreakerFails > 0:
		return BreakerChange{On: BreakerAnswered, Close: true}
	}
	return BreakerChange{}
}

func jitter(d time.Duration, rnd *rand.Rand) time.Duration {
	f := rand.Float64
	if rnd != nil {
		f = rnd.Float64
	}
	return time.Duration(float64(d) * (1 - BreakerJitter + 2*BreakerJitter*f()))
}
