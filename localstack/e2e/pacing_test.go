package e2e

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/window"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/schema"
)

// The paced lane as AWS runs it at the contract's rate: five pollers share
// it (the mapping's), so an invocation holds one message or a few and a
// wait for a slot is billed to those alone. A burst of 500 to one account
// at 5/s drains at the rate, at most 5 in any wall-clock second, and its
// messages, delayed to their slots' seconds, wait at most pace.Early for
// them: the billed sleep per delivery is printed (docs/cost.md). Sleeping
// to each slot, they slept 1-2 s each.
func TestPacedBurstAtTheDefaultRateSleepsLittle(t *testing.T) {
	localOnly(t) // sets the rate and the pollers
	const n, rate, pollers = 500, 5, 5
	h := start(t, opts{rate: rate, paced: pollers})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(200))
	start := time.Now()
	h.publishMany(t, key, n)
	done := waitCount(t, "delivered", n, 3*time.Minute, func() int { return len(rv.requests()) })
	time.Sleep(2 * time.Second) // anything extra would show now

	var at []time.Time
	for _, r := range rv.requests() {
		at = append(at, r.at)
	}
	if len(at) != n {
		t.Fatalf("%d requests for %d events", len(at), n)
	}
	if busiest := window.BusiestWallClockSecond(at); busiest > rate {
		t.Errorf("%d requests in one wall-clock second at %d/s", busiest, rate)
	}
	slept := h.local.SlotWaits() / n
	t.Logf("%d delivered in %s at %d/s by %d paced pollers (batches of %d); %s billed per delivery",
		n, done.Sub(start).Round(time.Millisecond), rate, pollers, schema.PacedBatch, (h.local.DeliverBilled() / n).Round(time.Millisecond))
	t.Logf("billed sleep per delivery at 5/s: %d ms", slept.Milliseconds())
	if slept > pace.MaxEarly {
		t.Errorf("%s of sleep per delivery: more than a message may wait for its second (%s)", slept, pace.MaxEarly)
	}
}
