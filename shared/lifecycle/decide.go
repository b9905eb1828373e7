package lifecycle

import (
	"hash/fnv"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/retry"
)

// Verb is what to do with a queue message.
type Verb int

// The verbs.
const (
	Drop       Verb = iota // nothing to do: delete the message
	Wait                   // put the message back until Action.Until
	Attempt                // claim the next attempt and send it
	Fail                   // fail the delivery without an attempt (Action.Reason), then dead-letter it
	DeadLetter             // failed, its DLQ message not sent: claim the sending, send, mark
	Quarantine             // the message does not match the delivery: keep it for a human, touch nothing
)

var verbNames = [...]string{"drop", "wait", "attempt", "fail", "dead_letter", "quarantine"}

func (v Verb) String() string { return verbNames[v] }

// Action is a decision.
type Action struct {
	Verb   Verb
	On     Event             // the transition carrying it out makes ("" for Drop and a plain Wait)
	Until  time.Time         // Wait: when to look again
	Reason domain.FailReason // Fail: the failure reason (domain.Reason*)
	Why    string            // for the log
	// Deferral: the wait is the endpoint's (paused), not the delivery's own
	// schedule; the worker counts it and keeps the due time ahead of the sweeper.
	Deferral bool
	// Probe: the endpoint's breaker is half-open; this attempt is its one
	// probe, once the worker wins it (store.TakeProbe).
	Probe bool
}

// ExpiryMargin is how long before its TTL a pending delivery is failed as
// event_expired and dead-lettered, rather than attempted or re-queued: long
// enough for the DLQ message to be sent (and, if that is cut short, for a
// sweep to send it) before DynamoDB may delete the item.
const ExpiryMargin = time.Hour

// Input is everything a decision about a delivery message looks at. A nil
// pointer is an item that does not exist (or has expired).
type Input struct {
	Msg         Message
	Delivery    *domain.Delivery
	Endpoint    *domain.Endpoint
	Event       *domain.Event
	Now         time.Time
	MaxAttempts int
	// Deadline is when the delivery's series must have ended (Deadline);
	// zero: none.
	Deadline time.Time
}

// Deadline is when a delivery's current series must have reached a final
// state, whatever its endpoint does: its start, plus every wait of the
// schedule at its longest (with the most jitter), plus the timeout of every
// attempt. It is when the schedule would have ended had every attempt been
// made. The breaker's waits use no attempt, so without a deadline a dead
// endpoint held deliveries for days (until it was disabled) instead of the
// contract's roughly 90 minutes; they end there, failed as
// endpoint_unavailable (EndpointWait); so do the in-flight cap's waits
// (capDeferral), for an endpoint too slow for its traffic, and an
// endpoint's pause for its Retry-After (a free throttle's, Settle, only
// while it ends before it). The account's rate limit is the contract's own
// (nothing is dropped for it): its waits are not bounded by it. A wait of
// any kind ends at the item's TTL at the latest (store.ErrOutlives).
func Deadline(d domain.Delivery, s retry.Schedule, timeout time.Duration) time.Time {
	start := d.SeriesAt
	if start == 0 {
		start = d.CreatedAt
	}
	waits := time.Duration(float64(s.Total()) * (1 + s.Jitter)).Round(time.Millisecond)
	return time.UnixMilli(start).Add(waits + time.Duration(s.MaxAttempts())*timeout)
}

// EndpointWait bounds a wait the endpoint imposes (w, a Wait: its breaker,
// its pause, its in-flight cap) by the delivery's deadline: a wait past it
// is cut to it, and at the deadline the delivery fails as
// endpoint_unavailable. Without a deadline, w as it is.
func EndpointWait(w Action, now, deadline time.Time) Action {
	switch {
	case deadline.IsZero() || w.Until.Before(deadline):
		return w
	case !now.Before(deadline):
		return Action{Verb: Fail, On: Unattemptable, Reason: domain.ReasonEndpointUnavailable,
			Why: "the endpoint held the delivery past its deadline: " + w.Why}
	}
	w.Until = deadline
	return w
}

// Mismatch reports why a message and the items it led to do not belong
// together ("" when they do): a message naming one account's event and
// another's delivery must never send that event to that endpoint.
func Mismatch(in Input) string {
	d, m := in.Delivery, in.Msg
	switch {
	case d == nil:
		return ""
	case d.ID != m.DeliveryID:
		return "delivery id differs from the message's"
	case d.AccountID != m.AccountID:
		return "account differs from the delivery's"
	case d.EndpointID != m.EndpointID:
		return "endpoint differs from the delivery's"
	case d.EventID != m.EventID:
		return "event differs from the delivery's"
	case in.Endpoint != nil && (in.Endpoint.ID != d.EndpointID || in.Endpoint.AccountID != d.AccountID):
		return "endpoint item does not belong to the delivery"
	case in.Event != nil && (in.Event.ID != d.EventID || in.Event.AccountID != d.AccountID):
		return "event item does not belong to the delivery"
	}
	return ""
}

