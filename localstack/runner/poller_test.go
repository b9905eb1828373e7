package runner_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/localstack/testenv"
)

// startPoller runs a poller on env's delivery queue with handle as the
// deliver function (and the batching window of window, if given), until stop
// (which returns once Run has) or the test's end.
func startPoller(t *testing.T, env *testenv.Env, concurrency int, batch int32, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), window ...time.Duration) (p *runner.Poller, stop func()) {
	t.Helper()
	p = &runner.Poller{SQS: env.SQS, QueueURL: env.Queues.Delivery, QueueARN: "arn:aws:sqs:us-east-1:000000000000:q",
		Handler: runner.Concurrent(handle), Concurrency: concurrency, BatchSize: batch, Timeout: time.Minute,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	if len(window) > 0 {
		p.Window = window[0]
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return p, stop
}

func send(t *testing.T, env *testenv.Env, body string) {
	t.Helper()
	if _, err := env.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(env.Queues.Delivery), MessageBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
}

// waitUntil polls cond; the deadline only stops a broken run from hanging.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// Messages sent one at a time to an idle queue are each received by one
// long poll: the poller's many invocation slots do not each wait in a long
// poll of their own (the emulator wakes them all per message, and all but
// one came back empty: 24,880 receives for 2,000 messages with 32 slots).
// Every message is handled once and deleted.
func TestPollerWaitsInOneLongPollAtATime(t *testing.T) {
	env := testenv.New(t)
	var mu sync.Mutex
	seen := map[string]int{}
	p, _ := startPoller(t, env, 8, 10, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range ev.Records {
			seen[r.Body]++
		}
		return events.SQSEventResponse{}, nil
	})
	handled := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	const n = 20
	for i := 0; i < n; i++ {
		send(t, env, "m"+strconv.Itoa(i))
		waitUntil(t, "message "+strconv.Itoa(i), func() bool { return handled() == i+1 })
	}
	receives, messages := p.Stats()
	// Each message is one receive; a long poll that ran out its 2 s in the
	// meantime adds an empty one (a loaded machine could see a few).
	if messages != n || receives > n+3 {
		t.Fatalf("%d messages sent one at a time took %d receives returning %d messages; want %d receives at most", n, receives, messages, n+3)
	}
	mu.Lock()
	for body, times := range seen {
		if times != 1 {
			t.Errorf("%s handled %d times", body, times)
		}
	}
	mu.Unlock()
	waitUntil(t, "the queue to be empty", func() bool { return queueDepth(t, env) == 0 })
}

// The invocations still run concurrently, up to Concurrency: three batches
// of one message are all in the handler at once.
func TestPollerInvokesConcurrently(t *testing.T) {
	env := testenv.New(t)
	const concurrency = 3
	handle, inHandler, all := barrier(concurrency)
	_, _ = startPoller(t, env, concurrency, 1, handle)
	for i := 0; i < concurrency; i++ {
		send(t, env, "c"+strconv.Itoa(i))
	}
	select {
	case <-all:
	case <-time.After(25 * time.Second):
		t.Fatalf("only %d of %d batches were in the handler at once", inHandler.Load(), concurrency)
	}
}

// barrier is a deliver function that holds each invocation until n are in
// it; all is closed then, and inHandler counts the invocations.
func barrier(n int64) (handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), inHandler *atomic.Int64, all chan struct{}) {
	inHandler, all = &atomic.Int64{}, make(chan struct{})
	var once sync.Once
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		if inHandler.Add(1) == n {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
		case <-time.After(20 * time.Second): // only so that a broken poller fails instead of hanging
		}
		return events.SQSEventResponse{}, nil
	}, inHandler, all
}

func queueDepth(t *testing.T, env *testenv.Env) int {
	out, err := env.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(env.Queues.Delivery),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Attributes {
		k, _ := strconv.Atoi(v)
		n += k
	}
	return n
}

// The messages of invocations that end together are deleted together, and
// those handled as the poller stops are deleted before Run returns.
func TestPollerDeletesTheMessagesOfInvocationsThatEndTogether(t *testing.T) {
	env := testenv.New(t)
	const concurrency = 6
	handle, _, all := barrier(concurrency)
	p, stop := startPoller(t, env, concurrency, 1, handle)
	for i := 0; i < concurrency; i++ {
		send(t, env, "d"+strconv.Itoa(i))
	}
	<-all
	stop() // the poller stops as the six invocations end
	if n := p.Deletes(); n < 1 || n >= concurrency {
		t.Fatalf("%d invocations ending together took %d deletes, want fewer than one each", concurrency, n)
	}
	if d := queueDepth(t, env); d != 0 {
		t.Fatalf("%d messages left after Run returned, want all %d deleted", d, concurrency)
	}
}

// With a batching window (the paced lane's mapping), messages that arrive
// within the window after the first are handed over in one invocation, more
// than ten of them, and all are deleted (ten a DeleteMessageBatch).
func TestPollerGathersABatchOverItsWindow(t *testing.T) {
	env := testenv.New(t)
	var mu sync.Mutex
	var batches []int
	p, stop := startPoller(t, env, 1, 100, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, len(ev.Records))
		return events.SQSEventResponse{}, nil
	}, 2*time.Second)
	const n = 25
	for i := range n {
		send(t, env, "w"+strconv.Itoa(i))
		time.Sleep(20 * time.Millisecond) // 0.5 s in all: within the window
	}
	waitUntil(t, "all handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		sum := 0
		for _, b := range batches {
			sum += b
		}
		return sum == n
	})
	stop()
	if len(batches) != 1 {
		t.Fatalf("batches %v, want all %d messages in one invocation", batches, n)
	}
	if d := queueDepth(t, env); d != 0 || p.Deletes() < 3 {
		t.Fatalf("%d messages left, %d deletes: want all deleted, ten a call", d, p.Deletes())
	}
}
