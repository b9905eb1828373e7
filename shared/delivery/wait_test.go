package delivery

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/queue"
)

// handle gives the worker one receive of m and reports whether it finished it.
func (r *rig) handle(t *testing.T, m queue.Message) bool {
	t.Helper()
	raw, _ := json.Marshal(m)
	resp, err := r.w.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(raw),
		ReceiptHandle: "rh", Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(resp.BatchItemFailures) == 0
}

// Design BC: every wait is a fresh delayed copy of the message
// (up to 15 minutes) or a park in the table (longer), never a
// ChangeMessageVisibility; the received copy is finished either way. Before
// the change every one of these cases hid the message for the wait.
func TestWaitsParkNothingInFlight(t *testing.T) {
	cases := []struct {
		name  string
		setup func(r *rig)
		code  int
		send  time.Duration // > 0: a copy sent with about this delay
		park  time.Duration // > 0: parked until about now + this
		slot  bool          // the copy or the park carries the rate-limit slot
	}{
		{"retry after 1 s: a delayed copy", func(*rig) {}, 500, time.Second, 0, false},
		{"retry after 625 s: a delayed copy", func(r *rig) { r.setAttempts(4) }, 500, 625 * time.Second, 0, false},
		{"retry after 1296 s: parked", func(r *rig) { r.setAttempts(5) }, 500, 0, 1296 * time.Second, false},
		{"retry after 2401 s: parked", func(r *rig) { r.setAttempts(6) }, 500, 0, 2401 * time.Second, false},
		{"endpoint paused for an hour: parked", func(r *rig) { r.pause(time.Hour) }, 200, 0, time.Hour, false},
		{"endpoint paused for a minute: a delayed copy", func(r *rig) { r.pause(time.Minute) }, 200, time.Minute, 0, false},
		{"rate slot in 100 s: a copy carrying it", func(r *rig) { r.lim.after = 100 * time.Second }, 200, 100 * time.Second, 0, true},
		{"rate slot in 2,000 s: parked with it", func(r *rig) { r.lim.after = 2000 * time.Second }, 200, 0, 2000 * time.Second, true},
		{"not due for an hour (a stray copy): parked", func(r *rig) { r.due(time.Hour) }, 200, 0, time.Hour, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.code)
			c.setup(r)
			start := time.Now()
			if !r.handle(t, queue.For(r.d)) {
				t.Fatal("the received copy was not finished: it stays in flight")
			}
			if len(r.q.hides) != 0 {
				t.Fatalf("ChangeMessageVisibility asked for %v", r.q.hides)
			}
			near := func(got, want time.Duration) bool {
				return got >= want-2*time.Second && got <= want*116/100+2*time.Second
			}
			park, parked := r.st.parks[r.d.ID]
			switch {
			case c.send > 0:
				if parked || len(r.q.sent) != 1 || !near(r.q.delays[0], c.send) {
					t.Fatalf("want one copy delayed %v; sent %v delays %v, parked %v", c.send, r.q.sent, r.q.delays, parked)
				}
				if got := r.q.sent[0]; got.Gen != r.d.Gen || got.DeliveryID != r.d.ID || (got.SlotAt != 0) != c.slot {
					t.Fatalf("copy %+v", got)
				}
			default:
				if !parked || len(r.q.sent) != 0 || !near(time.UnixMilli(park.Until).Sub(start), c.park) || park.Gen != r.d.Gen {
					t.Fatalf("want parked until +%v in gen %d; park %+v (%v), sent %v", c.park, r.d.Gen, park, parked, r.q.sent)
				}
				if (park.SlotAt != 0) != c.slot || (c.slot && park.SlotFor != r.d.Attempts) {
					t.Fatalf("park %+v: slot kept %v, want %v", park, park.SlotAt != 0, c.slot)
				}
				if got := r.st.deliveries[r.d.ID].DueAt; got != park.Until {
					t.Fatalf("due time %d, want the park's %d (the sweeper must not take it for stuck)", got, park.Until)
				}
			}
		})
	}
}

// The one ChangeMessageVisibility left: a system error hides the received
// copy for the short backoff and leaves it to SQS.
func TestOnlyASystemErrorHidesTheMessage(t *testing.T) {
	r := newRig(t, 500)
	r.q.failSends = 1 // the retry's copy cannot be sent
	if r.handle(t, queue.For(r.d)) {
		t.Fatal("the received copy was finished though its copy was not sent: the delivery would have no message")
	}
	if len(r.q.hides) != 1 || r.q.hides[0] != lifecycle.SystemErrorBackoff {
		t.Fatalf("hides %v, want one of %v", r.q.hides, lifecycle.SystemErrorBackoff)
	}
}

