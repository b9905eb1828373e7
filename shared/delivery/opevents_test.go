package delivery

import (
	"testing"

	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/queue"
)

func types(r *opevents.Recorder) []opevents.Type {
	var out []opevents.Type
	for _, e := range r.Events() {
		out = append(out, e.Type)
	}
	return out
}

// A 410 disables the endpoint and fails the delivery: the worker says both,
// once each, after the writes that make them true.
func TestThe410IsToldAsDisabledAndDeadLettered(t *testing.T) {
	r := newRig(t, 410)
	tell := &opevents.Recorder{}
	r.w.Events = tell
	r.deliver(t, queue.For(r.d))
	got := types(tell)
	if len(got) != 2 || got[0] != opevents.EndpointDisabled || got[1] != opevents.DeliveryDeadLettered {
		t.Fatalf("told %v, want [%s %s]", got, opevents.EndpointDisabled, opevents.DeliveryDeadLettered)
	}
}

// A delivery delivered on its first attempt is told nothing.
func TestADeliveredAttemptIsToldNothing(t *testing.T) {
	r := newRig(t, 200)
	tell := &opevents.Recorder{}
	r.w.Events = tell
	r.deliver(t, queue.For(r.d))
	if got := types(tell); len(got) != 0 {
		t.Fatalf("told %v, want nothing", got)
	}
}
