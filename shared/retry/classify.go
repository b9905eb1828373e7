package retry

import (
	"net/http"
	"time"
)

// Verdict is what one attempt's result means for the delivery.
type Verdict int

const (
	Delivered Verdict = iota // a 2xx: done
	Retry                    // a transport error or 5xx: try again on the schedule
	Reject                   // a 3xx or 4xx: failed for good on this attempt
	Throttle                 // a 429 with Retry-After: wait as asked, no attempt used
)

func (v Verdict) String() string {
	return [...]string{"delivered", "retry", "rejected", "throttled"}[v]
}

// Result is what came back from one HTTP attempt.
type Result struct {
	StatusCode int           // 0 when no response came back
	ErrorClass string        // transport error class when StatusCode is 0
	RetryAfter time.Duration // the receiver's Retry-After, 0 when absent
}

// Classify applies the contract: 2xx delivered; 3xx and 4xx failed for good
// (redirects are never followed); 5xx and every transport error retried.
//
// One deliberate extension: a 429 with a Retry-After header is a throttle, not
// a rejection. The request is logged but uses no attempt, and the endpoint is
// paused for the time asked (capped). A 429 without Retry-After stays a 4xx.
// A connection refused because the address is forbidden (SSRF guard) is
// failed for good: retrying cannot make it allowed. So are the AWS
// destinations' refusals in rejectedClasses (docs/destinations.md).
func Classify(r Result) Verdict {
	switch {
	case r.StatusCode == 0 && (r.ErrorClass == ErrBlockedAddress || rejectedClasses[r.ErrorClass]):
		return Reject
	case r.StatusCode == 0:
		return Retry
	case r.StatusCode >= 200 && r.StatusCode < 300:
		return Delivered
	case r.StatusCode == http.StatusTooManyRequests && r.RetryAfter > 0:
		return Throttle
	case r.StatusCode >= 500:
		return Retry
	default: // 1xx (never final here), 3xx, 4xx
		return Reject
	}
}

// Transport error classes, as recorded in the attempt log.
const (
	ErrTimeout        = "timeout"
	ErrDNS            = "dns"
	ErrConnRefused    = "connection_refused"
	ErrConnReset      = "connection_reset"
	ErrTLS            = "tls"
	ErrBlockedAddress = "blocked_address"
	ErrNetwork        = "network"
)

// Error classes of AWS destinations (shared/destination), as recorded in
// the attempt log; the AWS error code itself is in the attempt's error. An
// AWS destination answers no HTTP status of its own: a send that AWS
// accepted is recorded as 200, every failure as one of these classes.
const (
	ErrAWSThrottled    = "aws_throttled"       // retried
	ErrAWSUnavailable  = "aws_unavailable"     // a 5xx or an internal error: retried
	ErrAWSError        = "aws_error"           // an error code we do not know: retried
	ErrAWSAssumeRole   = "aws_assume_role"     // the customer's role refused us: failed for good
	ErrAWSAccessDenied = "aws_access_denied"   // the role may not write to the target: failed for good
	ErrAWSNotFound     = "aws_not_found"       // the queue, topic or bus does not exist: failed for good
	ErrAWSKMS          = "aws_kms"             // the target's KMS key is disabled or not usable: failed for good
	ErrAWSInvalid      = "aws_invalid_request" // the message can never be accepted (too large, ...): failed for good
)

// rejectedClasses fail a delivery on the attempt, like a 4xx: each needs
// the customer to change something in their account, and the dead-letter
// queue's redrive sends it again once they have.
var rejectedClasses = map[string]bool{
	ErrAWSAssumeRole: true, ErrAWSAccessDenied: true, ErrAWSNotFound: true, ErrAWSKMS: true, ErrAWSInvalid: true,
}
