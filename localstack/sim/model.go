package main

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/gifq/webhooks/shared/cost"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/schema"
)

// cohort is n messages that share everything the decisions look at: the
// account, the endpoint, the attempts made, when they were posted and when
// their next step is due. A healthy second of traffic is one cohort per
// account; every failed attempt becomes its own cohort (its own jitter).
type cohort struct {
	acct, ep  int32 // ep < 0: the account's endpoints that are never down
	n         int
	attempts  int
	deferrals int
	created   float64 // when the producer first posted the event
	next      float64 // the delivery's next_attempt_at
	due       float64 // the delivery's due_at, its sweep index entry's time
	bare      bool    // its message carries no event body (the scheduler's): the load reads the event's item
	first     bool    // ingest's own first message (queue.Message.First): the load does not read the delivery
	until     float64 // when the message should be looked at again
	slotted   bool    // until is a rate-limit slot booked for the next attempt
	vis       float64 // when it became visible in the queue
	seq       uint64  // the order it became visible in
	lane      lifecycle.Lane
	probe     bool // this attempt is its endpoint's breaker probe
}

type batchAt struct {
	at float64
	n  int
}

type account struct {
	rank       int
	events     float64 // mean events/s
	fanout     float64 // deliveries per event
	eps        []int32 // all its endpoints
	healthy    int     // how many are never down: their messages share cohorts (ep -1)
	downEps    []int32 // the ones that go down: cohorts of their own
	queryUnits float64 // ingest's strong query of the account and its endpoints, read units
	rate       float64 // deliveries/s (the limiter); 0: not limited (background)
	ivl        time.Duration
	lim        ratelimit.State // the RATE# item
	keyRate    float64         // the per-key API limit, requests/s
	keyBurst   float64
	keyToken   float64
	affected   bool // owns a down endpoint, or is the burster: left out of the latency figures
	queue      int
	backlog    []batchAt // the producer's events not yet accepted
	carry      float64
	// healthy endpoints failing after a 5xx (failing_since set) until a
	// success: their messages travel the slow lane meanwhile (LaneOf)
	failing   int
	moveCarry float64
	bookings  float64 // the worker's this second
	slotsSec  float64 // slots ingest booked this second: the account's own demand
	demand    float64 // slotsSec, averaged over about a minute (as of demandAt)
	demandAt  float64
	// this second's use of its partitions
	acctRCU, acctWCU, rateWCU, keyWCU, eventsWCU float64
	healthyLog, healthySlot, healthySent         float64 // its never-down endpoints', all together
	touched                                      bool
}

type endpoint struct {
	acct     int32
	down     bool
	dom      domain.Endpoint // health and breaker, as the store keeps them
	inflight int
	sent     float64 // attempts this second (a healthy endpoint's cap allows cap/answer time a second)
	logWCU   float64 // this second, its endpoint_log index partition
	slotWCU  float64 // this second, its SLOT# item
	touched  bool
}

type queue struct {
	name      string
	maxConc   float64
	groups    map[int32]*group
	order     []*group
	ready     groupHeap
	seq       uint64
	nvis      int
	noisy     int
	pollers   float64
	hidden    int
	slowSlots [32]float64 // concurrency held by invocations waiting on a dead endpoint, by second
	slowMsgs  [32]float64 // the messages in them (in flight until the invocation ends)
	debt      float64
	// this second
	fastAttempt, fastOther, slow float64
}

// newQueue is a queue whose mapping starts the day warm (the night before
// kept its pollers up): they scale down to what the first second uses.
func newQueue(name string, maxConc int) *queue {
	return &queue{name: name, maxConc: float64(maxConc), groups: map[int32]*group{}, pollers: float64(maxConc)}
}

