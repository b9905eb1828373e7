package e2e

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// lossySQS loses the producer-side sends while lose is set, as if the api
// function died between its DynamoDB write and its SQS send.
type lossySQS struct {
	app.SQS
	lose atomic.Bool
}

func (l *lossySQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if l.lose.Load() {
		return nil, errors.New("injected fault: connection reset")
	}
	return l.SQS.SendMessageBatch(ctx, in, o...)
}

func TestLostSendIsRecoveredBySweeper(t *testing.T) {
	t.Parallel()
	localOnly(t)
	lossy := &lossySQS{}
	h := start(t, opts{sweepEvery: time.Second, sweepGrace: 2 * time.Second, wrapSQS: func(q app.SQS) app.SQS { lossy.SQS = q; return lossy }})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(200))
	lossy.lose.Store(true)
	ev := h.publish(t, key, payout) // durable, but its message is lost
	lossy.lose.Store(false)
	if d := h.delivery(t, key, ev.Deliveries[0].ID); d.Status != "pending" {
		t.Fatalf("delivery %+v", d)
	}
	d := h.waitFor(t, key, ev.Deliveries[0].ID, 20*time.Second, settled)
	if d.Status != "delivered" || d.AttemptCount != 1 || len(rv.requests()) != 1 {
		t.Fatalf("after the sweep: %+v, %d requests", d, len(rv.requests()))
	}
}

// A delivery whose 8th attempt was claimed by a worker that died is failed
// and dead-lettered by the sweep, never tried a 9th time.
func TestSweeperDeadLettersADeliveryThatUsedItsAttempts(t *testing.T) {
	t.Parallel()
	localOnly(t)
	h := start(t, opts{sweepGrace: time.Millisecond})
	acct, key := h.account(t)
	rv, ep := h.registerReceiver(t, key, always(200))
	// Written without a queue message, then claimed eight times by "workers"
	// whose leases ran out at once: eight attempts used, none recorded.
	d := pendingWithoutMessage(t, h, acct, ep.ID)
	var err error
	for i := 0; i < 8; i++ {
		if d, err = h.store.ClaimAttempt(ctx, d, store.Claim{ID: domain.NewID("clm"), LeaseUntil: time.Now().UnixMilli() - 1}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	res, err := h.app.Sweeper().Run(ctx)
	if err != nil || res.DeadLettered != 1 || res.Requeued != 0 {
		t.Fatalf("sweep: %+v %v", res, err)
	}
	got := h.delivery(t, key, d.ID)
	if got.Status != "failed" || got.FailReason != string(domain.ReasonExhausted) || got.AttemptCount != 8 {
		t.Fatalf("delivery %+v", got)
	}
	if dl := h.dlqOf(t, d.ID); len(dl) != 1 || dl[0].Reason != domain.ReasonExhausted {
		t.Fatalf("DLQ %+v", dl)
	}
	// A second sweep finds nothing; the receiver never heard of it.
	if res, err := h.app.Sweeper().Run(ctx); err != nil || res.Found != 0 {
		t.Fatalf("second sweep: %+v %v", res, err)
	}
	time.Sleep(time.Second)
	if n := len(rv.requests()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// A backlog that waits for the rate limit longer than the sweep grace is not
// stuck: the sweeper must leave it alone rather than re-queue it (which
// would supersede the waiting messages, waste their slots and, under a long
// enough backlog, never let it drain).
//
// Not parallel: the grace is short for a test's sake, and the first pick-up
// of a re-queued message must not lag it because of other tests' load.
func TestLongRateLimitBacklogIsNotSwept(t *testing.T) {
	localOnly(t)
	const n = 50 // 10 s of slots at 5/s, more than three times the grace
	h := start(t, opts{rate: 5, sweepEvery: 500 * time.Millisecond, sweepGrace: 3 * time.Second})
	_, key := h.account(t)
	var s scripted
	rv, ep := h.registerReceiver(t, key, s.respond(404))
	events := h.publishMany(t, key, n)
	for _, ev := range events {
		h.waitFor(t, key, ev.Deliveries[0].ID, 30*time.Second, settled)
	}
	s.ok.Store(true)
	// Recovering re-queues all at once, without slots: the workers reserve
	// them, up to 10 s ahead.
	var res struct{ Recovered int }
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", map[string]string{"since": time.Now().Add(-time.Hour).Format(time.RFC3339)}, &res); code != 202 || res.Recovered != n {
		t.Fatalf("recover: %d %+v", code, res)
	}
	waitCount(t, "recovered deliveries", 2*n, time.Minute, func() int { return len(rv.requests()) })
	time.Sleep(time.Second)
	for _, ev := range events {
		d, err := h.store.GetDelivery(ctx, ev.Deliveries[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != "delivered" || d.Gen != 2 {
			t.Errorf("delivery %s: %s, gen %d (the recover makes gen 2; more means the sweeper re-queued it)", d.ID, d.Status, d.Gen)
		}
	}
	if got := len(rv.requests()); got != 2*n {
		t.Fatalf("receiver got %d requests, want %d", got, 2*n)
	}
}
