package main

import (
	"math"
	"strings"
	"testing"

	"github.com/gifq/webhooks/shared/cost"
	"github.com/gifq/webhooks/shared/lifecycle"
)

func TestEngineRunsEventsInTimeThenScheduleOrder(t *testing.T) {
	var e Engine
	var got []string
	e.At(2, func() { got = append(got, "c") })
	e.At(1, func() { got = append(got, "a") })
	e.At(1, func() {
		got = append(got, "b")
		e.At(0.5, func() { got = append(got, "now") }) // in the past: runs at the current time, after b
	})
	e.At(5, func() { got = append(got, "late") })
	e.RunUntil(3)
	want := []string{"a", "b", "now", "c"}
	if len(got) != len(want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ran %v, want %v", got, want)
		}
	}
	if e.Now() != 3 || e.Pending() != 1 {
		t.Fatalf("now %v pending %d, want 3 and 1", e.Now(), e.Pending())
	}
}

func TestZipfSharesAndSampler(t *testing.T) {
	z := NewZipf(3, 1) // weights 1, 1/2, 1/3: shares 6/11, 3/11, 2/11
	for r, want := range []float64{6.0 / 11, 3.0 / 11, 2.0 / 11} {
		if got := z.Share(r + 1); math.Abs(got-want) > 1e-12 {
			t.Errorf("share of rank %d = %v, want %v", r+1, got, want)
		}
	}
	for _, c := range []struct {
		u    float64
		rank int
	}{{0, 1}, {6.0/11 - 1e-9, 1}, {6.0/11 + 1e-9, 2}, {9.0/11 - 1e-9, 2}, {9.0/11 + 1e-9, 3}, {0.999999, 3}} {
		if got := z.Sample(c.u); got != c.rank {
			t.Errorf("Sample(%v) = %d, want %d", c.u, got, c.rank)
		}
	}
}

func TestCapWaitIsTheStepsBackOff(t *testing.T) {
	for d, want := range map[int]float64{1: 1, 2: 2, 3: 4, 5: 16, 6: 30, 9: 30} {
		if got := tiny(Today(), false).capWait(d, 100); got < want || got > 1.25*want+0.001 {
			t.Errorf("capWait(%d) = %v, want %v to %v", d, got, want, 1.25*want)
		}
	}
}

// tiny is one account with one endpoint, no traffic of its own: the tests
// put messages in by hand.
func tiny(o Options, down bool) *Sim {
	w := DefaultWorkload()
	w.Accounts, w.DeliveriesPerDay, w.BurstEvents = 1, 0, 0
	w.Transient5xx, w.Reject4xx = 0, 0
	w.OutageAt, w.OutageFor = 0, 2*day
	w.DownFraction = 0
	if down {
		w.DownFraction = 1
	}
	return NewSim(o, w, 1, 1)
}

// oneEndpoint leaves the tiny account one endpoint (the largest account has
// 16).
func oneEndpoint(s *Sim) *Sim {
	a := s.accts[0]
	a.eps, a.fanout, a.queryUnits = a.eps[:1], 1, cost.IngestAccountRead
	a.downEps, a.healthy = a.downEps[:min(len(a.downEps), 1)], min(a.healthy, 1)
	return s
}

func TestHiddenWaitIsInFlightAndDelayedIsNot(t *testing.T) {
	for _, c := range []struct {
		w      Waiting
		hidden int
	}{{Hidden, 100}, {Delayed, 0}, {Mixed, 0}} {
		o := baseline()
		o.Waiting = c.w
		s := tiny(o, false)
		q := s.queues[0]
		s.wait(&cohort{acct: 0, ep: -1, n: 100, until: 60}, 0, true)
		s.eng.RunUntil(59)
		if q.hidden != c.hidden || q.nvis != 0 {
			t.Errorf("%s: at 59 s hidden %d visible %d, want %d and 0", c.w, q.hidden, q.nvis, c.hidden)
		}
		s.eng.RunUntil(60)
		if q.hidden != 0 || q.nvis != 100 {
			t.Errorf("%s: at 60 s hidden %d visible %d, want 0 and 100", c.w, q.hidden, q.nvis)
		}
	}
}

func TestHiddenWaitOverTwelveHoursComesBackAfterTheQueueTimeout(t *testing.T) {
	s := tiny(baseline(), false)
	q := s.queues[0]
	s.wait(&cohort{acct: 0, ep: -1, n: 1, until: 13 * 3600}, 0, true)
	s.eng.RunUntil(180)
	if q.nvis != 1 {
		t.Fatalf("visible %d at 180 s, want the refused message back", q.nvis)
	}
}

