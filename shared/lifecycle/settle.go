package lifecycle

import (
	"math/rand/v2"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/retry"
)

// Throttle rules. A 429 with Retry-After is the receiver asking us to slow
// down, so it costs no attempt, but only MaxFreeThrottles times per delivery
// (per series) and only while the delivery is younger than ThrottleWindow;
// after that a 429 counts like a 5xx. Without the cap, `Retry-After: 1`
// would allow about 86,400 POSTs of one delivery in a day. Nor is a pause
// that would end past the delivery's deadline free: the 429 then counts as
// an attempt, and its wait ends by the deadline like any retry's.
const (
	MaxFreeThrottles = 8 // no more than the attempt ceiling
	ThrottleWindow   = 24 * time.Hour
	MaxThrottlePause = time.Hour // the longest pause a Retry-After gets
)

// Outcome is what an attempt decided for its delivery and endpoint.
type Outcome struct {
	Status        domain.Status     // pending (retry later), delivered or failed
	NextAttemptAt int64             // when pending
	FailReason    domain.FailReason // when failed
	GiveBack      bool              // a free throttle: the attempt does not count toward the ceiling
	// Endpoint health: Healthy true clears failing_since, false sets it if
	// unset, unless Blip: then the endpoint's health is not written at all.
	Healthy    bool
	Blip       bool
	PauseUntil int64 // the endpoint asked (Retry-After) to wait until then
	// DisableEndpoint: the endpoint has failed for too long; stop sending to it.
	DisableEndpoint string // the reason shown on the endpoint
	// WarnDisabling: the endpoint will be disabled soon (WarnsDisabling);
	// the worker tells the account once (store.WarnDisabling).
	WarnDisabling bool
	// Breaker: what the answer does to the endpoint's circuit breaker
	// (BreakerAfterAttempt).
	Breaker BreakerChange
	// KeepDue: a retry that leaves the delivery's due time, and so its
	// sweep index entry, where it is (KeepsDue).
	KeepDue bool
}

// Answer is what came back from one attempt.
type Answer struct {
	destination.Outcome
	Started, At time.Time // when the attempt left, and when its answer came
}

// Event names the transition an outcome makes.
func (o Outcome) Event() Event {
	switch {
	case o.Status == domain.StatusDelivered:
		return Answered2xx
	case o.GiveBack:
		return Throttled
	case o.Status == domain.StatusPending:
		return Retryable
	case o.FailReason == domain.ReasonExhausted:
		return Exhausted
	}
	return Rejected
}

// Settle applies the contract to an automatic attempt's answer. d is the
// delivery as claimed (Attempts counts this attempt). rnd draws the jitter
// (nil: a shared source). Every retry's wait ends by deadline (Deadline;
// zero: none), whatever held the series before (breaker holds, a probe):
// one cut short retries at the deadline, and an attempt failing at or past
// it is the last (endpoint_unavailable).
func Settle(d domain.Delivery, a Answer, now time.Time, s retry.Schedule, rnd *rand.Rand, deadline time.Time) Outcome {
	switch a.Verdict {
	case destination.Delivered:
		return Outcome{Status: domain.StatusDelivered, Healthy: true}
	case destination.Rejected, destination.Gone:
		reason := domain.ReasonRejected
		if a.Forbidden {
			reason = domain.ReasonBlockedAddress
		}
		return Outcome{Status: domain.StatusFailed, FailReason: reason, DisableEndpoint: Gone(a.Verdict)}
	case destination.Throttled:
		until := now.Add(min(a.RetryAfter, MaxThrottlePause))
		if d.Throttles < MaxFreeThrottles && now.Sub(time.UnixMilli(d.CreatedAt)) < ThrottleWindow && (deadline.IsZero() || !until.After(deadline)) {
			return Outcome{Status: domain.StatusPending, NextAttemptAt: domain.Millis(until), GiveBack: true, PauseUntil: domain.Millis(until)}
		}
	}
	wait, ok := s.Wait(d.Attempts, rnd)
	if !ok {
		return Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonExhausted}
	}
	if a.RetryAfter > wait {
		// A 503 (or a 429 past its free throttles) with Retry-After: wait
		// as asked, up to twice the schedule.
		wait = min(a.RetryAfter, 2*wait)
	}
	if !deadline.IsZero() && now.Add(wait).After(deadline) {
		if !now.Before(deadline) {
			return Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonEndpointUnavailable}
		}
		wait = deadline.Sub(now)
	}
	return Outcome{Status: domain.StatusPending, NextAttemptAt: domain.Millis(now.Add(wait))}
}

// Blip reports whether a failed answer leaves its endpoint's health as it
// is: the first attempt of a delivery, answered with an HTTP error, on an
// endpoint not failing, and retried. One such answer does not make an
// endpoint failing (not onto the slow lane, not toward being disabled):
// the retry, a second later by the default schedule, does if it fails too,
// and if it succeeds nothing was written and nothing is cleared, two writes
// of the endpoint's item fewer. A transport failure (a timeout, a refused
// connection) marks the endpoint at once: such endpoints hold workers,
// which is what the slow lane is for.
func Blip(ep domain.Endpoint, attempt int, r destination.Outcome, o Outcome) bool {
	return o.Status == domain.StatusPending && !o.GiveBack && attempt == 1 && ep.FailingSince == 0 && r.Answered()
}

