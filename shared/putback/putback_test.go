package putback_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/putback"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

type table struct {
	parkErr, pushErr error
	parked           []store.Park
	pushed           []int64
}

func (t *table) PushDue(_ context.Context, _ string, _ int, until int64) error {
	t.pushed = append(t.pushed, until)
	return t.pushErr
}

func (t *table) ParkDelivery(_ context.Context, _ string, p store.Park) error {
	t.parked = append(t.parked, p)
	return t.parkErr
}

type sqs struct {
	sent   []queue.Message
	delays []time.Duration
}

func (q *sqs) Send(_ context.Context, m queue.Message, d time.Duration) error {
	q.sent, q.delays = append(q.sent, m), append(q.delays, d)
	return nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// A delayed copy carries one more hop and deferral, the slot the step set,
// and moves the due time first; a move that fails does not stop the send.
func TestADelayedCopy(t *testing.T) {
	st, q := &table{pushErr: errors.New("throttled")}, &sqs{}
	slot := time.UnixMilli(1_700_000_000_000)
	due := slot.Add(time.Second)
	msg := queue.Message{DeliveryID: "dlv_1", Gen: 2, Hops: 3, Deferred: 1}
	got, err := putback.Do(context.Background(), st, q, quiet, msg, &domain.Delivery{ID: "dlv_1", Gen: 2},
		lifecycle.Effect{Do: lifecycle.DoPutBack, Delay: 7 * time.Second, MoveDue: due, SetSlot: &lifecycle.Slot{At: slot, Interval: 200 * time.Millisecond}, SlotFor: 4})
	if err != nil || got != lifecycle.PutBackDone {
		t.Fatalf("got %v, %v", got, err)
	}
	if len(st.pushed) != 1 || st.pushed[0] != domain.Millis(due) {
		t.Fatalf("due moved to %v, want %d", st.pushed, domain.Millis(due))
	}
	want := queue.Message{DeliveryID: "dlv_1", Gen: 2, Hops: 4, Deferred: 2, SlotAt: domain.Millis(slot), SlotFor: 4, SlotIvl: 200}
	if len(q.sent) != 1 || !reflect.DeepEqual(q.sent[0], want) || q.delays[0] != 7*time.Second {
		t.Fatalf("sent %+v with %v, want %+v with 7s", q.sent, q.delays, want)
	}
}

// A retry (not a deferral) that gives its slot up keeps its deferral count.
func TestARetryUnslots(t *testing.T) {
	q := &sqs{}
	msg := queue.Message{DeliveryID: "dlv_1", SlotAt: 5, SlotFor: 1, SlotIvl: 200, Deferred: 1}
	if _, err := putback.Do(context.Background(), &table{}, q, quiet, msg, nil, lifecycle.Effect{Unslot: true, NotDeferral: true}); err != nil {
		t.Fatal(err)
	}
	if m := q.sent[0]; m.SlotAt != 0 || m.SlotFor != 0 || m.SlotIvl != 0 || m.Deferred != 1 || m.Hops != 1 {
		t.Fatalf("sent %+v", m)
	}
}

// Parking reads the table's answer: superseded, outliving the item, a
// system error, or parked.
func TestParkingResults(t *testing.T) {
	until := time.UnixMilli(1_700_000_900_000)
	for _, c := range []struct {
		err     error
		want    lifecycle.PutBackResult
		wantErr bool
	}{
		{nil, lifecycle.PutBackDone, false},
		{store.ErrConflict, lifecycle.PutBackSuperseded, false},
		{store.ErrOutlives, lifecycle.PutBackOutlives, false},
		{errors.New("throttled"), lifecycle.PutBackDone, true},
	} {
		st, q := &table{parkErr: c.err}, &sqs{}
		got, err := putback.Do(context.Background(), st, q, quiet, queue.Message{DeliveryID: "dlv_1", Gen: 3}, nil,
			lifecycle.Effect{Park: true, Until: until})
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("park answered %v: got %v, %v", c.err, got, err)
		}
		if len(q.sent) != 0 || len(st.parked) != 1 || st.parked[0].Until != domain.Millis(until) || st.parked[0].Gen != 3 || st.parked[0].Deferred != 1 {
			t.Errorf("park answered %v: sent %v, parked %+v", c.err, q.sent, st.parked)
		}
	}
}