// A message to an endpoint that never answers: 8 attempts on the contract's
// schedule (1+16+81+256+625+1296+2401 s plus up to 15 % jitter), then the DLQ.
func TestDeadEndpointUsesEightAttemptsThenDeadLetters(t *testing.T) {
	o := baseline()
	o.APIRate, o.APIBurst = o.AccountAPIRate, o.AccountAPIBurst
	s := tiny(o, true)
	ep := s.accts[0].eps[0]
	s.eng.At(0, func() { s.enqueueNew(&cohort{acct: 0, ep: ep, n: 1, slotted: true}, 0) })
	m := s.Run(0)
	if m.Attempts != 8 || m.Retries != 7 || m.DLQ != 1 || m.Delivered != 0 {
		t.Fatalf("attempts %v retries %v DLQ %v delivered %v, want 8, 7, 1, 0", m.Attempts, m.Retries, m.DLQ, m.Delivered)
	}
}

// With the breaker, 12 messages to a dead endpoint under the cap of 5: the
// first lifecycle.BreakerAfter time out, the breaker opens (BreakerOf), and
// the rest wait without using attempts.
func TestBreakerHoldsWithoutUsingAttempts(t *testing.T) {
	o := baseline()
	o.Breaker, o.EndpointCap = true, 5
	s := tiny(o, true)
	ep := s.accts[0].eps[0]
	s.eng.At(0, func() { s.enqueueNew(&cohort{acct: 0, ep: ep, n: 12, slotted: true}, 0) })
	s.eng.RunUntil(0) // queued
	tick := func(t float64) { s.eng.RunUntil(t); s.serve(s.queues[0], t, 10) }
	for t := 0.0; t <= 25; t++ {
		tick(t)
	}
	if s.m.Attempts != lifecycle.BreakerAfter || lifecycle.BreakerOf(s.eps[ep].dom, toTime(25)) != lifecycle.BreakerOpen {
		t.Fatalf("after 25 s: %v attempts, breaker %s; want %d and open", s.m.Attempts, lifecycle.BreakerOf(s.eps[ep].dom, toTime(25)), lifecycle.BreakerAfter)
	}
}

func TestHealthyMessagesAreDeliveredAndTimed(t *testing.T) {
	o := baseline()
	s := tiny(o, false)
	s.eng.At(0, func() { s.enqueueNew(&cohort{acct: 0, ep: -1, n: 10, slotted: true}, 0) })
	m := s.Run(0)
	if m.Delivered != 10 || m.DLQ != 0 {
		t.Fatalf("delivered %v DLQ %v, want 10 and 0", m.Delivered, m.DLQ)
	}
	// Waited 0 s: the latency is the hops plus the receiver's answer, whose median is 0.15 s.
	if want := s.w.IngestDelay + s.w.Overhead + s.w.LatencyMedian; math.Abs(m.P50-want) > 0.01 {
		t.Fatalf("p50 %.3f s, want %.3f", m.P50, want)
	}
}

// The sim bills from shared/cost's steps: one event to one endpoint,
// delivered first time, costs the counted units (cost.SingleWriteUnits,
// SingleReadUnits); a timeout and its retry add the counted retry's and the
// endpoint's two health writes (turning failing, and healthy again with its
// breaker's count cleared: a timeout is no blip).
func TestOneDeliveryCostsTheCountedUnits(t *testing.T) {
	o := Today()
	s := oneEndpoint(tiny(o, false))
	s.eng.At(0, func() { s.ingest(s.accts[0], 0, 1, 0, 0) })
	m := s.Run(0)
	if m.Delivered != 1 || m.WCU != cost.SingleWriteUnits || m.RCU != cost.SingleReadUnits {
		t.Fatalf("delivered %v with %v write and %v read units, want 1 with %d and %d", m.Delivered, m.WCU, m.RCU, cost.SingleWriteUnits, cost.SingleReadUnits)
	}

	w := DefaultWorkload()
	w.Accounts, w.DeliveriesPerDay, w.BurstEvents, w.Transient5xx, w.Reject4xx = 1, 0, 0, 0, 0
	w.DownFraction, w.OutageAt, w.OutageFor = 1, 0, 5 // down for the first attempt only
	s = oneEndpoint(NewSim(o, w, 1, 1))
	s.eng.At(0, func() { s.ingest(s.accts[0], 0, 1, 0, 0) })
	m = s.Run(0)
	if m.Delivered != 1 || m.Attempts != 2 || m.LaneMoves != 0 {
		t.Fatalf("delivered %v in %v attempts, %v lane moves; want 1 in 2, none (the retry is sent on the slow lane)", m.Delivered, m.Attempts, m.LaneMoves)
	}
	// A timeout is no blip: the endpoint turns failing, then healthy again.
	if want := float64(cost.SingleWriteUnits + cost.RetryWriteUnits + 2*cost.EndpointHealthWrite); m.WCU != want {
		t.Errorf("with a retry: %v write units, want %v", m.WCU, want)
	}
	if want := float64(cost.SingleReadUnits + cost.RetryReadUnits); m.RCU != want {
		t.Errorf("with a retry: %v read units, want %v", m.RCU, want)
	}
}

