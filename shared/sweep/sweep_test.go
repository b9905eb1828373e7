package sweep_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
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
	url string // the endpoints' URL ("": one that is never called)
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
	if r.url != "" {
		ep.URL = r.url
	}
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

// Consumers behind: a delivery overdue by the grace gets a new message
// (and the older one, still waiting, becomes a stale generation), at most
// one per grace however often the sweeper runs, and its overdue age is not
// reset by the re-queue: the oldest-overdue metric keeps growing while it
// stays stuck.
func TestAStuckDeliveryGetsOneMessageAGraceAndKeepsItsAge(t *testing.T) {
	r := newRig(t)
	const n = 3
	for _, d := range r.deliveries(t, n) {
		if err := r.q.Send(ctx, queue.For(d), 0); err != nil {
			t.Fatal(err)
		}
	}
	first, err := r.sw.Run(ctx)
	if err != nil || first.Requeued != n || first.OldestOverdue < time.Hour.Seconds()-60 {
		t.Fatalf("first sweep: %+v %v, want %d re-queued, about an hour overdue", first, err, n)
	}
	// The re-queue moved their entries to its time: a window within the
	// grace of it does not read them.
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != 0 || res.Found != 0 {
		t.Fatalf("a second sweep within the grace: %+v %v, want nothing found or re-queued", res, err)
	}
	if got := r.queued(t); got != 2*n {
		t.Fatalf("%d messages after two sweeps, want %d (one extra each)", got, 2*n)
	}
	r.sw.Now = func() time.Time { return time.Now().Add(time.Hour + r.sw.Grace + time.Minute) }
	res, err := r.sw.Run(ctx)
	if err != nil || res.Requeued != n || res.OldestOverdue <= first.OldestOverdue {
		t.Fatalf("a sweep a grace later: %+v %v, want %d re-queued again, older than %.0f s", res, err, n, first.OldestOverdue)
	}
}

