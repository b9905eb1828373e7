package delivery

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// spacedLimiter books each reservation at the moment it is made, for an
// account whose slots are apart: its rate is known (lifecycle.CapNow), and
// every slot is usable at once (whole-second pacing sends a slot's
// delivery as soon as its second has begun).
type spacedLimiter struct {
	nowLimiter
	apart time.Duration
}

func (l *spacedLimiter) Reserve(context.Context, string, int, float64) (ratelimit.Reservation, error) {
	return ratelimit.Reservation{First: time.Now(), Interval: l.apart}, nil
}

// batchOf hands the worker n messages to the rig's endpoint in one batch.
func batchOf(t *testing.T, r *rig, n int) {
	t.Helper()
	var recs []events.SQSMessage
	for i := 0; i < n; i++ {
		raw, _ := json.Marshal(queue.For(r.addDelivery()))
		recs = append(recs, events.SQSMessage{MessageId: "m" + string(rune('a'+i)), Body: string(raw), Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	delete(r.st.deliveries, r.d.ID)
	// Not near a second's end: a slot booked in one second and claimed in
	// the next is too late for its second (whole-second pacing) and goes
	// back for a new one; begun 3 ms before a second's end, all 6 did.
	if left := time.Until(time.Now().Truncate(time.Second).Add(time.Second)); left < time.Second/2 {
		time.Sleep(left)
	}
	resp, err := r.w.Handle(context.Background(), events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 || len(r.q.sent) != 0 {
		t.Fatalf("handle: %v, %d failures, %d put back", err, len(resp.BatchItemFailures), len(r.q.sent))
	}
	if len(r.recv.got) != n {
		t.Fatalf("%d POSTs for %d messages", len(r.recv.got), n)
	}
	if ep := r.st.endpoints[r.d.AccountID+"/"+r.d.EndpointID]; len(ep.Leases) != 0 {
		t.Fatalf("slots still held after the batch: %v", ep.Leases)
	}
}

// A batch to one endpoint whose attempts go one at a time (a cap of 1):
// the pool takes one slot, in one write, for the first; each later message
// uses it again (its route read strongly alongside the claim), and the
// batch frees it in one write. Before, each message took and freed a slot
// of its own: two writes a delivery.
func TestABatchToOneEndpointTakesItsSlotOnceAndFreesItOnce(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight = 1
	r.w.Limiter = &spacedLimiter{apart: 200 * time.Millisecond}
	batchOf(t, r, 6)
	if r.st.slotTakes != 1 || r.st.slotFrees != 1 || r.st.routeReads != 5 {
		t.Fatalf("6 messages paced at 5/s: %d slot takes, %d frees, %d route reads; want 1, 1, 5", r.st.slotTakes, r.st.slotFrees, r.st.routeReads)
	}
}

// slowTakes takes slots as a write over the network does: not at once.
type slowTakes struct{ *memStore }

func (s slowTakes) TakeSlots(ctx context.Context, endpointID string, t store.SlotTake) ([]string, error) {
	time.Sleep(10 * time.Millisecond)
	return s.memStore.TakeSlots(ctx, endpointID, t)
}

// A batch whose attempts overlap (its rate allows them at once, the
// endpoint answers slowly) takes more slots only as it needs them: the
// first message's take, then one take for every message that came during
// it; never more POSTs at once than the cap, and one free.
func TestABatchWhoseAttemptsOverlapTakesForTheWaitersTogether(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight = 4
	r.w.Store = slowTakes{r.st}
	busy := &busyReceiver{receiver: r.recv, pause: 20 * time.Millisecond}
	r.w.Sender = busy
	batchOf(t, r, 10)
	if r.st.slotTakes > 2 || r.st.slotFrees != 1 || busy.mostSeen > 4 {
		t.Fatalf("10 overlapping messages, cap 4: %d slot takes, %d frees, %d POSTs at once; want at most 2 takes, one free, at most 4 at once",
			r.st.slotTakes, r.st.slotFrees, busy.mostSeen)
	}
}

// ENDPOINT_CAP=whenSlow: a healthy endpoint's attempts take no slot (the
// endpoint read again alongside each claim instead); an attempt still
// waiting for its answer after lifecycle.SlowWatch marks the endpoint
// slow, and the next batch's attempts take slots.
func TestTheCapWhenSlowTakesSlotsOnlyOnceTheEndpointIsSlow(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight, r.w.CapWhenSlow = 5, true
	r.w.Limiter = &spacedLimiter{apart: 200 * time.Millisecond} // 5/s: at most 10 over the cap before the mark
	batchOf(t, r, 3)
	if r.st.slotTakes != 0 || r.st.slotFrees != 0 || r.st.slowMarks != 0 {
		t.Fatalf("a healthy endpoint: %d slot takes, %d frees, %d marks; want none", r.st.slotTakes, r.st.slotFrees, r.st.slowMarks)
	}
	r.recv.got = nil
	slow := &busyReceiver{receiver: r.recv, pause: lifecycle.SlowWatch + 200*time.Millisecond}
	r.w.Sender = slow
	batchOf(t, r, 1)
	if r.st.slowMarks != 1 || r.st.slotTakes != 0 {
		t.Fatalf("an attempt answered after %v: %d marks, %d slot takes; want the endpoint marked, no slot", slow.pause, r.st.slowMarks, r.st.slotTakes)
	}
	r.w.Sender = r.recv
	r.recv.got = nil
	batchOf(t, r, 2)
	if r.st.slotTakes == 0 || r.st.slotFrees != 1 || r.st.slowMarks != 1 {
		t.Fatalf("a slow endpoint: %d slot takes, %d frees, %d marks; want its slots taken and freed", r.st.slotTakes, r.st.slotFrees, r.st.slowMarks)
	}
}