// A failing endpoint's messages travel the slow lane (lifecycle.LaneOf): a
// message found on the fast lane is moved once; the fast lane's concurrency
// is not held by its timeouts.
func TestFailingEndpointMovesToTheSlowLane(t *testing.T) {
	s := tiny(Today(), true)
	ep := s.accts[0].eps[0]
	s.eng.At(0, func() { s.enqueueNew(&cohort{acct: 0, ep: ep, n: 1, slotted: true}, 0) })
	s.eng.At(15, func() {
		s.enqueueNew(&cohort{acct: 0, ep: ep, n: 3, created: 15, next: 15, until: 15, slotted: true}, 15)
	})
	for t := 0.0; t <= 20; t++ {
		s.eng.RunUntil(t)
		s.step(t)
	}
	if lifecycle.LaneOf(s.eps[ep].dom, toTime(20)) != lifecycle.LaneSlow {
		t.Fatalf("endpoint on the fast lane after a timeout")
	}
	if s.m.LaneMoves != 3 {
		t.Fatalf("%v messages moved to the slow lane, want the 3 sent after the timeout", s.m.LaneMoves)
	}
	if s.m.Attempts != 5 {
		t.Fatalf("%v attempts by 20 s, want 5 (the first, its retry after 1 s and the 3 moved, on the slow lane)", s.m.Attempts)
	}
}

// Fair queues: a tenant holding more than 10 % of the messages in flight
// (and at least 30) is served after the quiet ones, whatever their order;
// without them, first visible, first served.
func TestFairQueueServesQuietTenantsFirst(t *testing.T) {
	for _, fair := range []bool{true, false} {
		q := newQueue("q", 10)
		noisy, quiet := q.group(1), q.group(2)
		noisy.taken, quiet.taken = 100, 5 // received in the last second
		q.classify(fair, 1)
		q.push(&cohort{acct: 1, n: 10}, 0)
		q.push(&cohort{acct: 2, n: 1}, 1)
		first := q.pop(100).acct
		if want := map[bool]int32{true: 2, false: 1}[fair]; first != want || noisy.noisy != fair {
			t.Errorf("fair %v: account %d served first (noisy %v), want %d", fair, first, noisy.noisy, want)
		}
	}
}

// The paced lane's use is estimated from its arrivals: an account's burst
// over its rate books slots ahead, and the deliveries whose slot is more
// than lifecycle.PacedAhead away would travel the paced lane, batches of
// up to 100 lasting about two seconds each. Without a paced lane, nothing.
func TestABurstOverTheRateIsCountedOnThePacedLane(t *testing.T) {
	for _, lanes := range []int{50, 0} {
		o := Today()
		o.PacedConcurrency = lanes
		s := oneEndpoint(tiny(o, false))
		s.eng.At(0, func() { s.ingest(s.accts[0], 0, 300, 0, 0) })
		for t := 0.0; t <= 1; t++ {
			s.eng.RunUntil(t)
			s.step(t)
		}
		var use *Use
		for i := range s.m.Uses {
			if strings.HasPrefix(s.m.Uses[i].Quota, "paced lane") {
				use = &s.m.Uses[i]
			}
		}
		switch {
		case lanes == 0 && use != nil:
			t.Fatalf("no paced lane, yet its use is counted: %+v", *use)
		case lanes > 0 && (use == nil || use.Peak != 6 || use.Limit != 50):
			t.Fatalf("paced lane use %+v, want 6 of 50 (300 deliveries booked ahead, less the first ones, in batches of 100 lasting 2 s)", use)
		}
	}
}

// Breaker holds stretch no series past its deadline: 200 deliveries to a
// dead endpoint on the production schedule (n^4 s, 8 attempts, jitter),
// with the breaker, over 20 seeds. The few that win a probe made the rest
// of their schedule from it and failed up to 78 min past their deadline;
// now every wait, theirs too, ends by the deadline, and every delivery
// fails within one sweep of it.
func TestEveryDeliveryToADeadEndpointFailsByItsDeadline(t *testing.T) {
	latest := -1e9
	for seed := uint64(1); seed <= 20; seed++ {
		w := DefaultWorkload()
		w.Accounts, w.DeliveriesPerDay, w.BurstEvents, w.Transient5xx, w.Reject4xx = 1, 0, 0, 0, 0
		w.OutageAt, w.OutageFor, w.DownFraction = 0, 2*day, 1
		s := oneEndpoint(NewSim(Today(), w, 1, seed))
		ep := s.accts[0].eps[0]
		const n = 200
		s.eng.At(0, func() { s.enqueueNew(&cohort{acct: 0, ep: ep, n: n, slotted: true}, 0) })
		m := s.Run(0)
		if m.DLQ != n || m.Delivered != 0 {
			t.Fatalf("seed %d: DLQ %v delivered %v, want all %d failed", seed, m.DLQ, m.Delivered, n)
		}
		if m.PastDeadline > 15*60 {
			t.Errorf("seed %d: a delivery failed %.0f s past its deadline (%v attempts), more than one sweep", seed, m.PastDeadline, m.Attempts)
		}
		latest = max(latest, m.PastDeadline)
	}
	t.Logf("the latest failure, over 20 seeds: %.0f s from its deadline", latest)
}