// NearExpiry reports whether a delivery (TTL in unix seconds) is within
// ExpiryMargin of its TTL at now.
func NearExpiry(ttl int64, now time.Time) bool {
	return ttl != 0 && time.Unix(ttl, 0).Sub(now) <= ExpiryMargin
}

// Decide is the decision for an automatic delivery message.
func Decide(in Input) Action {
	d, ep, now := in.Delivery, in.Endpoint, domain.Millis(in.Now)
	if why := Mismatch(in); why != "" {
		return Action{Verb: Quarantine, Why: why}
	}
	switch {
	case d == nil:
		return Action{Verb: Drop, Why: "delivery gone (expired or deleted)"}
	case d.Gen != in.Msg.Gen:
		return Action{Verb: Drop, Why: "message superseded by a newer generation"}
	case d.Status == domain.StatusFailed && d.DLQPending:
		return Action{Verb: DeadLetter, On: DLQSent, Why: "failed but its DLQ message was never sent"}
	case d.Status != domain.StatusPending:
		return Action{Verb: Drop, Why: "already " + string(d.Status)}
	case d.LeaseUntil > now:
		return Action{Verb: Wait, Until: time.UnixMilli(d.LeaseUntil), Why: "another worker holds this attempt"}
	case NearExpiry(d.ExpiresAt, time.UnixMilli(max(d.NextAttemptAt, now))):
		// Waiting would let DynamoDB delete it with no DLQ message.
		return Action{Verb: Fail, On: Unattemptable, Reason: domain.ReasonEventExpired, Why: "the event expires before its next attempt"}
	case d.NextAttemptAt > now:
		return Action{Verb: Wait, Until: time.UnixMilli(d.NextAttemptAt), Why: "not due yet"}
	case d.Attempts >= in.MaxAttempts:
		return Action{Verb: Fail, On: Unattemptable, Reason: domain.ReasonExhausted, Why: "the last attempt was claimed by a worker that died"}
	case ep == nil:
		return Action{Verb: Fail, On: Unattemptable, Reason: domain.ReasonEndpointDeleted, Why: "endpoint deleted"}
	case ep.Disabled:
		return Action{Verb: Fail, On: Unattemptable, Reason: domain.ReasonEndpointDisabled, Why: "endpoint disabled"}
	case in.Event == nil:
		return Action{Verb: Fail, On: Unattemptable, Reason: domain.ReasonEventExpired, Why: "event gone"}
	case ep.PausedUntil > now:
		w := Action{Verb: Wait, On: Deferred, Until: time.UnixMilli(ep.PausedUntil), Why: "the receiver asked us to wait (Retry-After)", Deferral: true}
		return EndpointWait(w, in.Now, in.Deadline)
	}
	if w, held := breakerWait(*ep, in.Now, d.ID); held {
		return EndpointWait(w, in.Now, in.Deadline)
	}
	probe := BreakerOf(*ep, in.Now) == BreakerHalfOpen
	if d.Claim != "" {
		return Action{Verb: Attempt, On: TakenOver, Why: "the previous attempt's worker died after claiming it", Probe: probe}
	}
	return Action{Verb: Attempt, On: Claimed, Probe: probe}
}

// breakerWait is the wait an endpoint's breaker imposes: until the pause
// ends while open, until the probe's lease runs out while another worker
// probes, each delivery (id) a little later than that by its own offset
// (HeldSpread). No attempt is used.
func breakerWait(ep domain.Endpoint, now time.Time, id string) (Action, bool) {
	var end int64
	var why string
	switch BreakerOf(ep, now) {
	case BreakerOpen:
		end, why = ep.BreakerOpenUntil, "the endpoint's breaker is open"
	case BreakerProbing:
		end, why = ep.BreakerProbeUntil, "another worker is probing the endpoint"
	default:
		return Action{}, false
	}
	later := heldOffset(id, time.Duration(ep.BreakerPauseMs)*time.Millisecond)
	return Action{Verb: Wait, On: Deferred, Until: time.UnixMilli(end).Add(later), Why: why, Deferral: true}, true
}

// HeldSpread is the share of a breaker's pause over which the deliveries it
// holds come back. All at the pause's end, every one of them would load its
// endpoint's item in the same second, on the account's partition: in the
// simulated day (docs/scale.md) that was 285 % of a partition's read
// capacity at each pause's end, for one account with a down endpoint. The
// price: after the probe finds the endpoint back, its held deliveries go
// out over the next quarter of the pause (7.5 s to 75 s) instead of at once.
const HeldSpread = 0.25

