package delivery

// The Worker driven with in-memory stand-ins for its own narrow interfaces
// (Store, Queue, Limiter, Sender): fast tests of how it carries out the
// lifecycle's decisions when a write fails or a message lies. The store's
// conditions themselves are proven against the DynamoDB emulator in
// shared/store.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/store"
)

var errTransient = errors.New("TransactionConflict: transaction is ongoing for the item")

// memStore keeps one account's items in maps and applies the same
// conditions as shared/store, as far as these tests need them.
type memStore struct {
	mu           sync.Mutex
	deliveries   map[string]domain.Delivery
	endpoints    map[string]domain.Endpoint
	events       map[string]domain.Event
	attempts     []domain.Attempt
	failRecords  int // the next n RecordAttempt calls fail transiently, writing nothing
	parks        map[string]store.Park
	marks        map[int]int64 // the sweeper's marks
	now          func() time.Time
	pushed       []int64                   // PushDue's until, in order
	yields       int                       // claims given back (YieldClaim)
	yieldFails   bool                      // every YieldClaim fails transiently, writing nothing
	manual       map[string]domain.Attempt // manual attempts by id
	manualLease  map[string]int64          // and their claims' leases
	failFinishes int                       // the next n FinishManual calls fail transiently
	slotsLost    int                       // slots refused to a take because another claim held them
	slotTakes    int                       // slot writes: takes (TakeSlots, a second for the rest counted)
	slotFrees    int                       // and frees (FreeSlots)
	routeReads   int                       // strong reads of the route (SlotRoute)
	slowMarks    int                       // endpoints marked slow (MarkSlow)
	// An eventually consistent load's view of an endpoint, a second behind
	// (nil: not there yet); loads, whether each load was eventual.
	staleEndpoints map[string]*domain.Endpoint
	loads          []bool
}

func (m *memStore) LoadForAttempt(_ context.Context, r store.Ref) (store.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var snap store.Snapshot
	if d, ok := m.deliveries[r.DeliveryID]; ok {
		snap.Delivery = &d
	}
	if r.Delivery != nil { // ingest's first message: not read (shared/store)
		d := *r.Delivery
		snap.Delivery = &d
	}
	m.loads = append(m.loads, r.Eventual)
	if ep, ok := m.endpoints[r.AccountID+"/"+r.EndpointID]; ok {
		snap.Endpoint = &ep
	}
	if stale, ok := m.staleEndpoints[r.AccountID+"/"+r.EndpointID]; ok && r.Eventual {
		snap.Endpoint = stale
	}
	if ev, ok := m.events[r.EventID]; ok {
		snap.Event = &ev
	}
	return snap, nil
}

func (m *memStore) ClaimAttempt(_ context.Context, seen domain.Delivery, c store.Claim) (domain.Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.deliveries[seen.ID]
	now := domain.Millis(m.now())
	if d.Status != domain.StatusPending || d.Gen != seen.Gen || d.Attempts != seen.Attempts || d.NextAttemptAt > now || d.LeaseUntil >= now ||
		d.AccountID != seen.AccountID || d.EndpointID != seen.EndpointID || d.EventID != seen.EventID {
		return seen, store.ErrConflict
	}
	if c.Interrupted != nil {
		m.attempts = append(m.attempts, *c.Interrupted)
	}
	d.Attempts++
	d.Claim, d.ClaimAttempt, d.LeaseUntil = c.ID, c.AttemptID, c.LeaseUntil
	m.deliveries[d.ID] = d
	return d, nil
}

func (m *memStore) RecordAttempt(_ context.Context, _ domain.Delivery, _ *domain.Endpoint, c store.Claim, a domain.Attempt, o store.Outcome) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failRecords > 0 {
		m.failRecords--
		return errTransient
	}
	m.attempts = append(m.attempts, a)
	d := m.deliveries[a.DeliveryID]
	if d.Claim != c.ID {
		return store.ErrConflict
	}
	d.Claim, d.ClaimAttempt, d.LeaseUntil, d.LastAttemptID = "", "", 0, a.ID
	if o.DisableEndpoint != "" {
		k := d.AccountID + "/" + d.EndpointID
		ep := m.endpoints[k]
		ep.Disabled, ep.DisabledReason = true, o.DisableEndpoint
		m.endpoints[k] = ep
	}
	d.Status = o.Status
	switch o.Status {
	case domain.StatusFailed:
		d.FailReason, d.DLQPending, d.DueAt = o.FailReason, true, 0
	case domain.StatusDelivered:
		// its sweep index entry stays (store.RecordAttempt)
	case domain.StatusPending:
		d.NextAttemptAt = o.NextAttemptAt
		if !o.KeepDue {
			d.DueAt = o.NextAttemptAt
		}
		if o.GiveBack {
			d.Attempts--
			d.Throttles++
		}
	}
	m.deliveries[d.ID] = d
	return nil
}

