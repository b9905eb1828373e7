package lifecycle_test

import (
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
)

// httpOutcome is what the webhook provider reports for an HTTP answer
// (class empty) or a transport error (status 0, class one of webhook's).
func httpOutcome(status int, class string, retryAfter time.Duration) destination.Outcome {
	o := destination.Outcome{Status: status, Class: class, RetryAfter: retryAfter}
	switch {
	case class == webhook.ErrBlockedAddress:
		o.Verdict, o.Forbidden = destination.Rejected, true
	case status == 0:
		o.Verdict, o.NoAnswer = destination.Retry, true
		if o.Class == "" {
			o.Class = webhook.ErrTimeout
		}
	default:
		o.Verdict = webhook.VerdictOf(status, retryAfter)
	}
	return o
}