// heldOffset is the delivery id's own place in the spread: the same on
// every message of the delivery (the step stays a function of its input),
// uniform over [0, HeldSpread x pause) across deliveries.
func heldOffset(id string, pause time.Duration) time.Duration {
	h := fnv.New32a()
	h.Write([]byte(id))
	return time.Duration(float64(h.Sum32()) / (1 << 32) * HeldSpread * float64(pause)).Round(time.Millisecond)
}

// WaitVerb is how a message waits.
type WaitVerb int

// The ways to wait. Neither keeps a message in flight.
const (
	WaitDelayed WaitVerb = iota // a fresh copy of the message, sent with the wait as its delay
	WaitParked                  // kept in the table (event Parked); the scheduler sends it again, delayed to its time
)

// HowToWait decides how a message waits for wait (design BC, docs/scale.md):
// a delayed copy up to maxDelay (SQS's 15-minute limit, or less), parked in
// the table beyond that. A manual resend's message is not the delivery's
// own (parking belongs to the automatic series), so it hops in delayed
// copies of at most maxDelay.
func HowToWait(wait, maxDelay time.Duration, resend bool) WaitVerb {
	if wait <= maxDelay || resend {
		return WaitDelayed
	}
	return WaitParked
}

// DecideResend is the decision for a manual resend message: one attempt
// whatever the delivery's status, outside its automatic series.
func DecideResend(in Input) Action {
	if why := Mismatch(in); why != "" {
		return Action{Verb: Quarantine, Why: why}
	}
	d, ep, now := in.Delivery, in.Endpoint, domain.Millis(in.Now)
	switch {
	case d == nil || in.Event == nil:
		return Action{Verb: Drop, Why: "resend dropped: the delivery or its event has expired"}
	case ep == nil || ep.Disabled:
		return Action{Verb: Drop, Why: "resend dropped: the endpoint is disabled or deleted"}
	case ep.PausedUntil > now:
		return Action{Verb: Wait, Until: time.UnixMilli(ep.PausedUntil), Why: "the receiver asked us to wait (Retry-After)", Deferral: true}
	case BreakerOf(*ep, in.Now) == BreakerOpen:
		return Action{Verb: Wait, Until: time.UnixMilli(ep.BreakerOpenUntil), Why: "the endpoint's breaker is open", Deferral: true}
	}
	return Action{Verb: Attempt}
}

// SweepVerb is what the sweeper does with a delivery its requeue refused.
type SweepVerb int

// The sweep verbs.
const (
	Skip      SweepVerb = iota // moving again, or nothing to do
	SweepFail                  // fail it (SweepAction.Reason) and dead-letter it
	SweepDLQ                   // failed and not dead-lettered: send its DLQ message
)

// SweepAction is the sweeper's decision.
type SweepAction struct {
	Verb   SweepVerb
	On     Event
	Reason domain.FailReason
}

// DecideSweep is the sweeper's decision for an overdue delivery that its
// conditional re-queue refused (d as the refusal returned it).
func DecideSweep(d domain.Delivery, now time.Time, maxAttempts int) SweepAction {
	leaseFree := d.LeaseUntil < domain.Millis(now)
	switch {
	case d.Status == domain.StatusPending && leaseFree && NearExpiry(d.ExpiresAt, now):
		return SweepAction{Verb: SweepFail, On: Unattemptable, Reason: domain.ReasonEventExpired}
	case d.Status == domain.StatusPending && leaseFree && d.Attempts >= maxAttempts:
		// The last attempt was claimed and never finished: fail it, do not retry.
		return SweepAction{Verb: SweepFail, On: Unattemptable, Reason: domain.ReasonExhausted}
	case d.Status == domain.StatusFailed && d.DLQPending:
		return SweepAction{Verb: SweepDLQ, On: DLQSent}
	}
	return SweepAction{Verb: Skip}
}

// StateOf is the lifecycle state of a delivery as read at now (nil: Start,
// not there yet or gone).
func StateOf(d *domain.Delivery, now time.Time) State {
	switch {
	case d == nil || domain.Expired(d.ExpiresAt, now):
		return Start
	case d.Status == domain.StatusDelivered:
		return Delivered
	case d.Status == domain.StatusFailed && d.DLQPending:
		return DLQPending
	case d.Status == domain.StatusFailed:
		return DeadLettered
	case d.Claim != "":
		return InFlight // claimed; once the lease runs out the next claim takes it over
	}
	return Pending
}