// Sim is one run: a workload under one set of options.
type Sim struct {
	o        Options
	w        Workload
	scale    float64
	eng      Engine
	rnd      *rand.Rand
	sched    retry.Schedule
	pastSeen bool // a delivery failed: m.PastDeadline holds
	lat      lognormal
	tfast    [11]float64 // mean of the slowest of k healthy answers
	accts    []*account
	eps      []*endpoint
	queues   []*queue // the fast lane's
	slow     *queue   // the slow lane's; nil without one
	all      []*queue
	burst    int // index of the flooding account

	apiTokens  float64
	failCarry  float64
	rejCarry   float64
	sweepWCU   float64 // this second, all shards
	pacedSec   float64 // messages sent this second with a queue delay (lifecycle.PacedLane): the paced lane's
	touchedA   []*account
	touchedE   []*endpoint
	ddbWaiting int
	timed      int // messages on a delay (DelaySeconds) not yet visible
	m          Metrics
	trace      func(format string, a ...any) // hourly state, when set
	leases     map[string]domain.Lease       // scratch for lifecycle.FreeSlots
	// scratch for lifecycle.Decide's input, reused
	sd domain.Delivery
	se domain.Endpoint
	sv domain.Event
}

var epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func toTime(t float64) time.Time { return epoch.Add(time.Duration(t * float64(time.Second))) }
func fromTime(t time.Time) float64 {
	return t.Sub(epoch).Seconds()
}
func fromMillis(ms int64) float64 {
	return float64(ms-epoch.UnixMilli()) / 1000
}
func millis(t float64) int64 { return toTime(t).UnixMilli() }

// NewSim builds the accounts and endpoints of the workload at scale.
func NewSim(o Options, w Workload, scale float64, seed uint64) *Sim {
	s := &Sim{o: o, w: w, scale: scale, rnd: rand.New(rand.NewPCG(seed, 11)), sched: retry.Default(), lat: w.latency(),
		leases: map[string]domain.Lease{}}
	for k := 1; k <= 10; k++ {
		s.tfast[k] = s.lat.meanMax(k, w.DeadTimeout, s.rnd)
	}
	for range o.Queues {
		s.queues = append(s.queues, newQueue("fast lane", o.MaxConcurrency))
	}
	s.all = s.queues
	if o.SlowConcurrency > 0 {
		s.slow = newQueue("slow lane", o.SlowConcurrency)
		s.all = append(append([]*queue{}, s.queues...), s.slow)
	}
	z := NewZipf(w.Accounts, w.ZipfS)
	epsTotal := 0
	for r := 1; r <= w.Accounts; r++ {
		epsTotal += fanout(r)
	}
	// The endpoints that go down: a fraction of all endpoints, or every
	// endpoint of a fraction of the accounts.
	down := map[int]bool{}
	deadAcct := map[int]bool{}
	for len(down) < int(math.Round(w.DownFraction*float64(epsTotal))) {
		down[s.rnd.IntN(epsTotal)] = true
	}
	for len(deadAcct) < int(math.Round(w.DeadAccounts*float64(w.Accounts))) {
		deadAcct[1+s.rnd.IntN(w.Accounts)] = true
	}
	// Accounts worth following one by one: the 50 largest, the burster, and
	// every account with a down endpoint. The rest are one background
	// account per queue, healthy and far below their rate.
	bg := make([]*account, o.Queues)
	for i := range bg {
		bg[i] = &account{rank: 0, queue: i, queryUnits: 1}
	}
	bgEvents, bgDeliveries := make([]float64, o.Queues), make([]float64, o.Queues)
	epIdx := 0
	for r := 1; r <= w.Accounts; r++ {
		f := fanout(r)
		deliveries := z.Share(r) * w.DeliveriesPerDay * scale / day
		events := deliveries / float64(f)
		isDown := func(i int) bool { return down[epIdx+i] || deadAcct[r] }
		hasDown := false
		for i := range f {
			hasDown = hasDown || isDown(i)
		}
		if r <= 50 || r == w.BurstRank || hasDown {
			a := &account{rank: r, events: events, fanout: float64(f), queue: r % o.Queues, affected: hasDown || r == w.BurstRank}
			// The account item and its endpoints' (~315 B each), one read
			// unit per 4 KB, strongly consistent.
			a.queryUnits = cost.IngestAccountRead * math.Ceil(float64(1+f)*0.315/4)
			a.rate = max(w.RateFloor, w.RateHeadroom*deliveries)
			a.ivl = ratelimit.Interval(a.rate) // to the microsecond
			a.keyRate = max(o.PerKeyRate, w.RateHeadroom*events)
			a.keyBurst = max(o.PerKeyBurst, 2*a.keyRate)
			a.keyToken = a.keyBurst
			for i := range f {
				id := int32(len(s.eps))
				a.eps = append(a.eps, id)
				s.eps = append(s.eps, &endpoint{acct: int32(len(s.accts)), down: isDown(i),
					dom: domain.Endpoint{ID: "e" + itoa(int(id)), AccountID: "a" + itoa(r)}})
				if isDown(i) {
					a.downEps = append(a.downEps, id)
				} else {
					a.healthy++
				}
			}
			if r == w.BurstRank {
				s.burst = len(s.accts)
			}
			s.accts = append(s.accts, a)
		} else {
			q := r % o.Queues
			bgEvents[q] += events
			bgDeliveries[q] += deliveries
		}
		epIdx += f
	}
	for i, a := range bg {
		a.events, a.fanout = bgEvents[i], bgDeliveries[i]/max(bgEvents[i], 1e-9)
		a.keyRate = math.Inf(1) // many producers, each far below any per-key limit
		s.accts = append(s.accts, a)
	}
	for _, q := range s.all {
		for i, a := range s.accts {
			q.group(int32(i)).background = a.rank == 0
		}
	}
	s.apiTokens = min(o.APIBurst, o.AccountAPIBurst)
	return s
}

