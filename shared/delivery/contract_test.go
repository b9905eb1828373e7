package delivery

// Regression tests for contract breaks that live in the
// worker, with the in-memory stand-ins of worker_test.go.

import (
	"errors"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
)

// Break 3: a message carrying the rate slot booked for its attempt that
// finds its endpoint at the in-flight cap gives the slot back, so that one
// POST costs its account one slot, not two.
func TestACapDeferralGivesItsBookedSlotBack(t *testing.T) {
	r := newRig(t, 200)
	r.w.MaxInFlight = 1
	k := r.d.AccountID + "/" + r.d.EndpointID
	ep := r.st.endpoints[k]
	ep.Leases = map[string]domain.Lease{"0": {Until: domain.Millis(time.Now().Add(time.Minute)), Claim: "clm_other"}}
	r.st.endpoints[k] = ep
	m := queue.For(r.d)
	// A slot is usable (and so given back) only before the last pace.SendBy
	// of its second: book it early in one.
	if now := time.Now(); now.Sub(pace.Second(now)) > 500*time.Millisecond {
		time.Sleep(pace.Next(now).Sub(now))
	}
	m.SlotAt, m.SlotFor, m.SlotIvl = domain.Millis(time.Now()), r.d.Attempts, 200
	handleOne(t, r.w, m)
	if len(r.recv.got) != 0 || len(r.q.sent) != 1 {
		t.Fatalf("%d POSTs, %d put back; want the message deferred", len(r.recv.got), len(r.q.sent))
	}
	if r.lim.refunds() != 1 || r.lim.count() != 0 {
		t.Fatalf("%d slots given back, %d booked: a deferral must give its booked slot back and book none", r.lim.refunds(), r.lim.count())
	}
	if back := r.q.sent[0]; back.SlotAt != 0 || back.SlotFor != 0 {
		t.Fatalf("the message went back still carrying the slot it gave back: %+v", back)
	}
}

// A limiter that fails closes the gate: the message goes back with a delay
// (the system-error backoff), never out now.
func TestALimiterThatFailsSendsNothing(t *testing.T) {
	r := newRig(t, 200)
	r.lim.fail = errors.New("ProvisionedThroughputExceededException")
	d := r.st.deliveries[r.d.ID]
	d.Attempts = 1 // a retry: its message carries no slot
	r.st.deliveries[d.ID] = d
	handleOne(t, r.w, queue.For(d))
	if len(r.recv.got) != 0 {
		t.Fatalf("%d POSTs with the limiter down", len(r.recv.got))
	}
	if len(r.q.hides) != 1 || r.q.hides[0] != lifecycle.SystemErrorBackoff {
		t.Fatalf("hides %v: want the message back after %s", r.q.hides, lifecycle.SystemErrorBackoff)
	}
	if got := r.st.deliveries[d.ID]; got.Attempts != 1 || got.Claim != "" {
		t.Fatalf("the delivery changed: %+v", got)
	}
}

// Break 9: every message deliver sends back to its own queue counts a hop,
// which is logged; the stack allows the recursion (RecursiveLoop: Allow)
// that Lambda would otherwise cut after about 16 hops.
func TestEveryPutBackCountsAHop(t *testing.T) {
	r := newRig(t, 503)
	r.w.Schedule.Waits = []time.Duration{time.Second, time.Second, time.Second}
	r.deliver(t, queue.For(r.d))
	if len(r.q.sent) != 3 {
		t.Fatalf("%d messages sent back for 4 attempts, want 3", len(r.q.sent))
	}
	for i, m := range r.q.sent {
		if m.Hops != i+1 {
			t.Fatalf("put-back %d carries %d hops, want %d", i+1, m.Hops, i+1)
		}
	}
}

// Break 1, in the worker: a delivery held behind its endpoint's open
// breaker, or its full in-flight cap, past its deadline fails as
// endpoint_unavailable and is dead-lettered, without a POST.
func TestADeliveryHeldByItsEndpointPastItsDeadlineIsDeadLettered(t *testing.T) {
	for _, held := range []string{"cap", "breaker"} {
		r := newRig(t, 200)
		r.w.AttemptTimeout = 10 * time.Second
		d := r.st.deliveries[r.d.ID]
		d.CreatedAt = domain.Millis(time.Now().Add(-3 * time.Hour)) // past 78 min x 1.15 + 8 x 10 s
		r.st.deliveries[d.ID] = d
		k := d.AccountID + "/" + d.EndpointID
		ep := r.st.endpoints[k]
		switch held {
		case "cap":
			r.w.MaxInFlight = 1
			ep.Leases = map[string]domain.Lease{"0": {Until: domain.Millis(time.Now().Add(time.Minute)), Claim: "clm_other"}}
		case "breaker":
			ep.BreakerOpenUntil, ep.BreakerPauseMs = domain.Millis(time.Now().Add(5*time.Minute)), 300000
		}
		r.st.endpoints[k] = ep
		handleOne(t, r.w, queue.For(d))
		got := r.st.deliveries[d.ID]
		if got.Status != domain.StatusFailed || got.FailReason != domain.ReasonEndpointUnavailable {
			t.Fatalf("%s: delivery %s (%s), want failed endpoint_unavailable", held, got.Status, got.FailReason)
		}
		if len(r.q.deadLetters) != 1 || len(r.recv.got) != 0 {
			t.Fatalf("%s: %d dead letters, %d POSTs; want 1 and 0", held, len(r.q.deadLetters), len(r.recv.got))
		}
	}
}

