package redrive_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/redrive"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestTimeToStop(t *testing.T) {
	deadline := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	margin := 30 * time.Second
	for _, c := range []struct {
		left time.Duration
		held int
		stop bool
	}{
		{5 * time.Minute, 0, false},
		{31 * time.Second, 0, false},
		{30 * time.Second, 0, false},                       // exactly the margin left: one more round fits
		{29 * time.Second, 0, true},                        // less than the margin
		{30*time.Second + 100*time.Millisecond, 10, false}, // 30 s + one release batch (0.1 s)
		{30*time.Second + 150*time.Millisecond, 11, true},  // 30 s + two batches (0.2 s)
		{2 * time.Minute, 10000, true},                     // 1,000 release batches: 100 s on top of the margin
		{2*time.Minute + 10*time.Second, 10000, false},
		{-time.Second, 0, true}, // past the deadline
	} {
		if got := redrive.TimeToStop(deadline.Add(-c.left), deadline, c.held, margin); got != c.stop {
			t.Errorf("left %v, held %d: stop %v, want %v", c.left, c.held, got, c.stop)
		}
	}
}

// steppingClock advances by step at every reading.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// A run that nears its deadline stops with its counts and has_more, gives
// back the messages it held, and the next run continues where it stopped:
// together they handle every message once. On the emulators: real SQS
// calls on a real DLQ; the clock the run reads steps a minute per round,
// so when it stops is exact, not timed.
func TestRedriveStopsBeforeItsDeadlineAndContinues(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	acct := domain.NewID("acct")
	epA, epB := domain.NewID("ep"), domain.NewID("ep")
	// Poison messages (SQS moved them after maxReceiveCount) for
	// deliveries that no longer exist: matched and removed as stale, no
	// delivery needed. Endpoint B's do not match the filter: held, then
	// given back.
	send := func(ep string, n int) {
		for i := range n {
			msg := queue.Message{Kind: queue.KindDeliver, DeliveryID: domain.NewID("dlv"), EventID: domain.NewID("evt"),
				EndpointID: ep, AccountID: acct, Gen: 1}
			if _, err := env.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(env.Queues.DLQ), MessageBody: aws.String(msg.Encode())}); err != nil {
				t.Fatalf("send %s #%d: %v", ep, i, err)
			}
		}
	}
	send(epA, 30)
	send(epB, 5)

	margin := 10 * time.Minute
	redriver := func(now func() time.Time) *redrive.Redriver {
		return &redrive.Redriver{SQS: env.SQS, DLQURL: env.Queues.DLQ, Store: store.New(env.DB, env.Table),
			Queue: queue.New(env.SQS, env.Queues.Delivery, env.Queues.DLQ), Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
			Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Margin: margin, Now: now}
	}
	req := redrive.Request{MaxMessages: 1000, EndpointID: epA}

	// Run 1: the deadline is an hour away in real time (it never cuts a
	// call short); the run's clock puts it 2.5 rounds before margin+deadline,
	// so it does two rounds and stops before the third.
	deadline := time.Now().Add(time.Hour)
	clock := &steppingClock{now: deadline.Add(-margin - 150*time.Second), step: time.Minute}
	dctx, cancel := context.WithDeadline(ctx, deadline)
	first, err := redriver(clock.Now).Handle(dctx, req)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if first.Stopped != redrive.StopDeadline || !first.HasMore {
		t.Fatalf("run 1: %+v, want stopped at the deadline with has_more", first)
	}
	if first.Examined == 0 || first.Examined > 20 || first.Stale+first.Left != first.Examined || first.Moved != 0 {
		t.Fatalf("run 1: %+v, want at most two rounds of 10, each message stale (A) or left (B)", first)
	}

	// Run 2, no deadline pressure: continues and drains what matches.
	second, err := redriver(nil).Handle(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Stopped != redrive.StopEmpty || second.HasMore {
		t.Fatalf("run 2: %+v, want stopped on an empty DLQ, no more", second)
	}
	if first.Stale+second.Stale != 30 || second.Left != 5 {
		t.Fatalf("stale %d + %d, left in run 2 %d; want the 30 of endpoint A removed once and B's 5 seen again",
			first.Stale, second.Stale, second.Left)
	}

	// What is left: endpoint B's 5, visible (given back at the end of each run).
	out, err := env.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(env.Queues.DLQ),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	visible, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	hidden, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	if visible != 5 || hidden != 0 {
		t.Errorf("DLQ: %d visible, %d in flight; want endpoint B's 5 visible", visible, hidden)
	}
}