// Run simulates the day and the drain after it.
func (s *Sim) Run(drain float64) Metrics {
	end := day + drain
	var tick func()
	t := 0.0
	tick = func() {
		s.step(t)
		t++
		if t < end {
			s.eng.At(t, tick)
		}
	}
	s.eng.At(0, tick)
	s.eng.RunUntil(end)
	s.finish()
	return s.m
}

func (s *Sim) step(t float64) {
	if t < day {
		s.arrive(t)
	}
	if t == s.w.BurstAt {
		s.accts[s.burst].backlog = append(s.accts[s.burst].backlog, batchAt{t, int(s.w.BurstEvents)})
	}
	s.api(t)
	pool := float64(s.o.AccountConcurrency) - s.m.apiConcNow
	want := 0.0
	for _, q := range s.all {
		want += min(q.maxConc, q.pollers)
	}
	share := 1.0
	if want > pool {
		share = pool / want
		s.m.bind("Lambda account concurrency", t)
	}
	conc, inflight, fastConc, slowConc := s.m.apiConcNow, 0.0, 0.0, 0.0
	for _, q := range s.all {
		c, f := s.serve(q, t, min(q.maxConc, q.pollers)*share)
		conc += c
		inflight = max(inflight, f)
		if q == s.slow {
			slowConc = max(slowConc, c)
		} else {
			fastConc = max(fastConc, c)
		}
	}
	if s.trace != nil && int(t)%1800 == 0 {
		for _, q := range s.all {
			s.trace("%s %s: visible %d hidden %d pollers %.0f debt %.0f noisy tenants %d\n", clock(t), q.name, q.nvis, q.hidden, q.pollers, q.debt, q.noisy)
		}
		s.trace("%s in DynamoDB %d conc %.0f in flight %.0f delivered %.2fM attempts %.2fM put back %.2fM lane moves %.2fM dead %.2fM timed %d\n",
			clock(t), s.ddbWaiting, conc, inflight, s.m.Delivered/1e6, s.m.Attempts/1e6, s.m.processedOther/1e6, s.m.LaneMoves/1e6, s.m.processedSlow/1e6, s.timed)
	}
	s.m.peak(&s.m.PeakConcurrency, &s.m.PeakConcurrencyAt, conc, t)
	s.m.peak(&s.m.PeakInFlight, &s.m.PeakInFlightAt, inflight, t)
	s.m.use("Lambda account concurrency", conc, float64(s.o.AccountConcurrency), t)
	s.m.use("SQS in-flight messages per queue", inflight, float64(s.o.InFlightLimit), t)
	s.m.use("fast lane mapping maximum concurrency", fastConc, float64(s.o.MaxConcurrency), t)
	if s.slow != nil {
		s.m.use("slow lane mapping maximum concurrency", slowConc, float64(s.o.SlowConcurrency), t)
	}
	if s.o.PacedConcurrency > 0 {
		// Not served here (its messages ride the fast lane in this model):
		// the concurrency its arrivals would hold, batches of up to
		// schema.PacedBatch each lasting about pacedInvocation.
		need := math.Ceil(s.pacedSec * pacedInvocation / schema.PacedBatch)
		s.m.use("paced lane mapping maximum concurrency (estimated)", need, float64(s.o.PacedConcurrency), t)
	}
	s.pacedSec = 0
	s.partitions(t)
}

