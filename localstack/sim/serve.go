package main

import (
	"math"
	"time"

	"github.com/gifq/webhooks/shared/cost"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
)

// serve runs one second of a queue's event source mapping with cap
// concurrent invocations: it takes visible messages (in the fair queue's
// order) while the second's concurrency lasts and SQS lets it receive, and
// returns the concurrency used and the queue's messages in flight.
func (s *Sim) serve(q *queue, t, cap float64) (conc, inflight float64) {
	slot := int(t) % len(q.slowSlots)
	long, longMsgs := q.slowSlots[slot], q.slowMsgs[slot]
	q.slowSlots[slot], q.slowMsgs[slot] = 0, 0
	budget := cap - long - q.debt
	b := float64(s.o.BatchSize)
	per := (s.w.Overhead + s.tfast[s.o.BatchSize]) / b // concurrency-seconds per healthy message
	room := float64(s.o.InFlightLimit) - float64(q.hidden) - longMsgs
	q.fastAttempt, q.fastOther, q.slow = 0, 0, 0
	taken := 0.0
	for q.nvis > 0 {
		used, _, _, _ := s.batches(q)
		if used >= budget {
			if t-q.peek().vis > 60 {
				if cap >= q.maxConc {
					s.m.bind(q.name+" mapping maximum concurrency (backlog older than 60 s)", t)
				} else {
					s.m.bind("Lambda scaling or account concurrency (backlog older than 60 s)", t)
				}
			}
			break
		}
		if taken >= room {
			s.m.bind("SQS in-flight messages per queue (OverLimit)", t)
			break
		}
		fit := int(math.Max(1, math.Min((budget-used)/per, room-taken)))
		c := q.pop(fit)
		taken += float64(c.n)
		q.group(c.acct).taken += float64(c.n)
		s.process(c, q, t)
	}
	used, k, slowInv, fastInv := s.batches(q)
	tf := 0.0
	if fastInv > 0 {
		tf = (used - slowInv) / fastInv
	}
	for i := 1; i < int(s.w.DeadTimeout); i++ {
		j := (slot + i) % len(q.slowSlots)
		q.slowSlots[j] += slowInv
		q.slowMsgs[j] += slowInv * b
	}
	q.debt = max(0, used-budget)
	q.classify(s.o.FairQueues, max(tf, per))
	s.m.processedOther += q.fastOther
	s.m.processedSlow += q.slow
	s.m.Invocations += k
	s.m.SQSRequests += 2 * math.Ceil(k) // ReceiveMessage and DeleteMessageBatch per batch
	s.m.LambdaDeliverGBs += (slowInv*(s.w.DeadTimeout+s.w.Overhead) + fastInv*tf) * memoryGB
	if q.nvis > 0 {
		q.pollers = min(q.maxConc, q.pollers+s.o.ScaleUpPerMinute/60)
	} else {
		q.pollers = max(5, min(q.pollers, 1.2*(long+used)+5))
	}
	inflight = float64(q.hidden) + longMsgs + slowInv*b + fastInv*b*tf
	return long + used, inflight
}

// batches is the second's invocations so far: k batches of the messages
// taken, slowInv of them holding an attempt to a dead endpoint (a batch lasts
// as long as its slowest message, so those last the timeout; the number is
// the expected count of batches with at least one such message), fastInv
// the others, which last the slowest of their healthy answers; used is the
// concurrency-seconds they take in this second.
func (s *Sim) batches(q *queue) (used, k, slowInv, fastInv float64) {
	b := float64(s.o.BatchSize)
	k = (q.fastAttempt + q.fastOther + q.slow) / b
	slowInv = q.slow
	if k > 0 && s.o.BatchSize > 1 {
		slowInv = max(k*(1-math.Pow(1-1/k, q.slow)), math.Min(q.slow, 1))
	}
	fastInv = max(k-slowInv, 0)
	attemptsPer := 0.0
	if fastInv > 0 {
		attemptsPer = math.Min(b, q.fastAttempt/fastInv)
	}
	lo := int(attemptsPer)
	tf := s.w.Overhead + s.tfast[lo]
	if lo < 10 {
		tf += (attemptsPer - float64(lo)) * (s.tfast[lo+1] - s.tfast[lo])
	}
	return slowInv + fastInv*tf, k, slowInv, fastInv
}