func (m *memStore) WarnDisabling(_ context.Context, ep domain.Endpoint, at time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := ep.AccountID + "/" + ep.ID
	cur, ok := m.endpoints[k]
	if !ok || cur.FailingSince != ep.FailingSince || cur.DisableWarnedAt != 0 {
		return false, nil
	}
	cur.DisableWarnedAt = domain.Millis(at)
	m.endpoints[k] = cur
	return true, nil
}

// endpointKey is the endpoint's key in m.endpoints (mu held).
func (m *memStore) endpointKey(endpointID string) string {
	for k, ep := range m.endpoints {
		if ep.ID == endpointID {
			return k
		}
	}
	return ""
}

// TakeSlots takes the slots free, run out or the group's already, as
// shared/store's group take does (one write, and one more for the rest).
func (m *memStore) TakeSlots(_ context.Context, endpointID string, t store.SlotTake) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.endpointKey(endpointID)
	ep := m.endpoints[k]
	if ep.Route != t.Route {
		return nil, store.ErrEndpointChanged
	}
	m.slotTakes++
	leases := map[string]domain.Lease{}
	for slot, l := range ep.Leases {
		leases[slot] = l
	}
	var got []string
	for _, slot := range t.Slots {
		if l, held := leases[slot]; held && l.Until >= domain.Millis(m.now()) && l.Claim != t.Group {
			m.slotsLost++
			continue
		}
		leases[slot] = domain.Lease{Until: t.LeaseUntil, Claim: t.Group}
		got = append(got, slot)
	}
	if len(got) < len(t.Slots) && len(got) > 0 {
		m.slotTakes++
	}
	if len(got) == 0 {
		return nil, store.ErrSlotTaken
	}
	ep.Leases = leases
	m.endpoints[k] = ep
	return got, nil
}

func (m *memStore) FreeSlots(_ context.Context, endpointID, group string, slots []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.endpointKey(endpointID)
	ep := m.endpoints[k]
	if len(slots) > 0 {
		m.slotFrees++
	}
	leases := map[string]domain.Lease{}
	for slot, l := range ep.Leases {
		if !slices.Contains(slots, slot) || l.Claim != group {
			leases[slot] = l
		}
	}
	ep.Leases = leases
	m.endpoints[k] = ep
}

func (m *memStore) MarkSlow(_ context.Context, endpointID string, until int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.endpointKey(endpointID)
	ep := m.endpoints[k]
	if ep.SlowUntil < domain.Millis(m.now()) {
		ep.SlowUntil = until
		m.slowMarks++
	}
	m.endpoints[k] = ep
	return nil
}

func (m *memStore) SlotRoute(_ context.Context, endpointID string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.routeReads++
	return m.endpoints[m.endpointKey(endpointID)].Route, nil
}

func (m *memStore) YieldClaim(_ context.Context, seen, claimed domain.Delivery, c store.Claim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.yieldFails {
		return errTransient
	}
	d := m.deliveries[claimed.ID]
	if d.Claim != c.ID || d.Attempts != claimed.Attempts || d.Status != domain.StatusPending {
		return store.ErrConflict
	}
	d.Attempts--
	d.Claim, d.ClaimAttempt, d.LeaseUntil, d.UpdatedAt = "", "", 0, seen.UpdatedAt
	m.deliveries[d.ID] = d
	m.yields++
	return nil
}

func (m *memStore) FailWithoutAttempt(_ context.Context, seen domain.Delivery, reason domain.FailReason, _ bool) (domain.Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.deliveries[seen.ID]
	if d.Status != domain.StatusPending || d.Gen != seen.Gen || d.LeaseUntil >= domain.Millis(m.now()) {
		return seen, store.ErrConflict
	}
	d.Status, d.FailReason, d.DLQPending, d.Claim = domain.StatusFailed, reason, true, ""
	m.deliveries[d.ID] = d
	return d, nil
}

func (m *memStore) ClaimDeadLetter(context.Context, string) error { return nil }