// arrive adds the second's events to each producer's backlog.
func (s *Sim) arrive(t float64) {
	f := s.w.diurnal(t)
	for _, a := range s.accts {
		e := a.events*f + a.carry
		n := math.Floor(e)
		a.carry = e - n
		if n > 0 {
			a.backlog = append(a.backlog, batchAt{t, int(n)})
		}
	}
}

// api lets through what API Gateway's throttles allow: each key's own
// ingest limit first (with per-key limits), then the stage's shared bucket.
// Refused requests are retried by their producers a second later.
func (s *Sim) api(t float64) {
	// A token bucket refilled at rate and holding at most burst: in one
	// second it lets through what it held plus that second's refill.
	rate := min(s.o.APIRate, s.o.AccountAPIRate)
	s.apiTokens = min(min(s.o.APIBurst, s.o.AccountAPIBurst), s.apiTokens) + rate
	demand := make([]float64, len(s.accts))
	total := 0.0
	for i, a := range s.accts {
		d := 0
		for _, b := range a.backlog {
			d += b.n
		}
		// A producer posts what it has, up to what its client sends in a
		// second: the burster's up to BurstRPS, the others a few times
		// their mean (they back off when refused).
		dd := min(float64(d), max(20, 4*a.events))
		if i == s.burst {
			dd = min(float64(d), s.w.BurstRPS)
		}
		if s.o.PerKeyRate > 0 && !math.IsInf(a.keyRate, 1) {
			a.keyToken = min(a.keyBurst, a.keyToken+a.keyRate)
			if dd > a.keyToken {
				s.m.Throttled429 += dd - math.Floor(a.keyToken)
				s.m.bind("API per-key limit (a producer answered 429)", t)
				dd = math.Floor(a.keyToken)
			}
			a.keyToken -= dd
		}
		demand[i] = dd
		total += dd
	}
	ratio := 1.0
	s.m.use("API Gateway stage throttle", total, rate, t)
	if total > s.apiTokens {
		ratio = s.apiTokens / total
		s.m.bind("API Gateway stage/account throttle (every producer answered 429)", t)
	}
	accepted := 0.0
	for i, a := range s.accts {
		n := int(math.Floor(demand[i] * ratio))
		s.m.Throttled429 += demand[i] - float64(n)
		accepted += float64(n)
		for n > 0 && len(a.backlog) > 0 {
			b := &a.backlog[0]
			k := min(n, b.n)
			s.ingest(a, int32(i), k, b.at, t)
			b.n -= k
			n -= k
			if b.n == 0 {
				a.backlog = a.backlog[1:]
			}
		}
	}
	s.apiTokens -= accepted
	s.m.APIRequests += accepted
	s.m.apiConcNow = accepted * apiDuration
	s.m.LambdaAPIGBs += accepted * apiDuration * memoryGB
}

