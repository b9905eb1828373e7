package delivery

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
)

// ingestsFirst is the message ingest sends for the rig's delivery: with
// its event's body and the delivery as written (queue.Message.First).
func (r *rig) ingestsFirst() queue.Message {
	ev := r.st.events[r.d.EventID]
	m := queue.For(r.d).Carrying(ev.Type, ev.Body)
	m.First = &queue.First{CreatedAt: r.d.CreatedAt, ExpiresAt: r.d.ExpiresAt}
	return m
}

// Ingest's first message is not read against the delivery's item (it says
// what the item holds), so a copy of it received again after the delivery
// was made (SQS delivers at least once) meets the claim's condition
// instead: no second POST, and the delivery stays delivered.
func TestIngestsFirstMessageReceivedTwiceMakesOnePost(t *testing.T) {
	r := newRig(t, 200)
	m := r.ingestsFirst()
	r.deliver(t, m)
	r.deliver(t, m)
	got, _ := r.st.GetDelivery(context.Background(), r.d.ID)
	if len(r.recv.got) != 1 || got.Status != domain.StatusDelivered || got.Attempts != 1 {
		t.Fatalf("%d POSTs, delivery %s after %d attempts; want one POST, delivered", len(r.recv.got), got.Status, got.Attempts)
	}
}

// A delivery that moved on before ingest's first message came (the sweeper
// handed it to a message of a new gen, an operator failed it) is not
// attempted on that message's word.
func TestIngestsFirstMessageForADeliveryThatMovedOnMakesNoPost(t *testing.T) {
	for name, move := range map[string]func(*domain.Delivery){
		"re-queued (a new gen)": func(d *domain.Delivery) { d.Gen++ },
		"failed":                func(d *domain.Delivery) { d.Status, d.FailReason = domain.StatusFailed, domain.ReasonEndpointDisabled },
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, 200)
			m := r.ingestsFirst()
			d := r.st.deliveries[r.d.ID]
			move(&d)
			r.st.deliveries[d.ID] = d
			r.deliver(t, m)
			if len(r.recv.got) != 0 {
				t.Fatalf("%d POSTs for a delivery %s", len(r.recv.got), name)
			}
			if got, _ := r.st.GetDelivery(context.Background(), r.d.ID); got.Attempts != 0 || got.Status != d.Status {
				t.Fatalf("the delivery after: %+v", got)
			}
		})
	}
}

// Ingest's first message reads its endpoint eventually consistent. A read a
// second behind may not have the endpoint yet (just made), or have it as it
// was (disabled a moment before it was enabled again): the worker reads it
// again, strongly, before deciding anything against it, and makes the POST.
// A read that finds it fit goes on to the claim with no second read.
func TestAStaleReadOfIngestsFirstMessageIsReadAgainBeforeItIsHeldAgainstTheEndpoint(t *testing.T) {
	for name, c := range map[string]struct {
		stale func(ep domain.Endpoint) *domain.Endpoint
		loads []bool
	}{
		"fit":              {func(ep domain.Endpoint) *domain.Endpoint { return &ep }, []bool{true}},
		"not there yet":    {func(domain.Endpoint) *domain.Endpoint { return nil }, []bool{true, false}},
		"disabled, before": {func(ep domain.Endpoint) *domain.Endpoint { ep.Disabled = true; return &ep }, []bool{true, false}},
		"paused, before": {func(ep domain.Endpoint) *domain.Endpoint {
			ep.PausedUntil = domain.Millis(time.Now().Add(time.Hour))
			return &ep
		}, []bool{true, false}},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, 200)
			key := r.d.AccountID + "/" + r.d.EndpointID
			r.st.staleEndpoints = map[string]*domain.Endpoint{key: c.stale(r.st.endpoints[key])}
			r.deliver(t, r.ingestsFirst())
			got, _ := r.st.GetDelivery(context.Background(), r.d.ID)
			if len(r.recv.got) != 1 || got.Status != domain.StatusDelivered {
				t.Fatalf("%d POSTs, delivery %s; want it delivered", len(r.recv.got), got.Status)
			}
			if !reflect.DeepEqual(r.st.loads, c.loads) {
				t.Fatalf("loads (eventual?) %v, want %v", r.st.loads, c.loads)
			}
		})
	}
}
