package delivery

import (
	"context"
	"sync"
	"testing"

	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/queue"
)

// told collects the operational events the worker publishes.
type told struct {
	mu     sync.Mutex
	events []opevents.Event
}

func (t *told) Publish(_ context.Context, events ...opevents.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, events...)
}

func (t *told) types() []opevents.Type {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []opevents.Type
	for _, e := range t.events {
		out = append(out, e.Type)
	}
	return out
}

// A 410 disables the endpoint and fails the delivery: the worker says both,
// once each, after the writes that make them true.
func TestThe410IsToldAsDisabledAndDeadLettered(t *testing.T) {
	r := newRig(t, 410)
	tell := &told{}
	r.w.Events = tell
	r.deliver(t, queue.For(r.d))
	got := tell.types()
	if len(got) != 2 || got[0] != opevents.EndpointDisabled || got[1] != opevents.DeliveryDeadLettered {
		t.Fatalf("told %v, want [%s %s]", got, opevents.EndpointDisabled, opevents.DeliveryDeadLettered)
	}
}

// A delivery delivered on its first attempt is told nothing.
func TestADeliveredAttemptIsToldNothing(t *testing.T) {
	r := newRig(t, 200)
	tell := &told{}
	r.w.Events = tell
	r.deliver(t, queue.For(r.d))
	if got := tell.types(); len(got) != 0 {
		t.Fatalf("told %v, want nothing", got)
	}
}