// StartsFailing reports whether outcome o of an attempt to ep (as read
// before it) sets the endpoint's failing_since: a failure, not a blip, on
// an endpoint not failing yet. Recovers: o clears it. The store writes
// these, and the worker states them (endpoint.failing, endpoint.recovered)
// from the same two rules.
func StartsFailing(ep domain.Endpoint, o Outcome) bool {
	return !o.Healthy && !o.Blip && ep.FailingSince == 0
}

// StartsAuthFailing reports whether an attempt that failed as class (its
// error class) sets ep's auth_failing_since: the auth server refused the
// credentials and had not since the last success.
func StartsAuthFailing(ep domain.Endpoint, class string) bool {
	return destination.AuthRefused(class) && ep.AuthFailingSince == 0
}

// AuthRecovers reports whether o, a success, clears ep's auth_failing_since.
func AuthRecovers(ep domain.Endpoint, o Outcome) bool { return o.Healthy && ep.AuthFailingSince != 0 }

// Recovers reports whether o, a success, clears ep's failing_since.
func Recovers(ep domain.Endpoint, o Outcome) bool { return o.Healthy && ep.FailingSince != 0 }

// DisableWarning is how long before an endpoint failing for disableAfter
// is disabled its account is warned (endpoint.disabling): a day, or a fifth
// of disableAfter when that is shorter (the default 5 days: exactly a day).
func DisableWarning(disableAfter time.Duration) time.Duration {
	return min(24*time.Hour, disableAfter/5)
}

// WarnsDisabling reports whether outcome o of an attempt to ep (as read
// before it) that started at started warns that ep is about to be
// disabled: a failure (not a throttle, not the disabling one) within
// DisableWarning of failing_since + disableAfter, on an endpoint not warned
// yet in this failing period. The store's conditional write of
// disable_warned_at makes one of several such attempts the one that warns.
func WarnsDisabling(ep domain.Endpoint, o Outcome, started time.Time, disableAfter time.Duration) bool {
	if o.Healthy || o.GiveBack || o.DisableEndpoint != "" || disableAfter <= 0 || ep.FailingSince == 0 ||
		ep.DisableWarnedAt != 0 || ep.Disabled {
		return false
	}
	disablesAt := time.UnixMilli(ep.FailingSince).Add(disableAfter)
	return !started.Before(disablesAt.Add(-DisableWarning(disableAfter)))
}

// GoneReason is the disabled reason of an endpoint whose destination
// answered gone (an HTTP 410).
const GoneReason = "the receiver answered 410 Gone: it asked us to stop sending to this endpoint"

// Gone is what an answer says of its endpoint: gone (Standard Webhooks'
// 410) means "stop sending", so the endpoint is disabled at once, with
// GoneReason (any other verdict: ""). Later deliveries to it then fail as
// for any disabled endpoint, and the customer enables it again when ready.
func Gone(v destination.Verdict) string {
	if v == destination.Gone {
		return GoneReason
	}
	return ""
}

// LogOutcome is the attempt log's word for an automatic attempt's answer.
func LogOutcome(v destination.Verdict, o Outcome) domain.AttemptOutcome {
	switch {
	case o.GiveBack:
		return domain.OutcomeThrottled
	case v == destination.Throttled:
		return domain.OutcomeRetry // a 429 past its free throttles counts like a 5xx
	case v == destination.Gone:
		return domain.OutcomeRejected
	}
	return domain.AttemptOutcome(v.String())
}

// RecordResult is what a re-read delivery says about an outcome write that
// returned an error.
type RecordResult int

// The record results.
const (
	RecordRetry RecordResult = iota // not applied, and the claim is still ours: write it again
	RecordDone                      // applied after all (the error came after the write)
	RecordLost                      // not applied, and the claim is gone (lease ran out, a new owner)
)

// CheckRecord decides from the delivery as read now (found false: gone)
// whether the outcome write of attempt attemptID under claim claimID was
// applied.
func CheckRecord(d domain.Delivery, found bool, claimID, attemptID string) RecordResult {
	switch {
	case found && d.LastAttemptID == attemptID:
		return RecordDone
	case found && d.Claim == claimID:
		return RecordRetry
	}
	return RecordLost
}

// Interrupted is the attempt-log entry for the attempt a delivery's current
// claim made, when its worker stopped before recording a result: logged
// under the id it would have sent (the receiver may have seen it), or
// fallbackID when the claim kept none. nil when nothing is claimed.
func Interrupted(d domain.Delivery, fallbackID string) *domain.Attempt {
	if d.Claim == "" {
		return nil
	}
	id := d.ClaimAttempt
	if id == "" {
		id = fallbackID
	}
	return &domain.Attempt{
		ID: id, DeliveryID: d.ID, Kind: domain.AttemptInterrupted, Series: d.Series, Number: d.Attempts,
		StartedAt: d.UpdatedAt, ErrorClass: "interrupted", Error: "the worker stopped before recording a result",
		Outcome: domain.OutcomeUnknown, ExpiresAt: d.ExpiresAt,
	}
}