// down reports whether an endpoint times out at t.
func (s *Sim) down(ep *endpoint, t float64) bool {
	return ep != nil && ep.down && t >= s.w.OutageAt && t < s.w.OutageAt+s.w.OutageFor
}

// process is the worker on one cohort of received messages, the way the
// step (lifecycle.Step) takes them: a message early for its slot goes back;
// otherwise lifecycle.Decide decides (due? paused? breaker open, or
// half-open and this the probe?); an attempt on the fast lane whose
// endpoint is failing moves to the slow lane (lifecycle.LaneOf); an attempt
// takes an in-flight slot (lifecycle.FreeSlots) and a rate-limit slot
// (ratelimit.Book), then lifecycle.Settle and lifecycle.BreakerAfterAttempt
// settle its answer.
func (s *Sim) process(c *cohort, q *queue, t float64) {
	n := float64(c.n)
	if c.until > t+maxWaitInWorker {
		q.fastOther += n
		s.wait(c, t, true)
		return
	}
	a := s.accts[c.acct]
	var ep *endpoint
	if c.ep >= 0 {
		ep = s.eps[c.ep]
	}
	// Ingest's first message reads its endpoint and slot item eventually
	// consistent; any other, strongly, with the delivery. A first message
	// that is not going on to its claim reads them again, strongly (the
	// step's rule for a stale load): confirm, at each such exit below.
	first := c.first
	c.first = false // whatever is sent again from here is a put-back: it reads the delivery
	load, endpointRead := float64(cost.LoadReads+cost.LoadDeliveryRead), float64(cost.LoadEndpointRead)
	if first {
		load, endpointRead = cost.FirstLoadReads, cost.FirstLoadEndpointRead
	}
	s.m.RCU += load * n
	if c.bare {
		s.m.RCU += cost.LoadEventRead * n // and the event's, for a message without its body
	}
	if a.rank != 0 {
		a.acctRCU += n * endpointRead // in ACCT#<account>
		s.touch(a)
	}
	confirm := func(m int) {
		if first {
			s.m.RCU += cost.LoadReads * float64(m)
			if a.rank != 0 {
				a.acctRCU += float64(m) * cost.LoadEndpointRead
			}
		}
	}
	act := lifecycle.Decide(s.input(c, ep, t))
	if act.Verb != lifecycle.Attempt {
		confirm(c.n)
	}
	switch act.Verb {
	case lifecycle.Wait:
		q.fastOther += n
		if s.heldByBreaker(ep, t) {
			s.holdSpread(c, ep, t)
			return
		}
		c.until = fromMillis(act.Until.UnixMilli())
		s.defer_(c, ep, t)
		return
	case lifecycle.Fail, lifecycle.DeadLetter:
		s.deadLetter(n)
		s.final(c, t)
		return
	case lifecycle.Drop, lifecycle.Quarantine:
		return
	}
	// As the step orders it: what Decide holds, fails or drops is not
	// moved; an attempt whose endpoint is failing goes to the slow lane
	// (before any probe, which it makes there).
	if s.slow != nil && q != s.slow {
		if ep != nil && lifecycle.LaneOf(ep.dom, toTime(t)) == lifecycle.LaneSlow {
			confirm(c.n)
			s.toSlowLane(c, q, t)
			return
		}
		if ep == nil && a.failing > 0 && a.healthy > 0 {
			moved := min(c.n, carry(&a.moveCarry, n*min(1, float64(a.failing)/float64(a.healthy))))
			if moved > 0 {
				m := *c
				m.n = moved
				confirm(moved)
				s.toSlowLane(&m, q, t)
				if c.n -= moved; c.n == 0 {
					return
				}
			}
		}
	}
	allowed := c.n
	if ep != nil && act.Probe && s.o.Breaker {
		confirm(c.n)
		// Half open: one message takes the probe (a conditional write on
		// the endpoint item); Decide holds the rest until its lease ends.
		ep.dom.BreakerProbeUntil = millis(t + probeLease)
		s.m.WCU += cost.ProbeWrite
		a.acctWCU += cost.ProbeWrite
		allowed = 1
		if rest := c.n - 1; rest > 0 {
			r := *c
			r.n = rest
			q.fastOther += float64(rest)
			s.holdSpread(&r, ep, t)
		}
		c.n = 1
		c.probe = true
	}
	// The endpoint's in-flight cap, as the step checks it before the claim;
	// a healthy endpoint's slots free as its answers come (about overhead +
	// the mean answer time each).
	if s.o.EndpointCap > 0 && a.rank != 0 {
		perSec := float64(s.o.EndpointCap) / (s.w.Overhead + s.tfast[1])
		if ep != nil {
			allowed = min(allowed, s.freeSlots(ep, t))
			if !s.down(ep, t) {
				allowed = min(allowed, max(int(perSec-ep.sent), 0))
			}
		} else {
			allowed = min(allowed, max(int(float64(a.healthy)*perSec-a.healthySent), 0))
		}
	}
	if rest := min(c.n, allowed) - c.n; rest < 0 {
		if !act.Probe {
			confirm(-rest) // its slots all held, as read
		}
		r := *c
		r.n = -rest
		r.deferrals++
		r.probe = false
		r.until = t + s.capWait(r.deferrals, t)
		q.fastOther += float64(r.n)
		s.m.CapDeferrals += float64(r.n)
		s.defer_(&r, ep, t)
	}
	if allowed <= 0 {
		return
	}
	c.n = min(c.n, allowed)
	late := t-c.until > slotTolerance
	if a.rate > 0 && !(c.slotted && (s.o.KeepLateSlots || !late)) {
		go_ := s.reserve(a, c.acct, c, t)
		if go_ == 0 {
			q.fastOther += float64(c.n)
			return
		}
		c.n = go_
	}
	c.slotted = false
	if ep != nil {
		ep.sent += float64(c.n)
	} else {
		a.healthySent += float64(c.n)
	}
	s.attempt(c, a, ep, q, t)
}

