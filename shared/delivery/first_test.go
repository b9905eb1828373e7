package delivery

import (
	"context"
	"testing"

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