func (m *memStore) MarkDeadLettered(_ context.Context, id string, gen int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := m.deliveries[id]; d.Gen == gen {
		d.DLQPending = false
		m.deliveries[id] = d
	}
	return nil
}

func (m *memStore) GetDelivery(_ context.Context, id string) (domain.Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.deliveries[id]
	if !ok {
		return d, store.ErrNotFound
	}
	return d, nil
}

func (m *memStore) GetEndpoint(_ context.Context, account, id string) (domain.Endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ep, ok := m.endpoints[account+"/"+id]
	if !ok {
		return ep, store.ErrNotFound
	}
	return ep, nil
}

func (m *memStore) PushDue(_ context.Context, _ string, _ int, until int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pushed = append(m.pushed, until)
	return nil
}
func (m *memStore) TakeProbe(context.Context, string, string, int64) error { return nil }

// ParkDelivery applies store.ParkDelivery's condition and keeps the park.
func (m *memStore) ParkDelivery(_ context.Context, id string, p store.Park) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.deliveries[id]
	if d.Status != domain.StatusPending || d.Gen != p.Gen {
		return store.ErrConflict
	}
	if d.ExpiresAt <= time.UnixMilli(p.Until).Add(time.Hour).Unix() {
		return store.ErrOutlives
	}
	if m.parks == nil {
		m.parks = map[string]store.Park{}
	}
	m.parks[id] = p
	d.DueAt = p.Until
	m.deliveries[id] = d
	return nil
}
func (m *memStore) Restart(context.Context, string, string, int) (domain.Delivery, error) {
	return domain.Delivery{}, store.ErrConflict
}

// ClaimManual and FinishManual keep manual attempts by id under the
// conditions of shared/store: a claim takes a new attempt or one left in
// progress past its lease; the finish needs it still in progress.
func (m *memStore) ClaimManual(_ context.Context, a domain.Attempt, c store.Claim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.manual[a.ID]; ok && (old.Outcome != domain.OutcomeInProgress || m.manualLease[a.ID] >= domain.Millis(m.now())) {
		return store.ErrDuplicate
	}
	if m.manual == nil {
		m.manual, m.manualLease = map[string]domain.Attempt{}, map[string]int64{}
	}
	a.Outcome = domain.OutcomeInProgress
	m.manual[a.ID], m.manualLease[a.ID] = a, c.LeaseUntil
	return nil
}
func (m *memStore) YieldManual(_ context.Context, d domain.Delivery, c store.Claim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.manual[c.AttemptID].Outcome != domain.OutcomeInProgress || m.manualLease[c.AttemptID] != c.LeaseUntil {
		return store.ErrConflict
	}
	delete(m.manual, c.AttemptID)
	m.yields++
	return nil
}
func (m *memStore) FinishManual(_ context.Context, _ domain.Delivery, _ *domain.Endpoint, _ store.Claim, a domain.Attempt, _ store.Outcome) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failFinishes > 0 {
		m.failFinishes--
		return errTransient
	}
	if m.manual[a.ID].Outcome != domain.OutcomeInProgress {
		return store.ErrConflict
	}
	m.manual[a.ID] = a
	return nil
}

type memQueue struct {
	mu          sync.Mutex
	sent        []queue.Message
	delays      []time.Duration // of each sent message
	hides       []time.Duration // every ChangeMessageVisibility asked for
	failSends   int             // the next n sends fail
	deadLetters []queue.Message
	raw         []string // bodies moved to the DLQ as they were, with their reason
}

func (q *memQueue) Send(_ context.Context, m queue.Message, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failSends > 0 {
		q.failSends--
		return errTransient
	}
	q.sent = append(q.sent, m)
	q.delays = append(q.delays, d)
	return nil
}
func (q *memQueue) Hide(_ context.Context, _, _ string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.hides = append(q.hides, d)
	return nil
}
func (q *memQueue) DeadLetter(_ context.Context, m queue.Message) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.deadLetters = append(q.deadLetters, m)
	return nil
}
func (q *memQueue) DeadLetterRaw(_ context.Context, body, reason string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.raw = append(q.raw, reason+" "+body)
	return nil
}

// nowLimiter grants every reservation at once, or after `after` when set,
// and counts the slots given back.
type nowLimiter struct {
	mu       sync.Mutex
	reserved int
	refunded int
	after    time.Duration
	fail     error            // every reservation fails with it
	now      func() time.Time // the worker's clock (nil: the real one)
}