// capWait is how long the step puts back a message that found its
// endpoint's slots all held, the deferrals-th time (lifecycle.Step on a
// full claim: its back-off, doubling from 1 s to 30 s, and its jitter).
func (s *Sim) capWait(deferrals int, t float64) float64 {
	k := lifecycle.Known{Msg: lifecycle.Message{Kind: lifecycle.KindDeliver, Received: 1, Deferred: deferrals - 1},
		Now: toTime(t), Seed: s.rnd.Uint64(), Claim: lifecycle.ClaimFull}
	return fromTime(lifecycle.Step(k, lifecycle.Policy{}).Until) - t
}

// toSlowLane puts a fast-lane message back on the slow lane at once (the
// step's put-back: a second at least, a send; no DynamoDB unit).
func (s *Sim) toSlowLane(c *cohort, q *queue, t float64) {
	n := float64(c.n)
	q.fastOther += n
	s.m.LaneMoves += n
	s.m.SQSRequests += n
	c.lane = lifecycle.LaneSlow
	c.until = t + 1
	s.wait(c, t, false)
}

// freeSlots is how many of the endpoint's in-flight slots are free:
// lifecycle.FreeSlots over its leases (one per attempt in progress).
func (s *Sim) freeSlots(ep *endpoint, t float64) int {
	clear(s.leases)
	for i := range min(ep.inflight, s.o.EndpointCap) {
		s.leases[itoa(i)] = domain.Lease{Until: millis(t + probeLease), Claim: "c"}
	}
	e := ep.dom
	e.Leases = s.leases
	return len(lifecycle.FreeSlots(e, s.o.EndpointCap, toTime(t), 0, nil))
}

// defer_ puts back a due message that may not go now (the breaker, the
// cap): on its endpoint's lane (the step's laneAfter), moving the due time
// where the step's putBack would (MoveDue, by lifecycle.KeepsDue: the wait
// ends more than half the sweep grace after the delivery's due time).
func (s *Sim) defer_(c *cohort, ep *endpoint, t float64) {
	c.slotted = false // its slot was for now: the attempt after the wait books a new one
	c.lane = lifecycle.LaneFast
	if ep != nil && s.slow != nil {
		c.lane = lifecycle.LaneOf(ep.dom, toTime(t))
	}
	if !lifecycle.KeepsDue(millis(c.due), toTime(c.until), sweepGrace) {
		s.m.WCU += float64(c.n) * cost.MoveDueWrites
		s.sweepWCU += float64(c.n) * cost.SweepMoveWrite
		c.due = c.until
	}
	s.wait(c, t, true)
}