// ingest writes k events of account a (posted at created) and their
// deliveries, books their rate-limit slots and queues their messages, with
// the units of shared/cost's steps.
func (s *Sim) ingest(a *account, ai int32, k int, created, t float64) {
	s.touch(a)
	events, deliveries := float64(k), float64(k)*a.fanout
	s.m.WCU += events*cost.IngestEventWrites + deliveries*cost.IngestDeliveryWrites
	s.m.RCU += events * a.queryUnits
	s.m.SQSRequests += events * math.Ceil(a.fanout/10)
	s.sweepWCU += deliveries * cost.IngestSweepIndexWrite
	if a.rank == 0 { // background: healthy and never over its rate
		n := int(deliveries) + carry(&s.m.bgCarry, deliveries-math.Floor(deliveries))
		s.enqueueNew(&cohort{acct: ai, ep: -1, n: n, created: created, next: created, due: created}, t)
		return
	}
	a.acctRCU += events * a.queryUnits
	a.rateWCU += events * cost.IngestRateBookingWrite
	a.keyWCU += events * cost.IngestKeyLimitWrite
	a.eventsWCU += events * cost.IngestAccountEventsWrite
	a.healthyLog += events * cost.IngestLogIndexWrite * float64(a.healthy)
	for _, e := range a.downEps {
		s.eps[e].logWCU += events * cost.IngestLogIndexWrite
		s.touchE(s.eps[e])
	}
	// Ingest books each event's slots ahead (ReserveAhead with the lead).
	a.slotsSec += deliveries
	first, end := s.book(a, int(deliveries), t, ratelimit.Lead)
	if end <= t+maxWaitInWorker {
		for _, c := range s.cohorts(a, ai, k, created) {
			c.until, c.due = first, first // due_at is the slot (ingest's dueAt)
			s.paced(c, t)
			s.enqueueNew(c, t)
		}
		return
	}
	s.spread(a, ai, k, created, first, t)
}

// book is the account's limiter (ratelimit.Book, the rule its conditional
// writes carry out): n slots at now; it returns the first slot's start and
// the end of the last.
func (s *Sim) book(a *account, n int, t float64, lead time.Duration) (first, end float64) {
	r, st := ratelimit.Book(a.lim, toTime(t), n, a.ivl, lead)
	a.lim = st
	return fromTime(r.First), fromTime(st.TAT)
}

// cohorts are k events' messages of account a: one cohort for its healthy
// endpoints, one for each endpoint that goes down.
func (s *Sim) cohorts(a *account, ai int32, k int, created float64) []*cohort {
	var cs []*cohort
	if a.healthy > 0 {
		cs = append(cs, &cohort{acct: ai, ep: -1, n: k * a.healthy, created: created, next: created, due: created, until: created, slotted: true, first: true})
	}
	for _, e := range a.downEps {
		cs = append(cs, &cohort{acct: ai, ep: e, n: k, created: created, next: created, due: created, until: created, slotted: true, first: true})
	}
	return cs
}

// spread gives k events' messages slots from first on at the account's
// rate, one cohort set per second, each waiting for its slot.
func (s *Sim) spread(a *account, ai int32, k int, created, first, t float64) {
	per := a.rate / a.fanout // events' worth of slots per second
	left := k
	for sec := math.Floor(first); left > 0; sec++ {
		start := max(sec, first)
		n := max(1, min(left, int(math.Round((sec+1-start)*per))))
		left -= n
		for _, c := range s.cohorts(a, ai, n, created) {
			c.until, c.due, c.slotted = start, start, true
			s.paced(c, t)
			if start <= t+maxWaitInWorker {
				s.enqueueNew(c, t)
			} else {
				s.wait(c, t, false)
			}
		}
	}
}

// paced counts a cohort of a healthy endpoint sent at t for its slot (c.until) on the
// paced lane's arrivals, as lifecycle.PacedLane sorts it.
func (s *Sim) paced(c *cohort, t float64) {
	lane := lifecycle.LaneFast
	if c.ep >= 0 {
		lane = lifecycle.LaneOf(s.eps[c.ep].dom, toTime(t))
	}
	if lifecycle.PacedLane(lane, s.o.PacedConcurrency > 0, pace.Delay(toTime(c.until), toTime(t))) == lifecycle.LanePaced {
		s.pacedSec += float64(c.n)
	}
}

// enqueueNew puts a cohort in its account's fast-lane queue now (ingest
// sends every message on the fast lane).
func (s *Sim) enqueueNew(c *cohort, t float64) {
	c.lane = lifecycle.LaneFast
	s.queues[s.accts[c.acct].queue].push(c, t)
}

