package destination

import (
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// Verdict is what one attempt means for its delivery, whatever the
// destination: the rule book (shared/lifecycle) reads only this.
type Verdict int

// The verdicts.
const (
	Delivered Verdict = iota // the destination took it: done
	Retry                    // try again on the schedule (Outcome.RetryAfter may stretch the wait)
	Rejected                 // failed for good on this attempt
	Throttled                // the destination asked to wait (Outcome.RetryAfter): no attempt used
	Gone                     // the destination asked us to stop sending: failed, and the endpoint disabled
)

func (v Verdict) String() string {
	return [...]string{"delivered", "retry", "rejected", "throttled", "gone"}[v]
}

// Outcome is what one attempt produced, in the seam's terms. Each provider
// maps its own answers (HTTP statuses, AWS error codes) onto it.
type Outcome struct {
	Verdict Verdict
	// Class is why, in the provider's words (the attempt log's error_class:
	// timeout, aws_throttled, ...); empty when delivered or answered.
	Class string
	// NoAnswer: the destination did not answer at all (a timeout, a refused
	// or reset connection, DNS, TLS): what the circuit breaker counts, since
	// such a destination holds a worker for the whole timeout.
	NoAnswer bool
	// Forbidden: rejected because the destination may never be reached from
	// here (the SSRF guard); the delivery fails as blocked_address.
	Forbidden bool
	// RetryAfter is how long the destination asked to wait (0: not asked).
	RetryAfter time.Duration
	// Status is the provider's own status where it has one (an HTTP
	// status); 0 when it has none or nothing answered.
	Status int
	// Error is a short, safe description of a failure (no URL, no secret).
	Error string
	// Response is the first bytes of the answer (valid UTF-8) or the id the
	// destination gave the message; Truncated when cut.
	Response  string
	Truncated bool
	StartedAt time.Time
	Duration  time.Duration
}

// Error classes of an attempt whose credentials the destination's auth
// server refused for good (an OAuth2 token endpoint's invalid_client or
// other 4xx): the endpoint's auth is failing until a delivery succeeds.
const (
	ClassAuthInvalidClient = "oauth_invalid_client"
	ClassAuthRefused       = "oauth_token_refused"
)

// AuthRefused: class is one of the auth server's refusals.
func AuthRefused(class string) bool {
	return class == ClassAuthInvalidClient || class == ClassAuthRefused
}

// Answered reports whether the destination itself answered (delivered or
// not): the breaker's "it is back" and the blip rule's "an error answer".
func (o Outcome) Answered() bool { return !o.NoAnswer && !o.Forbidden }

// Entry is the attempt log's entry for this outcome: a, with what the
// attempt produced filled in.
func (o Outcome) Entry(a domain.Attempt) domain.Attempt {
	a.StartedAt, a.DurationMs = domain.Millis(o.StartedAt), o.Duration.Milliseconds()
	a.StatusCode, a.ErrorClass, a.Error = o.Status, o.Class, o.Error
	a.ResponseBody, a.ResponseTruncated = o.Response, o.Truncated
	return a
}