// heldParts is how many parts a cohort its endpoint's breaker holds comes
// back in: each part one delivery to lifecycle.Decide, which spreads held
// deliveries over a quarter of the pause by their ids (lifecycle.HeldSpread);
// the backlog of an outage, made over many seconds, spreads over the window.
const heldParts = 8

// heldByBreaker says whether ep's breaker holds its deliveries at t (open,
// or another worker probing) rather than a Retry-After pause.
func (s *Sim) heldByBreaker(ep *endpoint, t float64) bool {
	if ep == nil || ep.dom.PausedUntil > millis(t) {
		return false
	}
	st := lifecycle.BreakerOf(ep.dom, toTime(t))
	return st == lifecycle.BreakerOpen || st == lifecycle.BreakerProbing
}

// holdSpread defers c's messages, held by ep's breaker, in up to heldParts
// parts, each until Decide's wait for a delivery of its own (or dead-lettered
// where Decide says its deadline has come).
func (s *Sim) holdSpread(c *cohort, ep *endpoint, t float64) {
	k := min(c.n, heldParts)
	for i := range k {
		r := *c
		r.n = c.n / k
		if i < c.n%k {
			r.n++
		}
		in := s.input(&r, ep, t)
		// Each part a delivery id of its own, and of its cohort's (the
		// second its events were made): the real deliveries' ids spread
		// them over the whole HeldSpread window. With the same eight ids for
		// every cohort, a whole outage's backlog came back in eight seconds
		// (a 414 % ACCT# peak at the 1x outage's end that ids would not make).
		id := "d" + itoa(i) + "." + itoa(int(c.created))
		in.Delivery.ID, in.Msg.DeliveryID = id, id
		switch act := lifecycle.Decide(in); act.Verb {
		case lifecycle.Wait:
			r.until = fromMillis(act.Until.UnixMilli())
			s.defer_(&r, ep, t)
		case lifecycle.Fail, lifecycle.DeadLetter:
			s.deadLetter(float64(r.n))
			s.final(&r, t)
		}
	}
}

func (s *Sim) input(c *cohort, ep *endpoint, t float64) lifecycle.Input {
	s.sd = domain.Delivery{ID: "d", AccountID: "a", EndpointID: "e", EventID: "v", Status: domain.StatusPending, Gen: 1,
		Attempts: c.attempts, NextAttemptAt: millis(c.next), CreatedAt: millis(c.created), ExpiresAt: toTime(c.created).Unix() + 30*24*3600}
	s.se = domain.Endpoint{ID: "e", AccountID: "a"}
	if ep != nil {
		s.se = ep.dom
		s.se.ID, s.se.AccountID = "e", "a" // the delivery's
	}
	s.sv = domain.Event{ID: "v", AccountID: "a"}
	return lifecycle.Input{Msg: lifecycle.Message{DeliveryID: "d", AccountID: "a", EndpointID: "e", EventID: "v", Gen: 1},
		Delivery: &s.sd, Endpoint: &s.se, Event: &s.sv, Now: toTime(t), MaxAttempts: s.sched.MaxAttempts(),
		Deadline: lifecycle.Deadline(s.sd, s.sched, time.Duration(s.w.DeadTimeout*float64(time.Second)))}
}