func (l *nowLimiter) Refund(_ context.Context, _ string, r ratelimit.Reservation) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Interval > 0 {
		l.refunded++
	}
	return nil
}

func (l *nowLimiter) Reserve(_ context.Context, _ string, n int, _ float64) (ratelimit.Reservation, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return ratelimit.Reservation{}, l.fail
	}
	l.reserved += n
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	return ratelimit.Reservation{First: firstSlot(now, l.after), Interval: time.Millisecond}, nil
}

// firstSlot is the slot a limiter far under its rate books at now, after
// ahead: now, or the next second in a second's tail (ratelimit.Book).
func firstSlot(now time.Time, ahead time.Duration) time.Time {
	if next := pace.Next(now); ahead == 0 && next.Sub(now) <= pace.Cutoff {
		return next
	}
	return now.Add(ahead)
}

func (l *nowLimiter) refunds() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refunded
}

func (l *nowLimiter) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reserved
}

// receiver answers every POST with one status code and counts them.
type receiver struct {
	mu   sync.Mutex
	code int
	got  []destination.Request
	at   []time.Time // when each came
}

func (r *receiver) Send(_ context.Context, req destination.Request) destination.Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got, r.at = append(r.got, req), append(r.at, time.Now())
	return destination.Outcome{Status: r.code, Verdict: webhook.VerdictOf(r.code, 0), StartedAt: time.Now()}
}

type rig struct {
	w     *Worker
	st    *memStore
	q     *memQueue
	lim   *nowLimiter
	recv  *receiver
	clock time.Duration // added to the real time: a redelivery after the lease ran out
	d     domain.Delivery
}

func newRig(t *testing.T, code int) *rig {
	t.Helper()
	r := &rig{q: &memQueue{}, lim: &nowLimiter{}, recv: &receiver{code: code}}
	now := func() time.Time { return time.Now().Add(r.clock) }
	r.lim.now = now
	r.st = &memStore{deliveries: map[string]domain.Delivery{}, endpoints: map[string]domain.Endpoint{}, events: map[string]domain.Event{}, now: now}
	start := time.Now()
	ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: domain.NewID("acct"), URL: "https://a.example.com/hook", Secrets: []domain.Secret{{Value: "whsec_a"}}}
	ev := domain.Event{ID: domain.NewID("evt"), AccountID: ep.AccountID, Type: "payout.fulfilled", Body: []byte(`{"for":"a"}`), ExpiresAt: start.Add(domain.DefaultRetention).Unix()}
	r.d = domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: ep.AccountID, Status: domain.StatusPending, Gen: 1, Series: 1,
		NextAttemptAt: domain.Millis(start), CreatedAt: domain.Millis(start), ExpiresAt: ev.ExpiresAt}
	r.st.endpoints[ep.AccountID+"/"+ep.ID], r.st.events[ev.ID], r.st.deliveries[r.d.ID] = ep, ev, r.d
	r.w = &Worker{Store: r.st, Queue: r.q, Limiter: r.lim, Sender: r.recv, Policy: lifecycle.Policy{Schedule: retry.Default(), LeaseFor: 25 * time.Second,
		MaxEarly: pace.MaxEarly}, Events: opevents.Nop{},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "test", "test"), Now: now}
	return r
}

// deliver hands the worker one message (as SQS would, again and again)
// until it is finished, moving the clock past the lease between receives.
func (r *rig) deliver(t *testing.T, m queue.Message) {
	t.Helper()
	for receive := 1; receive <= 10; receive++ {
		raw, _ := json.Marshal(m)
		sent := len(r.q.sent)
		resp, err := r.w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(raw),
			Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(resp.BatchItemFailures) > 0:
			r.clock += time.Minute // SQS redelivers it after the visibility timeout; the lease has run out by then
		case len(r.q.sent) > sent:
			// It waits as a delayed copy of itself: receive that when it is due.
			m = r.q.sent[len(r.q.sent)-1]
			r.clock += r.q.delays[len(r.q.delays)-1]
		default:
			return
		}
	}
	t.Fatal("the message never finished")
}

