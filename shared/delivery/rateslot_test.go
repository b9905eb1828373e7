package delivery

// Rate slots and the claim, and the worker's
// checks before the claim, with the in-memory stand-ins of worker_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// barrierStore holds every LoadForAttempt until n of them have been made:
// n workers read the endpoint before any of them claims.
type barrierStore struct {
	*memStore
	wg sync.WaitGroup
}

func (b *barrierStore) LoadForAttempt(ctx context.Context, r store.Ref) (store.Snapshot, error) {
	snap, err := b.memStore.LoadForAttempt(ctx, r)
	b.wg.Done()
	b.wg.Wait()
	return snap, err
}

// gatedReceiver blocks every POST until release is closed.
type gatedReceiver struct {
	*receiver
	release chan struct{}
}

func (g *gatedReceiver) Send(ctx context.Context, req destination.Request) destination.Outcome {
	<-g.release
	return g.receiver.Send(ctx, req)
}

// addDelivery puts one more pending delivery of the rig's event and endpoint.
func (r *rig) addDelivery() domain.Delivery {
	d := r.d
	d.ID = domain.NewID("dlv")
	r.st.deliveries[d.ID] = d
	return d
}

func handleOne(t *testing.T, w *Worker, m queue.Message) {
	t.Helper()
	raw, _ := json.Marshal(m)
	if _, err := w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-" + m.DeliveryID, Body: string(raw),
		Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}}); err != nil {
		t.Error(err)
	}
}

// Ten workers needing a fresh rate slot (retries: no slot booked
// at ingest) for one endpoint with one free in-flight slot reserved ten
// account slots and made one POST: the nine losing the cap threw theirs
// away (2 s of a 5/s budget), and the account's other endpoints waited
// behind them. Now a worker needing a new slot books it before its claim,
// and the ones losing the cap give theirs back (Limiter.Refund): the
// account is charged one slot for its one POST.
func TestWorkersLosingTheCapReserveNoRateSlot(t *testing.T) {
	const n = 10
	r := newRig(t, 200)
	r.w.MaxInFlight = 1
	gate := &gatedReceiver{receiver: r.recv, release: make(chan struct{})}
	r.w.Sender = gate
	bs := &barrierStore{memStore: r.st}
	bs.wg.Add(n)
	r.w.Store = bs
	var msgs []queue.Message
	for i := 0; i < n; i++ {
		d := r.addDelivery()
		d.Attempts = 1 // a retry: its message carries no slot for this attempt
		r.st.deliveries[d.ID] = d
		msgs = append(msgs, queue.For(d))
	}
	finished := make(chan struct{}, n)
	for _, m := range msgs {
		go func() { handleOne(t, r.w, m); finished <- struct{}{} }()
	}
	// The one that won the slot is held in its POST until the other nine
	// have given up, so the slot stays taken while they try.
	for i := 0; i < n-1; i++ {
		<-finished
	}
	close(gate.release)
	<-finished
	if got := len(r.recv.got); got != 1 {
		t.Fatalf("%d POSTs through an endpoint slot of 1, want 1", got)
	}
	if got := r.lim.count() - r.lim.refunds(); got != 1 {
		t.Fatalf("%d account rate slots kept (%d booked, %d given back) for 1 POST: the workers that lost the cap threw theirs away",
			got, r.lim.count(), r.lim.refunds())
	}
}

