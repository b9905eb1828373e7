package e2e

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
)

// parkingOpts compress design BC the way RETRY_SCHEDULE compresses the
// retries: a wait over 2 s is parked (the stack: over 15 min) and the
// scheduler looks 1 s ahead (the stack: 2 min).
func parkingOpts(calls *testenv.Calls, wrap func(app.SQS) app.SQS) opts {
	return opts{retry: "1s,4s", calls: calls, wrapSQS: wrap,
		env: map[string]string{"PARK_AFTER": "2s", "SCHEDULE_AHEAD": "1s"}}
}

// scheduleEvery runs the scheduler (the sweeper function's schedule mode)
// on a timer for the test's length, like the stack's 1-minute rule.
func scheduleEvery(t *testing.T, h *harness, every time.Duration) {
	t.Helper()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sctx.Err() == nil {
			_, _ = h.app.Scheduler().Run(sctx)
			select {
			case <-sctx.Done():
			case <-time.After(every):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// A delivery whose retries wait 1 s (a delayed copy) and 4 s
// (parked, then sent by the scheduler delayed to its time) is delivered on
// its third attempt, and no wait asked SQS to change a message's
// visibility. Its generation went up once: the scheduler's unpark.
func TestLongWaitsAreParkedAndScheduledWithoutVisibility(t *testing.T) {
	t.Parallel()
	localOnly(t)
	ownSchedule(t, "1s,4s")
	calls := testenv.NewCalls()
	h := start(t, parkingOpts(calls, nil))
	scheduleEvery(t, h, 300*time.Millisecond)
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, func(n int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if n <= 2 {
			return 503, "down"
		}
		return 200, ""
	})
	ev := h.publish(t, key, payout)
	d := h.waitFor(t, key, ev.Deliveries[0].ID, 30*time.Second, settled)
	if d.Status != "delivered" || d.AttemptCount != 3 || len(rv.requests()) != 3 {
		t.Fatalf("delivery %+v after %d requests", d, len(rv.requests()))
	}
	got, err := h.store.GetDelivery(ctx, d.ID)
	if err != nil || got.Gen != 2 {
		t.Fatalf("gen %d (%v): want 2, the one unpark", got.Gen, err)
	}
	if n := calls.Snapshot()["SQS.ChangeMessageVisibility"]; n != 0 {
		t.Fatalf("%d ChangeMessageVisibility calls; no wait may hide a message", n)
	}
	// The third attempt came no earlier than the 4 s wait after the second.
	reqs := rv.requests()
	if gap := reqs[2].at.Sub(reqs[1].at); gap < 4*time.Second {
		t.Fatalf("the parked retry went %v after the second attempt, before its 4 s", gap)
	}
}

// failingSends fails every send to the delivery queue (SendMessageBatch,
// which queue.Send and SendAll make) while fail is set: the scheduler dies,
// as far as the delivery is concerned, between its unpark and its send.
type failingSends struct {
	app.SQS
	fail atomic.Bool
}

func (f *failingSends) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if f.fail.Load() {
		return nil, errors.New("injected fault: connection reset")
	}
	return f.SQS.SendMessageBatch(ctx, in, o...)
}

// A scheduler run that unparks a delivery and then cannot send its message
// loses nothing: the delivery's due time is in the sweep index and the
// sweeper re-queues it. A second scheduler run does not send it again.
func TestUnparkedButUnsentIsRecoveredBySweeper(t *testing.T) {
	t.Parallel()
	localOnly(t)
	ownSchedule(t, "1s,4s")
	fs := &failingSends{}
	o := parkingOpts(nil, func(q app.SQS) app.SQS { fs.SQS = q; return fs })
	o.retry, o.sweepGrace = "5s", 500*time.Millisecond
	h := start(t, o)
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, func(n int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if n == 1 {
			return 500, ""
		}
		return 200, ""
	})
	ev := h.publish(t, key, payout)
	id := ev.Deliveries[0].ID
	// Attempt 1 fails; its 5 s retry is parked.
	h.waitFor(t, key, id, 10*time.Second, func(d deliveryOut) bool { return d.AttemptCount == 1 && d.LastStatus == 500 })
	var res struct{ sent, unsent int }
	deadline := time.Now().Add(20 * time.Second)
	fs.fail.Store(true)
	for res.unsent == 0 && time.Now().Before(deadline) {
		r, err := h.app.Scheduler().Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res.sent, res.unsent = res.sent+r.Sent, res.unsent+r.Unsent
		time.Sleep(200 * time.Millisecond)
	}
	fs.fail.Store(false)
	if res.unsent != 1 || res.sent != 0 {
		t.Fatalf("scheduler: %+v; want one unparked and unsent", res)
	}
	if r, err := h.app.Scheduler().Run(ctx); err != nil || r.Found != 0 {
		t.Fatalf("a second scheduler run found %+v (%v): it would send it again", r, err)
	}
	time.Sleep(7 * time.Second) // past its due time and the sweep grace
	if len(rv.requests()) != 1 {
		t.Fatalf("%d requests before the sweep", len(rv.requests()))
	}
	if r, err := h.app.Sweeper().Run(ctx); err != nil || r.Requeued != 1 {
		t.Fatalf("sweep: %+v %v", r, err)
	}
	d := h.waitFor(t, key, id, 10*time.Second, settled)
	if d.Status != "delivered" || d.AttemptCount != 2 || len(rv.requests()) != 2 {
		t.Fatalf("delivery %+v after %d requests", d, len(rv.requests()))
	}
}
