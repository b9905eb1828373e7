package sweep_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
	"github.com/gifq/webhooks/shared/sweep"
)

var ctx = context.Background()

// rig is a table and a delivery queue with no consumer, and a sweeper whose
// clock runs an hour ahead, so every delivery is overdue by its grace.
type rig struct {
	env *testenv.Env
	st  *store.Store
	q   *queue.Queue
	sw  *sweep.Sweeper
}

func newRig(t *testing.T) rig {
	env := testenv.New(t)
	st := store.New(env.DB, env.Table)
	q := queue.New(env.SQS, env.Queues.Delivery, env.Queues.DLQ)
	sw := &sweep.Sweeper{Store: st, Queue: q, MaxAttempts: 8, Grace: 5 * time.Minute,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"),
		Now: func() time.Time { return time.Now().Add(time.Hour) }}
	return rig{env: env, st: st, q: q, sw: sw}
}

// deliveries stores n pending deliveries of one event, due now, and
// returns them; its endpoint is healthy.
func (r rig) deliveries(t *testing.T, n int) []domain.Delivery {
	t.Helper()
	return r.deliveriesTo(t, n, false)
}

// deliveriesTo is deliveries to an endpoint that is failing, if failing.
func (r rig) deliveriesTo(t *testing.T, n int, failing bool) []domain.Delivery {
	t.Helper()
	acct, err := r.st.CreateAccount(ctx, "sweep", 0)
	if err != nil {
		t.Fatal(err)
	}
	ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: acct.ID, URL: "https://hooks.example.com/x", Secrets: []domain.Secret{{Value: "whsec_x"}}}
	if failing {
		ep.FailingSince = domain.Millis(time.Now().Add(-time.Minute))
	}
	if err := r.st.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ev := domain.Event{ID: domain.NewID("evt"), AccountID: acct.ID, Type: "payout.fulfilled", Body: []byte(`{"event":"payout.fulfilled"}`),
		ReceivedAt: domain.Millis(now), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	ne := store.NewEvent{Event: ev}
	for i := 0; i < n; i++ {
		d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: acct.ID, EventType: ev.Type,
			Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: domain.Millis(now), CreatedAt: domain.Millis(now),
			UpdatedAt: domain.Millis(now), ExpiresAt: ev.ExpiresAt}
		ne.Deliveries = append(ne.Deliveries, d)
		ne.Event.DeliveryIDs = append(ne.Event.DeliveryIDs, d.ID)
		ne.DueAt = append(ne.DueAt, domain.Millis(now))
	}
	if _, err := r.st.CreateEvent(ctx, ne); err != nil {
		t.Fatal(err)
	}
	return ne.Deliveries
}

// queued is how many messages the delivery queue holds, waiting.
func (r rig) queued(t *testing.T) int {
	t.Helper()
	out, err := r.env.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &r.env.Queues.Delivery,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	return n
}

// Issue 24, break 5: over a queue whose consumers are behind, every sweep
// took the overdue deliveries for lost and re-queued them: 3 deliveries
// became 9 messages after two sweeps. Now N deliveries with their messages
// still waiting stay N messages after any number of sweeps.
func TestABacklogIsNotMultipliedBySweeps(t *testing.T) {
	r := newRig(t)
	const n = 3
	for _, d := range r.deliveries(t, n) {
		if err := r.q.Send(ctx, queue.For(d), 0); err != nil {
			t.Fatal(err)
		}
	}
	for sweep := 1; sweep <= 3; sweep++ {
		res, err := r.sw.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Requeued != 0 || res.Deferred != n || res.Backlog != n {
			t.Fatalf("sweep %d over a backlog of %d: %+v, want nothing re-queued", sweep, n, res)
		}
	}
	if got := r.queued(t); got != n {
		t.Fatalf("%d deliveries are %d messages after three sweeps, want %d", n, got, n)
	}
}

// A backlog on the paced lane (an account over its rate whose messages wait
// there for their slots, past their due times) is a backlog too: the
// sweeper re-queues nothing over it.
func TestAPacedLaneBacklogIsNotMultipliedBySweeps(t *testing.T) {
	r := newRig(t)
	r.q.WithPacedLane(r.env.Queues.Paced)
	const n = 3
	for _, d := range r.deliveries(t, n) {
		m := queue.For(d)
		m.Lane = queue.LanePaced
		if err := r.q.Send(ctx, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != 0 || res.Backlog != n {
		t.Fatalf("a sweep over a paced lane backlog of %d: %+v %v, want nothing re-queued", n, res, err)
	}
	if got := r.queued(t); got != 0 {
		t.Fatalf("%d messages on the delivery queue, want none", got)
	}
}

// A backlog on the slow lane (an outage past its concurrency) holds back
// only the overdue deliveries of endpoints on it, whose messages most
// likely wait there: a healthy endpoint's lost message is re-queued all
// the same, and the failing one's backlog is not multiplied by the sweeps.
func TestASlowLaneBacklogHoldsBackOnlyItsEndpoints(t *testing.T) {
	r := newRig(t)
	r.q.WithSlowLane(r.env.Queues.Slow)
	failing := r.deliveriesTo(t, 2, true)
	for _, d := range failing {
		m := queue.For(d)
		m.Lane = queue.LaneSlow
		if err := r.q.Send(ctx, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	healthy := r.deliveries(t, 1) // its message lost
	res, err := r.sw.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.SlowBacklog != 2 || res.Deferred != 2 || res.Requeued != 1 {
		t.Fatalf("%+v, want the healthy delivery re-queued, the 2 failing ones deferred", res)
	}
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != 0 {
		t.Fatalf("second sweep: %+v %v, want nothing re-queued", res, err)
	}
	if got := r.queued(t); got != len(healthy) {
		t.Fatalf("%d messages on the delivery queue, want the healthy one's", got)
	}
	if n, err := r.q.SlowBacklog(ctx); err != nil || n != len(failing) {
		t.Fatalf("slow lane: %d messages (%v), want the %d sent", n, err, len(failing))
	}
}

// The sweeper's first job still holds: deliveries whose messages were lost
// (a queue with no backlog) are re-queued, once each, and a second sweep
// finds them moving (their due time is now) and sends nothing more.
func TestLostMessagesAreRequeuedOnce(t *testing.T) {
	r := newRig(t)
	const n = 3
	r.deliveries(t, n) // durable, their sends lost
	res, err := r.sw.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requeued != n || res.Backlog != 0 {
		t.Fatalf("first sweep: %+v, want %d re-queued", res, n)
	}
	if got := r.queued(t); got != n {
		t.Fatalf("%d messages after the re-queue, want %d", got, n)
	}
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != 0 {
		t.Fatalf("second sweep: %+v %v, want nothing re-queued", res, err)
	}
	if got := r.queued(t); got != n {
		t.Fatalf("%d messages after a second sweep, want %d", got, n)
	}
}