// A worker that finds its new rate slot far takes no claim: the delivery
// is left exactly as it was (attempt count, no lease, the endpoint slot
// free), and the message goes back carrying that slot, for this attempt,
// with the delivery's due time moved to it (so the sweeper leaves it
// alone). A worker that claimed first would give the claim
// back; when giving it back failed, the rate wait became a counted attempt
// and the next receive logged it as interrupted (attempts 1 -> 3 for one
// POST). yieldFails makes every give-back fail, as it did then.
func TestFarRateSlotTakesNoClaimAndCarriesTheSlot(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight = 5
	r.w.SweepGrace = 2 * time.Second
	r.lim.after = 2 * time.Second // its second begins later than a worker waits (pace.MaxEarly)
	r.st.yieldFails = true
	d := r.st.deliveries[r.d.ID]
	d.Attempts = 2
	r.st.deliveries[d.ID] = d
	before := d
	handleOne(t, r.w, queue.For(d))

	if len(r.recv.got) != 0 || r.st.yields != 0 {
		t.Fatalf("%d POSTs, %d claims given back; want none", len(r.recv.got), r.st.yields)
	}
	if got := r.st.deliveries[d.ID]; !reflect.DeepEqual(got, before) {
		t.Fatalf("the delivery was not restored:\n got %+v\nwant %+v", got, before)
	}
	if ep := r.st.endpoints[d.AccountID+"/"+d.EndpointID]; len(ep.Leases) != 0 {
		t.Fatalf("the endpoint slot is still held: %+v", ep.Leases)
	}
	if len(r.q.sent) != 1 {
		t.Fatalf("%d messages sent back, want 1", len(r.q.sent))
	}
	back := r.q.sent[0]
	if back.SlotAt == 0 || back.SlotFor != before.Attempts || pace.Wait(time.UnixMilli(back.SlotAt), time.Now()) <= pace.MaxEarly {
		t.Fatalf("the message went back without its slot for this attempt: %+v", back)
	}
	if len(r.st.pushed) != 1 || r.st.pushed[0] != back.SlotAt {
		t.Fatalf("due time moves %v, want one to the slot %d", r.st.pushed, back.SlotAt)
	}
	// Back after its delay (at most pace.Early before its second: it waits
	// for it), it uses that slot: no second reservation.
	reserved := r.lim.count()
	time.Sleep(r.q.delays[0])
	handleOne(t, r.w, back)
	if len(r.recv.got) != 1 || r.lim.count() != reserved {
		t.Fatalf("at its slot: %d POSTs, %d more reservations; want 1 and 0", len(r.recv.got), r.lim.count()-reserved)
	}
}

// A manual resend's rate slot is its own: a far one sends the resend back
// carrying it, and never moves the automatic series' due time (rateSlot
// with auto=false), which would hide the delivery from the sweeper.
func TestResendsFarSlotDoesNotMoveTheSeriesDueTime(t *testing.T) {
	r := newRig(t, 200)
	r.w.SweepGrace = 2 * time.Second
	r.lim.after = 30 * time.Second
	m := queue.For(r.d)
	m.Kind, m.AttemptID = queue.KindResend, domain.NewID("att")
	m.SlotAt = domain.Millis(time.Now().Add(-10 * time.Second)) // its booked slot was missed: a new one is reserved
	handleOne(t, r.w, m)
	if r.lim.count() != 1 || len(r.q.sent) != 1 || len(r.recv.got) != 0 {
		t.Fatalf("%d reservations, %d messages back, %d POSTs; want 1, 1, 0", r.lim.count(), len(r.q.sent), len(r.recv.got))
	}
	if back := r.q.sent[0]; back.Kind != queue.KindResend || back.AttemptID != m.AttemptID || back.SlotAt == m.SlotAt {
		t.Fatalf("the resend went back as %+v", back)
	}
	if len(r.st.pushed) != 0 {
		t.Fatalf("a resend's slot moved the automatic series' due time to %v", r.st.pushed)
	}
}

// With the per-endpoint cap off, the claim writes only the delivery, so the
// worker reads the endpoint again as it claims (endpointChanged, alongside
// the claim write): a PATCH answered between the worker's first read and
// its claim (disabled, or a new URL) means no POST to what the endpoint was.
func TestEndpointChangedBeforeTheClaimMakesNoPost(t *testing.T) {
	for name, change := range map[string]func(*domain.Endpoint){
		"disabled":    func(ep *domain.Endpoint) { ep.Disabled = true },
		"url changed": func(ep *domain.Endpoint) { ep.URL = "https://b.example.com/new" },
	} {
		for _, booked := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, slot booked %v", name, booked), func(t *testing.T) {
				r := newRig(t, 200)
				r.w.MaxInFlight = 0
				r.w.Store = &patchAfterLoad{memStore: r.st, patch: change}
				m := queue.For(r.d)
				if booked {
					m.SlotAt = domain.Millis(time.Now()) // ingest's slot: it waits for it, then claims
				} else {
					d := r.st.deliveries[r.d.ID]
					d.Attempts = 1 // a retry: it claims, then reserves
					r.st.deliveries[d.ID] = d
					m = queue.For(d)
				}
				was := r.st.deliveries[r.d.ID]
				handleOne(t, r.w, m)
				if len(r.recv.got) != 0 {
					t.Fatalf("POSTed to %s after the endpoint was %s", r.recv.got[0].URL, name)
				}
				// The read runs alongside the claim: a claim made meanwhile
				// is given back, the delivery exactly as it was.
				if got := r.st.deliveries[r.d.ID]; !reflect.DeepEqual(got, was) {
					t.Fatalf("the delivery was left claimed or changed: %+v (was %+v)", got, was)
				}
			})
		}
	}
}

