package sweep_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
	"github.com/gifq/webhooks/shared/sweep"
)

// clockRig is a rig whose store and sweeper share a simulated clock (the
// tests start it at the real time, past the deliveries' due time); its
// sweeper's calls are counted.
type clockRig struct {
	rig
	clock time.Time
	calls *testenv.Calls
}

func newClockRig(t *testing.T) *clockRig {
	r := &clockRig{rig: newRig(t), clock: time.Now(), calls: testenv.NewCalls()}
	now := func() time.Time { return r.clock }
	r.st.WithClock(now)
	db, _ := r.env.CountedClients(r.calls)
	counted := store.New(db, r.env.Table).WithClock(now)
	r.sw = &sweep.Sweeper{Store: counted, Queue: r.q, MaxAttempts: 8, Grace: 5 * time.Minute,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: now}
	return r
}

// sweepAt runs the sweeper at the given offset from the rig's start.
func (r *clockRig) sweepAt(t *testing.T, start time.Time, after time.Duration) sweep.Result {
	t.Helper()
	r.clock = start.Add(after)
	res, err := r.sw.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A delivered delivery keeps its index entry: the run whose window holds
// it reads it once, finds it final and writes nothing for it; the next
// run's window starts past it and reads no delivery at all.
func TestAFinalDeliveryIsReadOnceAndLeftAlone(t *testing.T) {
	r := newClockRig(t)
	d := r.deliveries(t, 1)[0]
	r.clock = time.Now()
	start := r.clock
	c := store.Claim{ID: "c", LeaseUntil: domain.Millis(start.Add(time.Minute))}
	claimed, err := r.st.ClaimAttempt(ctx, d, c)
	if err != nil {
		t.Fatal(err)
	}
	a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: domain.Millis(start), StatusCode: 200}
	if err := r.st.RecordAttempt(ctx, claimed, nil, c, a, store.Outcome{Status: domain.StatusDelivered, Healthy: true}); err != nil {
		t.Fatal(err)
	}
	r.calls.Reset()
	if res := r.sweepAt(t, start, 15*time.Minute); res.Found != 0 || res.Requeued != 0 {
		t.Fatalf("the run over the delivered delivery's due time: %+v, want nothing found", res)
	}
	if got := r.calls.Count("DynamoDB.BatchGetItem"); got != 1 {
		t.Fatalf("%d delivery reads in the run over its due time, want 1: %s", got, r.calls)
	}
	if writes := r.calls.Count("DynamoDB.UpdateItem"); writes != 1 {
		t.Fatalf("%d updates, want 1 (the marks; nothing for a final delivery): %s", writes, r.calls)
	}
	r.calls.Reset()
	if res := r.sweepAt(t, start, 30*time.Minute); res.Found != 0 {
		t.Fatalf("the next run: %+v", res)
	}
	if got := r.calls.Count("DynamoDB.BatchGetItem"); got != 0 {
		t.Fatalf("the next run read deliveries again: %s", r.calls)
	}
}

// A delivery found overdue while a worker holds its lease cannot be
// re-queued then; its entry is moved to the lease's end, so that once the
// worker is gone (it died; its message was lost too) a later run, whose
// window has long passed the delivery's first due time, re-queues it.
func TestADeliveryLeasedWhenSweptIsRequeuedOnceItsLeaseIsOver(t *testing.T) {
	r := newClockRig(t)
	d := r.deliveries(t, 1)[0]
	r.clock = time.Now()
	start := r.clock
	if _, err := r.st.ClaimAttempt(ctx, d, store.Claim{ID: "c", LeaseUntil: domain.Millis(start.Add(40 * time.Minute))}); err != nil {
		t.Fatal(err)
	}
	if res := r.sweepAt(t, start, 15*time.Minute); res.Found != 1 || res.Requeued != 0 {
		t.Fatalf("under the lease: %+v, want found, not re-queued", res)
	}
	if res := r.sweepAt(t, start, 30*time.Minute); res.Requeued != 0 {
		t.Fatalf("still under the lease: %+v", res)
	}
	res := r.sweepAt(t, start, 60*time.Minute)
	if res.Requeued != 1 || res.OldestOverdue < (59*time.Minute).Seconds() {
		t.Fatalf("after the lease: %+v, want re-queued, an hour overdue", res)
	}
	if got := r.queued(t); got != 1 {
		t.Fatalf("%d messages, want 1", got)
	}
}