// attempt sends c's messages: to a down endpoint they time out (the
// invocation waits the timeout); to a healthy one most succeed. It bills
// the claim, the attempt (its own item past the first ones), the outcome and
// the slot's take and release.
func (s *Sim) attempt(c *cohort, a *account, ep *endpoint, q *queue, t float64) {
	n := float64(c.n)
	s.m.Attempts += n
	w := float64(cost.ClaimWrite + cost.AttemptWrite + cost.OutcomeWrite)
	if c.attempts >= cost.AttemptsLoggedOnDelivery {
		w += cost.AttemptOwnWrite
	}
	if s.o.EndpointCap > 0 {
		w += cost.SlotWrites
		if ep != nil {
			ep.slotWCU += cost.SlotWrites * n
			s.touchE(ep)
		} else if a.rank != 0 {
			a.healthySlot += cost.SlotWrites * n
		}
	}
	s.m.WCU += w * n
	if s.o.EndpointCap == 0 { // with the cap, the slot's take checks the endpoint's route
		s.m.RCU += cost.ClaimEndpointReread * n
		if a.rank != 0 {
			a.acctRCU += cost.ClaimEndpointReread * n
		}
	}
	if s.down(ep, t) {
		ep.inflight += c.n
		q.slow += n
		g := q.group(c.acct)
		g.slowHeld += n
		at := t + s.w.DeadTimeout
		s.eng.At(at, func() {
			ep.inflight -= c.n
			g.slowHeld -= n
			s.settle(c, a, ep, destination.Outcome{Verdict: destination.Retry, NoAnswer: true, Class: "timeout"}, at)
		})
		return
	}
	q.fastAttempt += n
	p := s.w.Transient5xx + (1 - s.lat.CDF(s.w.DeadTimeout))
	nf := carry(&s.failCarry, n*p)
	nr := carry(&s.rejCarry, n*s.w.Reject4xx)
	nf, nr = min(nf, c.n), min(nr, c.n-min(nf, c.n))
	ok := c.n - nf - nr
	if ep != nil && ok > 0 {
		s.afterAttempt(ep, a, answer(200), c.probe, 1, t)
	}
	s.m.Delivered += float64(ok)
	s.m.WCU += float64(ok) * cost.DeliveredSweepWrite
	s.sweepWCU += float64(ok) * cost.DeliveredSweepWrite
	if !a.affected {
		s.m.wait(t-c.created, float64(ok), a.rank == 0)
	}
	if ep == nil && a.rank != 0 && s.slow != nil {
		// A success on the slow lane is the first after its endpoint's
		// failure: failing_since is cleared, the lane is the fast one again.
		if c.lane == lifecycle.LaneSlow && a.failing > 0 {
			cleared := min(a.failing, ok)
			a.failing -= cleared
			s.m.WCU += float64(cleared) * cost.EndpointHealthWrite
			a.acctWCU += float64(cleared) * cost.EndpointHealthWrite
		}
		// A 5xx makes a healthy endpoint failing until its next success,
		// but for a delivery's first attempt, a blip (lifecycle.Blip).
		blip := lifecycle.Blip(domain.Endpoint{}, c.attempts+1, answer(503), lifecycle.Outcome{Status: domain.StatusPending})
		if turned := min(nf, a.healthy-a.failing); turned > 0 && !blip {
			a.failing += turned
			s.m.WCU += float64(turned) * cost.EndpointHealthWrite
			a.acctWCU += float64(turned) * cost.EndpointHealthWrite
		}
	}
	for range nf {
		one := *c
		one.n = 1
		s.settle(&one, a, nil, answer(503), t)
	}
	if nr > 0 {
		one := *c
		one.n = nr
		s.settle(&one, a, nil, answer(400), t)
	}
}

// carry adds x to an accumulator and takes out its whole part.
func carry(acc *float64, x float64) int {
	*acc += x
	w := math.Floor(*acc)
	*acc -= w
	return int(w)
}

// afterAttempt is the endpoint update after n attempts' answers, as the
// store writes it (updateHealth): failing_since, and the breaker as
// lifecycle.BreakerAfterAttempt moves it. One write per attempt that
// changes anything.
func (s *Sim) afterAttempt(ep *endpoint, a *account, res destination.Outcome, probe bool, n int, t float64) {
	healthy := res.Verdict == destination.Delivered
	for i := range n {
		e := &ep.dom
		changed := false
		if healthy && e.FailingSince != 0 {
			e.FailingSince, changed = 0, true
		}
		if !healthy && e.FailingSince == 0 {
			e.FailingSince, changed = millis(t), true
		}
		if s.o.Breaker {
			ch := lifecycle.BreakerAfterAttempt(*e, res, probe && i == 0, toTime(t), s.rnd)
			s.applyBreaker(e, ch)
			changed = changed || ch.On != ""
			if ch.On == lifecycle.BreakerTripped {
				s.m.BreakersOpened++
			}
		}
		if changed {
			s.m.WCU += cost.EndpointHealthWrite
			a.acctWCU += cost.EndpointHealthWrite
		}
	}
}