// A transient failure of the outcome write after the POST must not
// make the next claim POST again. Before the fix the receiver answered 400
// and still got attempt 2.
func TestTransientOutcomeWriteFailureDoesNotPostAgain(t *testing.T) {
	for _, code := range []int{400, 200} {
		r := newRig(t, code)
		r.st.failRecords = 1
		r.deliver(t, queue.For(r.d))
		if n := len(r.recv.got); n != 1 {
			t.Errorf("answer %d: the receiver got %d POSTs for one delivery", code, n)
		}
		got, _ := r.st.GetDelivery(context.Background(), r.d.ID)
		want := map[int]domain.Status{400: domain.StatusFailed, 200: domain.StatusDelivered}[code]
		if got.Status != want || got.Attempts != 1 {
			t.Errorf("answer %d: delivery %s after %d attempts, want %s after 1", code, got.Status, got.Attempts, want)
		}
	}
}

// Its 2xx must be recorded as delivered, not as
// attempts_exhausted after a transient write failure.
func TestTwoHundredOnTheLastAttemptIsDeliveredDespiteAWriteFailure(t *testing.T) {
	r := newRig(t, 200)
	d := r.st.deliveries[r.d.ID]
	d.Attempts = 7
	r.st.deliveries[r.d.ID], r.d = d, d
	r.st.failRecords = 2
	r.deliver(t, queue.For(r.d))
	got, _ := r.st.GetDelivery(context.Background(), r.d.ID)
	if got.Status != domain.StatusDelivered || len(r.q.deadLetters) != 0 || len(r.recv.got) != 1 {
		t.Fatalf("delivery %s (%s), %d dead letters, %d POSTs", got.Status, got.FailReason, len(r.q.deadLetters), len(r.recv.got))
	}
}

// A message naming account A's event and account B's delivery
// must be refused and kept for a human, not POST A's body to B's URL.
func TestMessageNamingAnotherAccountsEventIsQuarantined(t *testing.T) {
	r := newRig(t, 200)
	acctB, epB, evtB := domain.NewID("acct"), domain.NewID("ep"), domain.NewID("evt")
	other := domain.Endpoint{ID: epB, AccountID: acctB, URL: "https://b.example.com/hook", Secrets: []domain.Secret{{Value: "whsec_b"}}}
	r.st.endpoints[other.AccountID+"/"+other.ID] = other
	evB := domain.Event{ID: evtB, AccountID: acctB, Body: []byte(`{"for":"b"}`), ExpiresAt: r.d.ExpiresAt}
	r.st.events[evB.ID] = evB
	for name, m := range map[string]queue.Message{
		"account and endpoint": {Kind: queue.KindDeliver, DeliveryID: r.d.ID, AccountID: acctB, EndpointID: epB, EventID: r.d.EventID, Gen: r.d.Gen},
		"event":                {Kind: queue.KindDeliver, DeliveryID: r.d.ID, AccountID: r.d.AccountID, EndpointID: r.d.EndpointID, EventID: evtB, Gen: r.d.Gen},
		"resend":               {Kind: queue.KindResend, DeliveryID: r.d.ID, AttemptID: domain.NewID("att"), AccountID: acctB, EndpointID: epB, EventID: r.d.EventID, Gen: r.d.Gen},
		"event, carrying its body": queue.Message{Kind: queue.KindDeliver, DeliveryID: r.d.ID, AccountID: r.d.AccountID, EndpointID: r.d.EndpointID,
			EventID: evtB, Gen: r.d.Gen}.Carrying("payout.paid", evB.Body),
	} {
		r.q.raw = nil
		r.deliver(t, m)
		if len(r.recv.got) != 0 {
			t.Fatalf("%s: sent %d POSTs, first to %s", name, len(r.recv.got), r.recv.got[0].URL)
		}
		if len(r.q.raw) != 1 || len(r.q.raw[0]) < len(queue.ReasonMismatch) || r.q.raw[0][:len(queue.ReasonMismatch)] != queue.ReasonMismatch {
			t.Fatalf("%s: not kept for a human: %q", name, r.q.raw)
		}
		// The ids, for that human; never the event's body (a dead letter
		// holds no customer's payload).
		kept, err := queue.Decode(r.q.raw[0][len(queue.ReasonMismatch)+1:])
		if err != nil || kept.DeliveryID != m.DeliveryID || kept.EventID != m.EventID || kept.AccountID != m.AccountID || len(kept.Body) != 0 {
			t.Fatalf("%s: kept %+v (%v), want its ids and no body", name, kept, err)
		}
	}
	if got, _ := r.st.GetDelivery(context.Background(), r.d.ID); !reflect.DeepEqual(got, r.d) {
		t.Fatalf("a refused message changed the delivery: %+v", got)
	}
}