// The process dies after sending the delayed copy and before the received
// copy is deleted: both come back, and the delivery still gets one attempt
// per try.
func TestDyingBetweenTheCopyAndTheDeleteMakesNoSecondAttempt(t *testing.T) {
	r := newRig(t, 500)
	orig := queue.For(r.d)
	r.handle(t, orig) // attempt 1 fails; a copy is sent; the delete never happens
	if len(r.q.sent) != 1 || len(r.recv.got) != 1 {
		t.Fatalf("sent %d copies, %d POSTs", len(r.q.sent), len(r.recv.got))
	}
	copy1 := r.q.sent[0]
	r.recv.code = 200
	r.clock += 5 * time.Second // both are due now
	for _, m := range []queue.Message{copy1, orig, copy1} {
		r.handle(t, m)
	}
	got := r.st.deliveries[r.d.ID]
	if got.Status != domain.StatusDelivered || got.Attempts != 2 || len(r.recv.got) != 2 {
		t.Fatalf("delivery %s after %d attempts, %d POSTs; want delivered after 2", got.Status, got.Attempts, len(r.recv.got))
	}
}

// The process dies after parking and before the delete: the received copy
// comes back, parks the same wait again and makes no attempt; a copy of an
// older generation (the scheduler has since unparked it) is dropped.
func TestDyingBetweenParkingAndTheDeleteParksOnce(t *testing.T) {
	r := newRig(t, 500)
	r.setAttempts(5)
	orig := queue.For(r.d)
	r.handle(t, orig)
	first, ok := r.st.parks[r.d.ID]
	if !ok || len(r.recv.got) != 1 {
		t.Fatalf("not parked (%v) or %d POSTs", ok, len(r.recv.got))
	}
	r.handle(t, orig)
	if again := r.st.parks[r.d.ID]; again != first || len(r.recv.got) != 1 || len(r.q.sent) != 0 {
		t.Fatalf("park %+v then %+v, %d POSTs, %d sends", first, again, len(r.recv.got), len(r.q.sent))
	}
	d := r.st.deliveries[r.d.ID]
	d.Gen++ // the scheduler's Unpark
	r.st.deliveries[r.d.ID] = d
	delete(r.st.parks, r.d.ID)
	r.handle(t, orig)
	if _, parked := r.st.parks[r.d.ID]; parked || len(r.q.sent) != 0 {
		t.Fatal("a superseded copy parked the delivery again or was sent on")
	}
}

func (r *rig) setAttempts(n int) {
	d := r.st.deliveries[r.d.ID]
	d.Attempts = n
	r.st.deliveries[r.d.ID], r.d = d, d
}

func (r *rig) pause(d time.Duration) {
	for k, ep := range r.st.endpoints {
		ep.PausedUntil = domain.Millis(time.Now().Add(d))
		r.st.endpoints[k] = ep
	}
}

func (r *rig) due(in time.Duration) {
	d := r.st.deliveries[r.d.ID]
	d.NextAttemptAt = domain.Millis(time.Now().Add(in))
	r.st.deliveries[r.d.ID], r.d = d, d
}

// While the endpoint's breaker is open a delivery waits for the pause's end
// in a delayed copy: no POST, no attempt used.
func TestOpenBreakerHoldsWithoutAnAttempt(t *testing.T) {
	r := newRig(t, 200)
	for k, ep := range r.st.endpoints {
		ep.BreakerOpenUntil = domain.Millis(time.Now().Add(20 * time.Second))
		r.st.endpoints[k] = ep
	}
	if !r.handle(t, queue.For(r.d)) {
		t.Fatal("not finished")
	}
	got := r.st.deliveries[r.d.ID]
	if len(r.recv.got) != 0 || got.Attempts != 0 || len(r.q.sent) != 1 || r.q.delays[0] < 18*time.Second || r.q.delays[0] > 21*time.Second {
		t.Fatalf("%d POSTs, %d attempts, sent %d with delays %v", len(r.recv.got), got.Attempts, len(r.q.sent), r.q.delays)
	}
}