// applyBreaker writes a breaker change the way the store does
// (breakerWrites).
func (s *Sim) applyBreaker(e *domain.Endpoint, c lifecycle.BreakerChange) {
	switch {
	case c.Close:
		e.BreakerFails, e.BreakerOpenUntil, e.BreakerPauseMs, e.BreakerProbeUntil = 0, 0, 0, 0
	case c.OpenUntil != 0 && c.On == lifecycle.BreakerTripped:
		if e.BreakerOpenUntil == 0 {
			e.BreakerOpenUntil, e.BreakerPauseMs = c.OpenUntil, c.PauseMs
		}
		e.BreakerFails = 0
	case c.OpenUntil != 0:
		e.BreakerOpenUntil, e.BreakerPauseMs, e.BreakerFails, e.BreakerProbeUntil = c.OpenUntil, c.PauseMs, 0, 0
	case c.Count:
		e.BreakerFails++
	}
}

// settle applies lifecycle.Settle to the failed attempts of c, one message
// at a time (each draws its own jitter), and the endpoint's update.
func (s *Sim) settle(c *cohort, a *account, ep *endpoint, res destination.Outcome, t float64) {
	ans := lifecycle.Answer{Outcome: res}
	if ep != nil {
		s.afterAttempt(ep, a, res, c.probe, c.n, t)
	}
	for range c.n {
		d := domain.Delivery{Attempts: c.attempts + 1, CreatedAt: millis(c.created)}
		o := lifecycle.Settle(d, ans, toTime(t), s.sched, s.rnd, lifecycle.Deadline(d, s.sched, time.Duration(s.w.DeadTimeout*float64(time.Second))))
		if o.Status != domain.StatusPending {
			s.deadLetter(1)
			s.final(c, t)
			continue
		}
		s.m.Retries++
		r := *c
		if !lifecycle.KeepsDue(millis(c.due), time.UnixMilli(o.NextAttemptAt), sweepGrace) {
			s.m.WCU += cost.SweepMoveWrite
			s.sweepWCU += cost.SweepMoveWrite
			r.due = fromMillis(o.NextAttemptAt)
		}
		r.n, r.attempts, r.deferrals, r.slotted, r.probe = 1, c.attempts+1, 0, false, false
		r.lane = lifecycle.LaneFast
		if s.slow != nil {
			r.lane = lifecycle.LaneSlow // the step's laneAfter: the attempt failed
		}
		r.next = fromMillis(o.NextAttemptAt)
		r.until = r.next
		s.wait(&r, t, true)
	}
}

// final notes c's deliveries failing at t, against their deadline.
func (s *Sim) final(c *cohort, t float64) {
	dl := lifecycle.Deadline(domain.Delivery{CreatedAt: millis(c.created)}, s.sched, time.Duration(s.w.DeadTimeout*float64(time.Second)))
	if past := t - fromMillis(dl.UnixMilli()); !s.pastSeen || past > s.m.PastDeadline {
		s.m.PastDeadline, s.pastSeen = past, true
	}
}

// deadLetter: the DLQ message, and the failed delivery's sweep entry out and
// status index entry in (the outcome write itself is the attempt's).
func (s *Sim) deadLetter(n float64) {
	s.m.DLQ += n
	s.m.SQSRequests += n
	s.m.WCU += n * cost.FailWrites
	s.sweepWCU += n * cost.SweepRemoveWrite
}

func (s *Sim) touch(a *account) {
	if !a.touched {
		a.touched = true
		s.touchedA = append(s.touchedA, a)
	}
}

func (s *Sim) touchE(e *endpoint) {
	if !e.touched {
		e.touched = true
		s.touchedE = append(s.touchedE, e)
	}
}

// answer is the webhook provider's outcome of an HTTP answer.
func answer(status int) destination.Outcome {
	return destination.Outcome{Status: status, Verdict: webhook.VerdictOf(status, 0)}
}