// laneQueue is the queue a cohort travels on.
func (s *Sim) laneQueue(c *cohort) *queue {
	if c.lane == lifecycle.LaneSlow && s.slow != nil {
		return s.slow
	}
	return s.queues[s.accts[c.acct].queue]
}

// wait parks a cohort until c.until, the way the waiting design does it.
// worker: the worker has received the message (it can be hidden); otherwise
// the api is sending it for the first time.
func (s *Sim) wait(c *cohort, t float64, worker bool) {
	q := s.laneQueue(c)
	d := c.until - t
	n := float64(c.n)
	back := func(at float64) {
		s.timed += c.n
		s.eng.At(at, func() { s.timed -= c.n; q.push(c, at) })
	}
	switch s.o.Waiting {
	case Hidden:
		if !worker {
			back(t + min(d, s.o.MaxDelay)) // the api's delayed send
			return
		}
		s.m.SQSRequests += n // ChangeMessageVisibility, one per message
		if d > s.o.MaxVisibility {
			s.m.bind("SQS visibility over 12 h refused (message back after the queue's timeout)", t)
			d = s.o.QueueVisibility
		}
		q.hidden += c.n
		s.eng.At(t+d, func() { q.hidden -= c.n; q.push(c, t+d) })
	case Delayed:
		if worker {
			s.m.SQSRequests += n // SendMessage (the received one is deleted with the batch)
		}
		back(t + min(d, s.o.MaxDelay))
	case Due, Mixed:
		if s.o.Waiting == Mixed && d <= s.o.MaxDelay {
			if worker {
				s.m.SQSRequests += n
			}
			back(t + d)
			return
		}
		// Parked in the delivery item (ParkDelivery); the scheduler finds it
		// in the park index.
		s.m.WCU += n * cost.ParkWrites
		s.sweepWCU += n * cost.SweepMoveWrite // the park moves the sweep entry to park_until
		c.due = c.until
		p := s.o.SchedulerEvery
		tick := math.Ceil(c.until/p) * p
		if s.o.Waiting == Mixed {
			tick -= p // picked up one period early, sent with a delay to its exact time
		}
		tick = max(tick, t)
		s.ddbWaiting += c.n
		s.eng.At(tick, func() {
			s.ddbWaiting -= c.n
			s.m.Scheduled += n
			s.m.SQSRequests += n / 10 // SendMessageBatch
			s.m.WCU += n * cost.UnparkWrites
			s.m.RCU += n * cost.ParkQueryReads
			c.bare, c.first = true, false // queue.For: the scheduler's message carries no body
			back(max(tick, c.until))
		})
	}
}

// reserve books slots on the account's limiter (the worker's booking: no
// lead) for messages about to be attempted without a slot of their own, and
// returns how many may go now; the rest wait for their later slots.
//
// The bookings of one invocation's batch share a write
// (ratelimit.ReserveAhead's group commit): an account's bookings in a
// second take one write per batch's worth (partitions bills them).
func (s *Sim) reserve(a *account, ai int32, c *cohort, t float64) int {
	a.bookings += float64(c.n)
	s.touch(a)
	first, end := s.book(a, c.n, t, 0)
	if end <= t+maxWaitInWorker {
		return c.n
	}
	now := min(c.n, int((t+maxWaitInWorker-first)*a.rate))
	rest := *c
	rest.n = c.n - max(now, 0)
	s.spreadOne(a, ai, &rest, max(first, t+maxWaitInWorker), t)
	return max(now, 0)
}

// spreadOne spreads one cohort's messages over slots from first on.
func (s *Sim) spreadOne(a *account, ai int32, c *cohort, first, t float64) {
	left := c.n
	for sec := math.Floor(first); left > 0; sec++ {
		start := max(sec, first)
		n := max(1, min(left, int(math.Round((sec+1-start)*a.rate))))
		left -= n
		part := *c
		part.n, part.until, part.due, part.slotted = n, start, start, true
		part.deferrals++
		s.m.RateDeferrals += float64(n)
		s.paced(&part, t)
		s.wait(&part, t, true)
	}
}