// A failed delivery whose DLQ sender died holding the DLQ claim: the run
// that finds the claim held moves its entry on, and a later run sends the
// DLQ message.
func TestADeadLetterWhoseSenderDiedIsSentByALaterRun(t *testing.T) {
	r := newClockRig(t)
	d := r.deliveries(t, 1)[0]
	r.clock = time.Now()
	start := r.clock
	if _, err := r.st.FailWithoutAttempt(ctx, d, domain.ReasonEndpointDisabled, true); err != nil {
		t.Fatal(err)
	}
	// The claim is the sender's for 30 s: a run within them finds it held.
	r.sw.Grace = time.Second
	if res := r.sweepAt(t, start, 2*time.Second); res.DeadLettered != 0 || res.Skipped != 1 {
		t.Fatalf("while the claim is held: %+v, want skipped", res)
	}
	if res := r.sweepAt(t, start, 15*time.Minute); res.DeadLettered != 1 {
		t.Fatalf("after the sender died: %+v, want dead-lettered", res)
	}
	got, err := r.st.GetDelivery(ctx, d.ID)
	if err != nil || got.DLQPending {
		t.Fatalf("after the DLQ send: %+v %v", got, err)
	}
	_ = queue.For // the DLQ message is checked by deadletter's tests
}

// An entry written by a clock behind the sweeper's (here by 5 s: written
// after a run whose window already passed its due time) is read by the next
// run's window, which starts MarkOverlap before the mark.
func TestAnEntryBehindTheMarkByLessThanTheOverlapIsFound(t *testing.T) {
	r := newClockRig(t)
	r.clock = time.Now().Add(r.sw.Grace + 5*time.Second)
	start := r.clock
	if res := r.sweepAt(t, start, 0); res.Found != 0 {
		t.Fatalf("first run: %+v", res)
	}
	r.deliveries(t, 1) // due now by the writer's clock: 5 s behind the mark
	if res := r.sweepAt(t, start, 15*time.Minute); res.Requeued != 1 {
		t.Fatalf("the next run: %+v, want the delivery re-queued", res)
	}
}

// failingReads is a sweeper store whose next fails delivery reads fail.
type failingReads struct {
	*store.Store
	fails int
}

func (f *failingReads) GetDeliveriesEventually(ctx context.Context, ids []string) ([]domain.Delivery, error) {
	if f.fails > 0 && len(ids) > 0 {
		f.fails--
		return nil, errors.New("injected: throttled")
	}
	return f.Store.GetDeliveriesEventually(ctx, ids)
}

// A page read refused once is read again within the run: the overdue
// delivery behind it is re-queued now, not an interval later.
func TestARefusedPageReadIsTriedAgainInTheRun(t *testing.T) {
	r := newClockRig(t)
	r.deliveries(t, 1)
	r.clock = time.Now()
	r.sw.Store = &failingReads{Store: r.sw.Store.(*store.Store), fails: 1}
	r.clock = r.clock.Add(15 * time.Minute)
	if res, err := r.sw.Run(ctx); err != nil || res.Requeued != 1 {
		t.Fatalf("the run: %+v %v, want the delivery re-queued", res, err)
	}
}

// A run that fails part-way (a read refused on every try) keeps that
// shard's mark where it was: the next run reads the entries it did not get to.
func TestARunThatFailsLeavesItsWindowToTheNext(t *testing.T) {
	r := newClockRig(t)
	r.deliveries(t, 1)
	r.clock = time.Now()
	start := r.clock
	r.sw.Store = &failingReads{Store: r.sw.Store.(*store.Store), fails: 3}
	r.clock = start.Add(15 * time.Minute)
	if _, err := r.sw.Run(ctx); err == nil {
		t.Fatal("the run with a failed read reported no error")
	}
	if res := r.sweepAt(t, start, 30*time.Minute); res.Requeued != 1 {
		t.Fatalf("the next run: %+v, want the delivery re-queued", res)
	}
}

// A clock that goes back puts the marks past now less the grace: with no
// overlap (a grace of a millisecond) the run reads empty windows, without an
// error, and moves the marks back (the entries past them are read again
// once the clock is right).
func TestARunWhoseClockWentBackReadsNothing(t *testing.T) {
	r := newClockRig(t)
	r.sw.Grace = time.Millisecond
	d := r.deliveries(t, 1)[0]
	r.clock = time.Now()
	start := r.clock
	if res := r.sweepAt(t, start, time.Hour); res.Requeued != 1 {
		t.Fatalf("first run: %+v", res)
	}
	if res := r.sweepAt(t, start, 0); res.Found != 0 {
		t.Fatalf("the run an hour back: %+v", res)
	}
	got, err := r.st.GetDelivery(ctx, d.ID)
	if err != nil || got.Gen != d.Gen+1 {
		t.Fatalf("after the runs: %+v %v, want re-queued once", got, err)
	}
}