// The sweeper's first job: deliveries whose messages were lost are
// re-queued, once each; a second sweep within the grace sends nothing more.
func TestLostMessagesAreRequeuedOnce(t *testing.T) {
	r := newRig(t)
	const n = 3
	r.deliveries(t, n) // durable, their sends lost
	res, err := r.sw.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requeued != n {
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

// refuseOne is the real queue refusing the sends of the first delivery it
// is asked to send (times times; 0: every time), as SQS refuses one after
// the SDK's retries.
type refuseOne struct {
	sweep.Queue
	mu      sync.Mutex
	id      string
	times   int
	refused int
}

func (q *refuseOne) Send(ctx context.Context, m queue.Message, d time.Duration) error {
	q.mu.Lock()
	if q.id == "" {
		q.id = m.DeliveryID
	}
	refuse := m.DeliveryID == q.id && (q.times == 0 || q.refused < q.times)
	if refuse {
		q.refused++
	}
	q.mu.Unlock()
	if refuse {
		return errors.New("InternalError: injected")
	}
	return q.Queue.Send(ctx, m, d)
}

// A re-queue refused once is sent again in the same run.
func TestARefusedSendIsSentAgainInTheRun(t *testing.T) {
	r := newRig(t)
	const n = 4
	r.deliveries(t, n)
	q := &refuseOne{Queue: r.q, times: 1}
	r.sw.Queue = q
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != n || q.refused != 1 {
		t.Fatalf("one send refused once: %+v %v (%d refused), want all %d re-queued", res, err, q.refused, n)
	}
	if got := r.queued(t); got != n {
		t.Fatalf("%d messages queued, want %d", got, n)
	}
}

// One delivery's re-queue refused on every try does not stop the sweep of
// the rest: every other overdue delivery, in its shard too, is re-queued in
// the same run, and the run reports the error.
func TestARefusedSendDoesNotStopTheSweep(t *testing.T) {
	r := newRig(t)
	const n = 48 // three a shard on average: the refused one has others in its shard
	r.deliveries(t, n)
	r.sw.Queue = &refuseOne{Queue: r.q}
	res, err := r.sw.Run(ctx)
	if err == nil {
		t.Fatal("a refused send: the run reports no error")
	}
	if res.Requeued != n-1 {
		t.Fatalf("one send refused: %d of %d re-queued, want %d (%+v)", res.Requeued, n, n-1, res)
	}
	if got := r.queued(t); got != n-1 {
		t.Fatalf("%d messages queued, want %d", got, n-1)
	}
}

// throttleFirst is the real store with the Requeue of the first delivery
// it is asked to re-queue throttled, times times.
type throttleFirst struct {
	sweep.Store
	times int
	mu    sync.Mutex
	id    string
	calls int
}

func (s *throttleFirst) Requeue(ctx context.Context, id string, before, at int64, maxAttempts int) (domain.Delivery, error) {
	s.mu.Lock()
	if s.id == "" {
		s.id = id
	}
	throttled := id == s.id && s.calls < s.times
	if throttled {
		s.calls++
	}
	s.mu.Unlock()
	if throttled {
		return domain.Delivery{}, errors.New("ProvisionedThroughputExceededException: injected")
	}
	return s.Store.Requeue(ctx, id, before, at, maxAttempts)
}

// A re-queue throttled once is tried again within the run: left to the next
// run, a delivery whose send was lost, past its deadline, was final a whole
// interval later (the soak: two runs in a row throttled, 30 s past its
// deadline).
func TestAThrottledRequeueIsTriedAgainInTheRun(t *testing.T) {
	r := newRig(t)
	const n = 4
	r.deliveries(t, n)
	st := &throttleFirst{Store: r.st, times: 1}
	r.sw.Store = st
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != n || st.calls != 1 {
		t.Fatalf("one re-queue throttled once: %+v %v (%d throttled), want all %d re-queued", res, err, st.calls, n)
	}
}

// A delivery whose re-queue failed on every try is read again by the next
// run: its shard's mark stays at it, though the rest of the shard was swept.
func TestAFailedRequeueIsSweptAgainNextRun(t *testing.T) {
	r := newRig(t)
	const n = 48
	r.deliveries(t, n)
	r.sw.Store = &throttleFirst{Store: r.st, times: 100}
	if res, err := r.sw.Run(ctx); err == nil || res.Requeued != n-1 {
		t.Fatalf("first run: %+v %v, want %d re-queued and the error", res, err, n-1)
	}
	r.sw.Store = r.st // the throttle is over
	res, err := r.sw.Run(ctx)
	if err != nil || res.Requeued != 1 {
		t.Fatalf("second run: %+v %v, want the one whose re-queue failed re-queued", res, err)
	}
}

// A re-queue whose write was taken but answered with a failed condition (a
// retry of it) still sends its message: taken for another run's re-queue,
// it sent none, and the delivery, past its deadline, waited a whole
// interval more (the simulated month: 29 min past its deadline).
func TestARequeueRetriedAfterItsWriteWasTakenSendsItsMessage(t *testing.T) {
	r := newRig(t)
	const n = 3
	ds := r.deliveries(t, n)
	r.sw.Store = store.New(testenv.WritesTwice{DynamoDB: r.env.DB}, r.env.Table)
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != n || r.queued(t) != n {
		t.Fatalf("re-queues retried after their writes were taken: %+v %v, %d messages, want %d re-queued and sent", res, err, r.queued(t), n)
	}
	if got, err := r.st.GetDelivery(ctx, ds[0].ID); err != nil || got.Gen != ds[0].Gen+1 {
		t.Fatalf("gen %d, %v: want bumped once, to %d", got.Gen, err, ds[0].Gen+1)
	}
}

// A scheduler run whose send of an unparked delivery is refused once sends
// it again within the run: left unsent, the delivery waited for the
// sweeper (its grace and up to an interval), which on a last attempt left
// it 14 minutes past its deadline in every simulated month.
func TestARefusedSendOfAParkIsTriedAgainInTheRun(t *testing.T) {
	r := newRig(t)
	const n = 3
	until := time.Now().Add(time.Minute)
	for _, d := range r.deliveries(t, n) {
		if err := r.st.ParkDelivery(ctx, d.ID, store.Park{Until: domain.Millis(until), Gen: d.Gen}); err != nil {
			t.Fatal(err)
		}
	}
	q := &refuseOne{Queue: r.q, times: 1}
	s := &sweep.Scheduler{Store: r.st, Queue: q, Ahead: 2 * time.Minute, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: time.Now}
	if res, err := s.Run(ctx); err != nil || res.Sent != n || res.Unsent != 0 || q.refused != 1 {
		t.Fatalf("one send refused once: %+v %v, want all %d sent", res, err, n)
	}
}
