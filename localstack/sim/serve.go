package main

import (
	"math"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/retry"
)

// serve runs one second of a queue's event source mapping with cap
// concurrent invocations: it takes visible messages while the second's
// concurrency lasts and SQS lets it receive, and returns the concurrency
// used and the queue's messages in flight.
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
			if t-q.visible[q.head].vis > 60 {
				if cap >= float64(s.o.MaxConcurrency) {
					s.m.bind("deliver mapping maximum concurrency (backlog older than 60 s)", t)
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
		c := q.visible[q.head]
		fit := int(math.Max(1, math.Min((budget-used)/per, room-taken)))
		if c.n > fit {
			part := *c
			part.n = fit
			c.n -= fit
			q.nvis -= fit
			s.process(&part, q, t)
			taken += float64(fit)
			continue
		}
		q.pop()
		taken += float64(c.n)
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
	s.m.processedOther += q.fastOther
	s.m.processedSlow += q.slow
	s.m.Invocations += k
	s.m.SQSRequests += 2 * math.Ceil(k) // ReceiveMessage and DeleteMessageBatch per batch
	s.m.LambdaDeliverGBs += (slowInv*(s.w.DeadTimeout+s.w.Overhead) + fastInv*tf) * memoryGB
	if q.nvis > 0 {
		q.pollers = min(float64(s.o.MaxConcurrency), q.pollers+s.o.ScaleUpPerMinute/60)
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

// process is the worker on one cohort of received messages, the way
// shared/delivery's process does it: a message early for its slot goes back;
// otherwise lifecycle.Decide decides; an attempt takes a rate-limit slot and
// an endpoint slot, then lifecycle.Settle settles its answer.
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
	s.m.RCU += 3 * n // LoadForAttempt: delivery, endpoint, body
	if a.rank != 0 {
		a.acctRCU += n
		s.touch(a)
	}
	act := lifecycle.Decide(s.input(c, ep, t))
	switch act.Verb {
	case lifecycle.Wait:
		q.fastOther += n
		c.until = fromMillis(act.Until.UnixMilli())
		s.defer_(c, t)
		return
	case lifecycle.Fail, lifecycle.DeadLetter:
		s.deadLetter(n)
		return
	case lifecycle.Drop, lifecycle.Quarantine:
		return
	}
	// The endpoint's cap and breaker first, as the worker takes its endpoint
	// slot before its rate-limit slot.
	allowed := c.n
	outage := ep != nil && ep.down && t >= s.w.OutageAt && t < s.w.OutageAt+s.w.OutageFor
	if ep != nil && s.o.EndpointCap > 0 {
		allowed = min(allowed, max(s.o.EndpointCap-ep.inflight, 0))
		if !outage { // a healthy answer frees its slot in about (overhead + mean answer time)
			perSec := float64(s.o.EndpointCap) / (s.w.Overhead + s.tfast[1])
			allowed = min(allowed, max(int(perSec-ep.sent), 0))
		}
	}
	if ep != nil && ep.open {
		allowed = min(allowed, max(1-ep.inflight, 0)) // half open: one probe at a time
		if allowed > 0 {
			ep.pausedUntil = t + ep.probeWait
		}
	}
	if rest := c.n - allowed; rest > 0 {
		r := *c
		r.n = rest
		r.deferrals++
		d := capBackoff(r.deferrals)
		r.until = t + d + s.rnd.Float64()*d/4
		if ep.open {
			r.until = ep.pausedUntil // held by the breaker
		}
		q.fastOther += float64(rest)
		s.m.CapDeferrals += float64(rest)
		s.defer_(&r, t)
	}
	if allowed == 0 {
		return
	}
	c.n = allowed
	if a.rate > 0 && !(c.slotted && (s.o.KeepLateSlots || t-c.until <= slotTolerance)) {
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
	}
	s.attempt(c, a, ep, q, t)
}

// defer_ puts back a due message that may not go now (an endpoint pause,
// the cap): it moves the due time when the wait is long (PushDue).
func (s *Sim) defer_(c *cohort, t float64) {
	c.slotted = false // its slot was for now: the attempt after the wait books a new one
	if c.until-t > sweepGraceHalf {
		s.m.WCU += float64(c.n)
		s.sweepWCU += 2 * float64(c.n)
	}
	s.wait(c, t, true)
}

func (s *Sim) input(c *cohort, ep *endpoint, t float64) lifecycle.Input {
	ms := func(x float64) int64 { return toTime(x).UnixMilli() }
	s.sd = domain.Delivery{ID: "d", AccountID: "a", EndpointID: "e", EventID: "v", Status: domain.StatusPending, Gen: 1,
		Attempts: c.attempts, NextAttemptAt: ms(c.next), CreatedAt: ms(c.created), ExpiresAt: toTime(c.created).Unix() + 30*24*3600}
	s.se = domain.Endpoint{ID: "e", AccountID: "a"}
	if ep != nil && ep.pausedUntil > t {
		s.se.PausedUntil = ms(ep.pausedUntil)
	}
	s.sv = domain.Event{ID: "v", AccountID: "a"}
	return lifecycle.Input{Msg: lifecycle.Message{DeliveryID: "d", AccountID: "a", EndpointID: "e", EventID: "v", Gen: 1},
		Delivery: &s.sd, Endpoint: &s.se, Event: &s.sv, Now: toTime(t), MaxAttempts: s.sched.MaxAttempts()}
}

// attempt sends c's messages: to a down endpoint they time out (the
// invocation waits the timeout); to a healthy one most succeed.
func (s *Sim) attempt(c *cohort, a *account, ep *endpoint, q *queue, t float64) {
	n := float64(c.n)
	s.m.Attempts += n
	claimWCU, acctWCU := 16.0, 4.0
	if s.o.EndpointCap == 0 {
		claimWCU, acctWCU = 11, 0
	}
	s.m.WCU += claimWCU * n
	if a.rank != 0 {
		a.acctWCU += acctWCU * n
	}
	if ep != nil {
		ep.gsiWCU += 6 * n
		s.touchE(ep)
	} else if a.rank != 0 {
		a.healthyGSI += 6 * n
	}
	if ep != nil && ep.down && t >= s.w.OutageAt && t < s.w.OutageAt+s.w.OutageFor {
		ep.inflight += c.n
		q.slow += n
		s.eng.At(t+s.w.DeadTimeout, func() {
			ep.inflight -= c.n
			s.settle(c, ep, retry.Result{ErrorClass: retry.ErrTimeout}, t+s.w.DeadTimeout)
		})
		return
	}
	q.fastAttempt += n
	if ep != nil && ep.open { // the probe came back: close the breaker
		ep.open, ep.consec, ep.pausedUntil = false, 0, 0
	}
	p := s.w.Transient5xx + (1 - s.lat.CDF(s.w.DeadTimeout))
	nf := carry(&s.failCarry, n*p)
	nr := carry(&s.rejCarry, n*s.w.Reject4xx)
	nf, nr = min(nf, c.n), min(nr, c.n-min(nf, c.n))
	ok := c.n - nf - nr
	s.m.Delivered += float64(ok)
	s.sweepWCU += float64(ok)
	if !a.affected {
		s.m.wait(t-c.created, float64(ok))
	}
	for range nf {
		one := *c
		one.n = 1
		s.settle(&one, nil, retry.Result{StatusCode: 503}, t)
	}
	if nr > 0 {
		one := *c
		one.n = nr
		s.settle(&one, nil, retry.Result{StatusCode: 400}, t)
	}
}

// carry adds x to an accumulator and takes out its whole part.
func carry(acc *float64, x float64) int {
	*acc += x
	w := math.Floor(*acc)
	*acc -= w
	return int(w)
}

// settle applies lifecycle.Settle to the failed attempts of c, one message
// at a time (each draws its own jitter), and moves the endpoint's breaker.
func (s *Sim) settle(c *cohort, ep *endpoint, res retry.Result, t float64) {
	ans := lifecycle.Answer{Result: res, Verdict: retry.Classify(res)}
	if ep != nil && res.ErrorClass == retry.ErrTimeout {
		ep.consec += c.n
		if s.o.Breaker > 0 && ep.consec >= s.o.Breaker {
			if ep.open {
				ep.probeWait = min(2*ep.probeWait, probeMax)
			} else {
				ep.open, ep.probeWait = true, probeFirst
			}
			// Jitter (±20 %) keeps breakers opened together from probing together.
			ep.pausedUntil = t + ep.probeWait*(0.8+0.4*s.rnd.Float64())
		}
	}
	for range c.n {
		d := domain.Delivery{Attempts: c.attempts + 1, CreatedAt: toTime(c.created).UnixMilli()}
		o := lifecycle.Settle(d, ans, toTime(t), s.sched, s.rnd)
		if o.Status != domain.StatusPending {
			s.deadLetter(1)
			s.sweepWCU++
			continue
		}
		s.m.Retries++
		s.sweepWCU += 2
		r := *c
		r.n, r.attempts, r.deferrals, r.slotted = 1, c.attempts+1, 0, false
		r.next = fromMillis(o.NextAttemptAt)
		r.until = r.next
		s.wait(&r, t, true)
	}
}

func (s *Sim) deadLetter(n float64) {
	s.m.DLQ += n
	s.m.SQSRequests += n
	s.m.WCU += 2 * n
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

// partitions checks the second's use of the hot partitions: each followed
// account's item collection (account + endpoints), its limiter item, its
// endpoints' index partitions, and the sweep index's shards.
func (s *Sim) partitions(t float64) {
	hot := func(name string, v, limit float64) {
		if v > s.m.HotWCU && limit == s.o.PartitionWCU {
			s.m.HotWCU, s.m.HotWCUName, s.m.HotWCUAt = v, name, t
		}
		if v > limit {
			s.m.bindAs("DynamoDB partition "+kindOf(name), "DynamoDB partition: "+name, t)
		}
	}
	for _, a := range s.touchedA {
		if a.rank == 0 { // many small accounts, none of them hot
			a.acctWCU, a.acctRCU, a.rateWCU, a.healthyGSI, a.touched = 0, 0, 0, 0, false
			continue
		}
		if a.healthy > 0 {
			hot("EP#<endpoint> of "+accountName(a, "")+" (delivery log indexes)", a.healthyGSI/float64(a.healthy), s.o.PartitionWCU)
		}
		hot(accountName(a, "ACCT#")+" (account + endpoint items, writes)", a.acctWCU, s.o.PartitionWCU)
		hot(accountName(a, "RATE#")+" (rate limiter)", a.rateWCU, s.o.PartitionWCU)
		if a.acctRCU > s.o.PartitionRCU {
			s.m.bindAs("DynamoDB partition reads", "DynamoDB partition reads: "+accountName(a, "ACCT#"), t)
		}
		s.m.HotRCU = max(s.m.HotRCU, a.acctRCU)
		a.acctWCU, a.acctRCU, a.rateWCU, a.healthyGSI, a.touched = 0, 0, 0, 0, false
	}
	for _, e := range s.touchedE {
		hot("EP#<endpoint> of "+accountName(s.accts[e.acct], "")+" (delivery log indexes)", e.gsiWCU, s.o.PartitionWCU)
		e.gsiWCU, e.sent, e.touched = 0, 0, false
	}
	hot("sweep index shard (1 of 16)", s.sweepWCU/16, s.o.PartitionWCU)
	s.touchedA, s.touchedE, s.sweepWCU = s.touchedA[:0], s.touchedE[:0], 0
}

func accountName(a *account, prefix string) string {
	return prefix + "account ranked " + itoa(a.rank)
}

// kindOf is a partition's kind: its name up to the first space or '#'.
func kindOf(name string) string {
	for i, r := range name {
		if r == '#' || r == ' ' {
			return name[:i]
		}
	}
	return name
}