// A resend's message is booked and delayed as ingest's are (pace.Delay),
// so it may reach the worker up to pace.Early before its slot's second: it
// waits for the second there and POSTs as it begins, not before (nor at the
// slot itself); one that came back earlier than pace.MaxEarly goes back
// again, delayed to its second.
func TestResendEarlyForItsSlotWaitsForItInTheWorker(t *testing.T) {
	r := newRig(t, 200)
	m := queue.For(r.d)
	m.Kind, m.AttemptID = queue.KindResend, domain.NewID("att")
	second := pace.Next(time.Now())
	if early := time.Until(second); early > pace.Early {
		time.Sleep(early - pace.Early)
	}
	m.SlotAt = domain.Millis(second.Add(500 * time.Millisecond))
	handleOne(t, r.w, m)
	if len(r.q.sent) != 0 || len(r.recv.got) != 1 {
		t.Fatalf("at most pace.Early before its second: %d messages back, %d POSTs; want 0 and 1", len(r.q.sent), len(r.recv.got))
	}
	if at := r.recv.at[0]; at.Before(second) || !at.Before(second.Add(500*time.Millisecond)) {
		t.Fatalf("the resend was made at %s, want as its second begins (%s), before its slot", at, second)
	}
	if r.recv.got[0].AttemptID != m.AttemptID || r.lim.count() != 0 {
		t.Fatalf("the POST %+v, %d reservations: want the resend's attempt on its own slot", r.recv.got[0], r.lim.count())
	}

	far := m
	far.AttemptID = domain.NewID("att")
	far.SlotAt = domain.Millis(time.Now().Add(5 * time.Second))
	handleOne(t, r.w, far)
	if len(r.q.sent) != 1 || len(r.recv.got) != 1 {
		t.Fatalf("5 s early: %d messages back, %d POSTs; want 1 and none more", len(r.q.sent), len(r.recv.got))
	}
	if d := r.q.delays[0]; d < 4*time.Second || d > 5*time.Second {
		t.Fatalf("5 s early: back after %s, want to its second, at most pace.Early before (4-5 s)", d)
	}
}

// slowReadStore moves the worker's clock on by `by` during each snapshot read.
type slowReadStore struct {
	*memStore
	offset *atomic.Int64
	by     time.Duration
}

func (s *slowReadStore) LoadForAttempt(ctx context.Context, r store.Ref) (store.Snapshot, error) {
	snap, err := s.memStore.LoadForAttempt(ctx, r)
	s.offset.Add(int64(s.by))
	return snap, err
}

// A booked slot is checked against the clock of the claim, not of the
// message's arrival: one that a slow snapshot read made late for its
// second (pace.Usable) is booked again, not used late and bunched with the
// slots after it. Before, it was POSTed at once, 2 s after its slot.
func TestASlotMadeLateByTheReadIsBookedAgain(t *testing.T) {
	r := newRig(t, 200)
	var offset atomic.Int64
	r.w.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	r.lim.now = r.w.Now
	r.w.Store = &slowReadStore{memStore: r.st, offset: &offset, by: 2 * time.Second}
	m := queue.For(r.d)
	m.SlotAt, m.SlotFor = domain.Millis(time.Now()), r.d.Attempts // the slot ingest booked: now, as the message arrives
	handleOne(t, r.w, m)
	if n := r.lim.count(); n != 1 {
		t.Fatalf("%d slots reserved, want a new one for the slot the read made late", n)
	}
	if len(r.recv.got) != 1 {
		t.Fatalf("%d POSTs, want 1 at the new slot", len(r.recv.got))
	}
}
