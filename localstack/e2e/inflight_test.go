package e2e

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/app"
)

// With one account's 16 endpoints answering 5xx and
// well over a thousand deliveries waiting for their retries at once, the
// delivery queue's ApproximateNumberOfMessagesNotVisible, sampled through
// the run, stays at most the workers' concurrency times the batch size (the
// local runner's 32 pollers x 10, as the mapping's maximum concurrency x 10):
// waits are delayed copies (1 s) or parked in the table (4 s), not messages
// hidden in flight. Under design A (every wait a ChangeMessageVisibility)
// every waiting delivery counts as in flight.
func TestWaitingDeliveriesAreNotInFlight(t *testing.T) {
	localOnly(t)
	ownSchedule(t, "1s,4s")
	const endpoints, events, attempts, bound = 16, 100, 3, 32 * 10
	hides := &hideLog{}
	// A longer attempt timeout moves the deadline (which ends a wait for
	// the cap too) past the time 1,600 deliveries take on a loaded machine:
	// the test counts attempts made, not deliveries failed at the deadline.
	h := start(t, opts{retry: "1s,4s", rate: 5000, env: map[string]string{"PARK_AFTER": "2s", "SCHEDULE_AHEAD": "1s", "DELIVERY_TIMEOUT": "20s"},
		wrapSQS: func(q app.SQS) app.SQS { hides.SQS = q; return hides }})
	scheduleEvery(t, h, 500*time.Millisecond)
	_, key := h.account(t)
	var mu sync.Mutex
	seen := map[string]int{} // delivery (event + endpoint) -> requests
	for i := 0; i < endpoints; i++ {
		h.registerReceiver(t, key, func(_ int, _ http.ResponseWriter, r *http.Request) (int, string) {
			mu.Lock()
			seen[r.Header.Get("webhook-id")]++
			mu.Unlock()
			return 503, "down"
		})
	}
	// waiting counts deliveries between their first and last attempt, and
	// done those that made all of them.
	count := func() (waiting, done int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range seen {
			if n >= attempts {
				done++
			} else {
				waiting++
			}
		}
		return
	}
	h.publishMany(t, key, events)
	total := endpoints * events
	maxNotVisible, maxWaiting, samples := 0, 0, 0
	deadline := time.Now().Add(4 * time.Minute)
	for {
		out, err := h.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(h.queueURL),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
		waiting, done := count()
		maxNotVisible, maxWaiting, samples = max(maxNotVisible, n), max(maxWaiting, waiting), samples+1
		// A system error (before the bookings of a process shared their
		// writes: the one account's rate limiter item, contended by 320
		// workers) hides its message for 10 s outside any worker: the one
		// ChangeMessageVisibility left.
		hidden := hides.since(time.Now().Add(-11 * time.Second))
		if n > bound+hidden {
			t.Fatalf("%d messages in flight with %d deliveries waiting; the workers hold at most %d, and %d were hidden after a system error",
				n, waiting, bound, hidden)
		}
		if done == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries made their %d attempts after 4 min", done, total, attempts)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if maxWaiting <= bound {
		t.Fatalf("at most %d deliveries waited at once: the run never put more waits than the bound in play", maxWaiting)
	}
	if bad := hides.notBackoff(); bad != 0 {
		t.Fatalf("%d ChangeMessageVisibility calls asked for other than the 10 s system-error backoff", bad)
	}
	t.Logf("%d samples: at most %d messages in flight (bound %d + those hidden after a system error, %d in all) while up to %d deliveries waited for a retry",
		samples, maxNotVisible, bound, hides.since(time.Time{}), maxWaiting)
}

// hideLog records the app's ChangeMessageVisibility calls: the times of the
// 10 s system-error backoffs, and how many asked for anything else.
type hideLog struct {
	app.SQS
	mu    sync.Mutex
	at    []time.Time
	other int // asked for anything but 10 s
}

func (l *hideLog) ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, o ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	l.mu.Lock()
	if in.VisibilityTimeout == 10 {
		l.at = append(l.at, time.Now())
	} else {
		l.other++
	}
	l.mu.Unlock()
	return l.SQS.ChangeMessageVisibility(ctx, in, o...)
}

func (l *hideLog) since(from time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, at := range l.at {
		if at.After(from) {
			n++
		}
	}
	return n
}

func (l *hideLog) notBackoff() int { l.mu.Lock(); defer l.mu.Unlock(); return l.other }