// Break 6: a rate slot further away than the delivery's item lives (a
// backlog longer than the retention) fails the delivery as event_expired
// and dead-letters it, instead of parking it past its TTL.
func TestAWaitThatWouldOutliveTheItemDeadLettersAsExpired(t *testing.T) {
	r := newRig(t, 200)
	d := r.st.deliveries[r.d.ID]
	d.Attempts = 1
	d.ExpiresAt = time.Now().Add(90 * time.Minute).Unix()
	r.st.deliveries[d.ID] = d
	r.lim.after = 2 * time.Hour // the account's backlog
	handleOne(t, r.w, queue.For(d))
	got := r.st.deliveries[d.ID]
	if got.Status != domain.StatusFailed || got.FailReason != domain.ReasonEventExpired || len(r.q.deadLetters) != 1 {
		t.Fatalf("delivery %s (%s), %d dead letters, %d parks; want failed event_expired and dead-lettered",
			got.Status, got.FailReason, len(r.q.deadLetters), len(r.st.parks))
	}
}

// Break 7: a resend whose outcome write failed stayed in progress for good:
// the message came back within the claim's lease, found the attempt taken
// and was deleted. The write is now tried again while the lease lasts, and
// if it still fails the message comes back only after the lease, when its
// receive takes the attempt over.
func TestAResendsFailedOutcomeWriteIsRetriedOrTakenOver(t *testing.T) {
	r := newRig(t, 200)
	m := queue.For(r.d)
	m.Kind, m.AttemptID = queue.KindResend, domain.NewID("att")
	r.st.failFinishes = 2
	handleOne(t, r.w, m)
	if a := r.st.manual[m.AttemptID]; a.Outcome != domain.OutcomeDelivered || len(r.recv.got) != 1 {
		t.Fatalf("after two failed writes: outcome %q after %d POSTs, want delivered after 1", a.Outcome, len(r.recv.got))
	}

	r = newRig(t, 200)
	m = queue.For(r.d)
	m.Kind, m.AttemptID = queue.KindResend, domain.NewID("att")
	r.st.failFinishes = 1000 // the table is down for longer than the lease
	handleOne(t, r.w, m)
	if len(r.q.hides) != 1 || r.q.hides[0] < r.w.LeaseFor-5*time.Second {
		t.Fatalf("hides %v: want the message back only after the claim's lease (%s)", r.q.hides, r.w.LeaseFor)
	}
	r.st.failFinishes = 0
	r.clock += r.q.hides[0] // SQS hands it back then
	handleOne(t, r.w, m)
	if a := r.st.manual[m.AttemptID]; a.Outcome != domain.OutcomeDelivered {
		t.Fatalf("after the lease: outcome %q, want the attempt taken over and recorded", a.Outcome)
	}
}

// A 410 Gone answer disables the endpoint at once, with the
// reason shown on it (Standard Webhooks: "stop sending"); the delivery fails
// as rejected, and the next delivery to it fails as endpoint_disabled
// without a request.
func TestA410DisablesTheEndpoint(t *testing.T) {
	r := newRig(t, 410)
	handleOne(t, r.w, queue.For(r.d))
	ep := r.st.endpoints[r.d.AccountID+"/"+r.d.EndpointID]
	if !ep.Disabled || ep.DisabledReason == "" {
		t.Fatalf("endpoint after a 410: disabled %v (%q)", ep.Disabled, ep.DisabledReason)
	}
	if got := r.st.deliveries[r.d.ID]; got.Status != domain.StatusFailed || got.FailReason != domain.ReasonRejected {
		t.Fatalf("delivery %s (%s), want failed rejected", got.Status, got.FailReason)
	}
	next := r.addDelivery()
	handleOne(t, r.w, queue.For(next))
	if got := r.st.deliveries[next.ID]; got.FailReason != domain.ReasonEndpointDisabled || len(r.recv.got) != 1 {
		t.Fatalf("the next delivery: %s (%s) after %d requests in all, want endpoint_disabled and no request", got.Status, got.FailReason, len(r.recv.got))
	}
}

// A resend takes only its manual attempt: with the delivery's automatic
// attempt due at that moment, the series is left as it was (no attempt
// claimed and never made, which the next claim would log as interrupted
// and count against the eight). Found on LocalStack, where a resend met a
// due retry.
func TestAResendClaimsNoAutomaticAttempt(t *testing.T) {
	r := newRig(t, 200)
	m := queue.For(r.d)
	m.Kind, m.AttemptID = queue.KindResend, domain.NewID("att")
	handleOne(t, r.w, m)
	if a := r.st.manual[m.AttemptID]; a.Outcome != domain.OutcomeDelivered || len(r.recv.got) != 1 {
		t.Fatalf("the resend: outcome %q after %d POSTs, want delivered after 1", a.Outcome, len(r.recv.got))
	}
	if d := r.st.deliveries[r.d.ID]; d.Attempts != 0 || d.Claim != "" {
		t.Fatalf("the delivery after a resend: %d attempts, claim %q; want its series untouched", d.Attempts, d.Claim)
	}
}
