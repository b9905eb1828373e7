package delivery

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// busyReceiver answers each POST after a pause and tracks how many are in
// flight at once.
type busyReceiver struct {
	*receiver
	pause         time.Duration
	mu            sync.Mutex
	now, mostSeen int
}

func (b *busyReceiver) Send(ctx context.Context, req destination.Request) destination.Outcome {
	b.mu.Lock()
	b.now++
	b.mostSeen = max(b.mostSeen, b.now)
	b.mu.Unlock()
	time.Sleep(b.pause)
	b.mu.Lock()
	b.now--
	b.mu.Unlock()
	return b.receiver.Send(ctx, req)
}

// A batch of six messages to one endpoint with a cap of 2: two claim, the
// other four wait in the worker, and each holder, once answered, hands its
// slot to the oldest waiter. All six are delivered in the one invocation,
// never more than 2 POSTs at once, and none goes back to the queue (before,
// the four that found the cap full each went back for a second or more),
// nor loses a slot's race to another message of the batch.
func TestBatchBeyondTheCapIsServedByHandingSlotsOver(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight = 2
	busy := &busyReceiver{receiver: r.recv, pause: 20 * time.Millisecond}
	r.w.Sender = busy
	var recs []events.SQSMessage
	for i := 0; i < 6; i++ {
		raw, _ := json.Marshal(queue.For(r.addDelivery()))
		recs = append(recs, events.SQSMessage{MessageId: "m" + string(rune('a'+i)), Body: string(raw), Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	delete(r.st.deliveries, r.d.ID) // only the six
	resp, err := r.w.Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("handle: %v, %d failures", err, len(resp.BatchItemFailures))
	}
	if len(r.recv.got) != 6 || len(r.q.sent) != 0 {
		t.Fatalf("%d POSTs and %d messages put back for 6 deliveries, want 6 and 0", len(r.recv.got), len(r.q.sent))
	}
	if busy.mostSeen > 2 {
		t.Fatalf("%d POSTs in flight at once through a cap of 2", busy.mostSeen)
	}
	if r.st.slotsLost != 0 {
		// The six read both slots free at once; each picks one no claim
		// here holds or is taking, or waits for a handoff.
		t.Fatalf("%d claims lost a slot to another claim of the same batch", r.st.slotsLost)
	}
	for id, d := range r.st.deliveries {
		if d.Status != domain.StatusDelivered {
			t.Errorf("delivery %s is %s", id, d.Status)
		}
	}
	ep := r.st.endpoints[r.d.AccountID+"/"+r.d.EndpointID]
	if len(ep.Leases) != 0 {
		t.Fatalf("slots still held after the batch: %v", ep.Leases)
	}
}

// slotTakenOnce answers the first claim as if another worker had just taken
// its slot.
type slotTakenOnce struct {
	*memStore
	once sync.Once
}

func (s *slotTakenOnce) TakeSlots(ctx context.Context, endpointID string, t store.SlotTake) ([]string, error) {
	s.once.Do(func() { // another worker takes it a moment before this take
		s.mu.Lock()
		k := s.endpointKey(endpointID)
		ep := s.endpoints[k]
		ep.Leases = map[string]domain.Lease{t.Slots[0]: {Until: domain.Millis(time.Now().Add(time.Minute)), Claim: "clm_other"}}
		s.endpoints[k] = ep
		s.mu.Unlock()
	})
	return s.memStore.TakeSlots(ctx, endpointID, t)
}

// A slot seen free but taken a moment ago: the worker claims another one it
// saw free (the endpoint read once, alongside the first claim), and delivers.
func TestClaimLosingASlotTriesAnotherSeenFree(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight = 2
	r.w.Store = &slotTakenOnce{memStore: r.st}
	finished := make(chan struct{})
	go func() { handleOne(t, r.w, queue.For(r.d)); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("the worker never finished after losing a slot")
	}
	if got := r.st.deliveries[r.d.ID]; got.Status != domain.StatusDelivered || len(r.recv.got) != 1 {
		t.Fatalf("delivery %s after %d POSTs", got.Status, len(r.recv.got))
	}
}

// slowLimiter books every slot far ahead, after a pause.
type slowLimiter struct {
	nowLimiter
	pause time.Duration
}

func (l *slowLimiter) Reserve(ctx context.Context, account string, n int, rate float64) (ratelimit.Reservation, error) {
	time.Sleep(l.pause)
	return l.nowLimiter.Reserve(ctx, account, n, rate)
}

// A retry whose new rate slot is far never holds the endpoint's one slot
// (it books before it claims): a first attempt of the same batch is
// delivered in the same invocation, and only the retry goes back.
func TestARetryWithAFarRateSlotLeavesTheEndpointSlotToAnother(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight = 1
	lim := &slowLimiter{pause: 100 * time.Millisecond}
	lim.after = 2 * time.Second // its second later than a worker waits (pace.MaxEarly)
	r.w.Limiter = lim
	retry := r.addDelivery() // a retry: it books a new rate slot, and that slot is far
	retry.Attempts = 2
	r.st.deliveries[retry.ID] = retry
	first := r.addDelivery() // a first attempt, its slot booked at ingest a moment ahead
	delete(r.st.deliveries, r.d.ID)
	mFirst := queue.For(first)
	mFirst.SlotAt, mFirst.SlotFor = domain.Millis(firstSlot(time.Now(), 0)), first.Attempts
	var recs []events.SQSMessage
	for i, m := range []queue.Message{queue.For(retry), mFirst} {
		raw, _ := json.Marshal(m)
		recs = append(recs, events.SQSMessage{MessageId: "m" + string(rune('a'+i)), Body: string(raw), Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	if _, err := r.w.Handle(context.Background(), events.SQSEvent{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if got := r.st.deliveries[first.ID]; got.Status != domain.StatusDelivered || len(r.recv.got) != 1 {
		t.Fatalf("the waiting first attempt: %s after %d POSTs; want delivered with the slot given back", got.Status, len(r.recv.got))
	}
	if len(r.q.sent) != 1 || r.q.sent[0].DeliveryID != retry.ID || r.st.yields != 0 {
		t.Fatalf("%d messages put back, %d claims given back; want the retry's alone, for its far slot, with no claim taken", len(r.q.sent), r.st.yields)
	}
	if ep := r.st.endpoints[r.d.AccountID+"/"+r.d.EndpointID]; len(ep.Leases) != 0 {
		t.Fatalf("slots still held after the batch: %v", ep.Leases)
	}
}
