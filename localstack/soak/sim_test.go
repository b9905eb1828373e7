package main

// The soak's mix over 30 simulated days in well under a minute: the real
// step (shared/lifecycle) and executor (shared/delivery), the real ingest,
// sweeper and scheduler, the real store on the DynamoDB emulator, all on a
// simulated clock; in memory: SQS (delays, visibility, receive counts, the
// DLQ move), the rate limiter and the endpoints. The production schedule
// (n^4 s with jitter), the breaker's pauses, the 15-minute sweep and
// 1-minute scheduler, the 30-day TTL. The same fault decorators as the
// soak, from a seed (SIM_SEED replays one), and the same invariant checker.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/delivery"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
	"github.com/gifq/webhooks/shared/sweep"
)

const (
	simDays      = 30
	simBurstEach = 12 * time.Hour // traffic arrives in bursts this far apart
	simBurst     = 8              // requests in a burst
	simAccounts  = 3
	simDeliverQ  = "http://sqs.sim/000000000000/sim-deliveries"
	simDLQ       = "http://sqs.sim/000000000000/sim-dlq"
	// simBusy is the other tenants' messages the delivery queue shows at
	// every look: the simulated deployment is a busy one (queueClient.busy).
	simBusy = 1
)

// simStart is in the past, so that the executor's sleeps until a simulated
// time (its rate slots) never block.
var simStart = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestSimulated30Days(t *testing.T) {
	seed := uint64(time.Now().UnixNano()%1e9) + 1
	if v, err := strconv.ParseUint(os.Getenv("SIM_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("SIM_SEED=%d", seed)
	env := testenv.New(t)
	s := newSim(t, env, seed)
	began := time.Now()
	s.run(t)
	t.Logf("%d simulated days in %s: %d messages handled, %d sweeps, %d scheduler runs",
		simDays, time.Since(began).Round(time.Millisecond), s.handled, s.sweeps, s.schedules)

	// The checker reads as of the start: by the end, the first days' items
	// are past their TTL, which the store's reads treat as gone.
	reader := store.New(env.DB, env.Table).WithClock(func() time.Time { return simStart })
	c := &checker{store: reader, cfg: s.cfg, allowance: s.cfg.SweepGrace + 15*time.Minute + s.cfg.DeliveryTimeout + clockError(1),
		kindOf: s.kindOf, rv: s.rv, final: map[string]bool{}, trace: s.trace}
	ok, err := c.check(context.Background(), s.deliveries, s.events, s.faultCounts(), int64(s.kills))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("an invariant broke; replay with SIM_SEED=%d", seed)
	}
}

type sim struct {
	cfg    config.Config
	clock  time.Time     // the simulated time
	offset time.Duration // the functions' clock is off by this (a clock_jump)
	rng    *rand.Rand
	faults *Faults
	flog   *strings.Builder
	sqs    *simSQS
	st     *store.Store
	worker *delivery.Worker
	sweep  *sweep.Sweeper
	sched  *sweep.Scheduler
	ingest *ingest.Service
	rv     *receiver
	tr     *tracer
	trace  string // the trace's file, for the checker to explain a late delivery

	accounts   []string
	kindOf     map[string]string
	pathOf     map[string]string
	deliveries []tracked
	open       []string     // deliveries not seen final yet
	reader     *store.Store // the table as the simulation reads it, without faults
	events     int
	handled    int
	sweeps     int
	schedules  int
	kills      int
	parked     map[string]bool // deliveries parked and not yet unparked: the scheduler has work
}

func newSim(t *testing.T, env *testenv.Env, seed uint64) *sim {
	ctx := context.Background()
	cfg, err := config.Parse(func(k string) string {
		return map[string]string{"TABLE_NAME": env.Table, "QUEUE_URL": simDeliverQ, "DLQ_URL": simDLQ, "METRICS": "off"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{cfg: cfg, clock: simStart, rng: rand.New(rand.NewPCG(seed, 1)), flog: &strings.Builder{}, rv: newReceiver(),
		kindOf: map[string]string{}, pathOf: map[string]string{}, parked: map[string]bool{}}
	rates := defaultRates(1)
	rates.Crash *= 10 // a few hundred deliveries: kills often enough to land between every two effects
	s.faults = &Faults{Rates: rates, rng: rand.New(rand.NewPCG(seed, 0x50a6)), log: s.flog, kill: s.kill}
	s.sqs = &simSQS{now: func() time.Time { return s.clock }, byURL: map[string][]*simMsg{}, receipts: map[string]*simMsg{}}
	now := func() time.Time { return s.clock.Add(s.offset) }
	s.trace = cmp.Or(os.Getenv("SIM_TRACE"), filepath.Join(t.TempDir(), "trace.jsonl")) // SIM_TRACE keeps it
	if s.tr, err = newTracer(s.trace, map[string]string{simDeliverQ: "fast", simDLQ: "dlq"}, simTime{s}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.tr.f.Close() })
	s.sqs.t = s.tr
	s.st = store.New(dynamo{env.DB, s.faults, s.tr}, env.Table).WithClock(now)
	qu := queue.New(queueClient{SQS: s.sqs, f: s.faults, t: s.tr, busy: simBusy, notBusy: map[string]bool{simDLQ: true}}, simDeliverQ, simDLQ)
	log := simLog(t, now)
	metrics := obs.NewMetrics(io.Discard, false, "soak", "sim")
	lim := &simLimiter{now: now}
	// The clock stands still during an invocation: a wait ends at once.
	atOnce := func(time.Duration) <-chan time.Time { c := make(chan time.Time, 1); c <- now(); return c }
	s.worker = &delivery.Worker{
		Policy: lifecycle.Policy{Schedule: cfg.Retry, MaxInFlight: cfg.EndpointMaxInFlight, LeaseFor: 2*cfg.DeliveryTimeout + 5*time.Second,
			AttemptTimeout: cfg.DeliveryTimeout, DisableAfter: cfg.EndpointDisableAfter, SweepGrace: cfg.SweepGrace, ParkAfter: cfg.ParkAfter,
			MaxEarly: pace.MaxEarly},
		Store: parkWatch{s.st, s}, Queue: qu, Limiter: lim, Sender: &simEndpoints{s: s}, Events: opevents.Log{Log: log},
		Log: log, Metrics: metrics, Now: now, After: atOnce,
	}
	s.sweep = &sweep.Sweeper{Store: s.st, Queue: qu, MaxAttempts: cfg.Retry.MaxAttempts(), Grace: cfg.SweepGrace, Log: log, Metrics: metrics, Now: now}
	s.sched = &sweep.Scheduler{Store: unparkWatch{s.st, s}, Queue: qu, Ahead: cfg.ScheduleAhead, Log: log, Now: now}
	s.ingest = &ingest.Service{Store: s.st, Queue: qu, Limiter: lim, DefaultRate: cfg.RatePerSecond, Log: log, Metrics: metrics, Now: now}

	clean := store.New(env.DB, env.Table).WithClock(now)
	s.reader = clean
	for a := range simAccounts {
		acct, err := clean.CreateAccount(ctx, fmt.Sprintf("sim-%d", a), 0)
		if err != nil {
			t.Fatal(err)
		}
		s.accounts = append(s.accounts, acct.ID)
		for _, kind := range kinds {
			ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: acct.ID, URL: fmt.Sprintf("https://sim.example/%d/%s", a, kind),
				EventTypes: []string{"soak." + kind, "soak.fanout"}, Secrets: []domain.Secret{{Value: "whsec_c2ltdWxhdGVk", CreatedAt: domain.Millis(now())}},
				CreatedAt: domain.Millis(now())}
			if err := clean.CreateEndpoint(ctx, ep); err != nil {
				t.Fatal(err)
			}
			s.kindOf[ep.ID], s.pathOf[ep.ID] = kind, fmt.Sprintf("/%d/%s", a, kind)
		}
	}
	return s
}

// simLog discards the functions' log lines, unless SIM_LOG names a file:
// then every line, debug included, is written there with the functions'
// simulated time, to follow a delivery an invariant names.
func simLog(t *testing.T, now func() time.Time) *slog.Logger {
	path := os.Getenv("SIM_LOG")
	if path == "" {
		return slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			a.Value = slog.TimeValue(now())
		}
		return a
	}}))
}

// simTime is the trace's clock in the simulation.
type simTime struct{ s *sim }

func (t simTime) at() time.Time      { return t.s.clock }
func (t simTime) off() time.Duration { return t.s.offset }

func (s *sim) kill() { s.faults.dead.Store(true) }

// revive starts the next invocation on a live process; it reports
// whether the last one was killed.
func (s *sim) revive() bool {
	if s.faults.dead.Swap(false) {
		s.kills++
		return true
	}
	return false
}

func (s *sim) faultCounts() map[string]int {
	counts := map[string]int{}
	for _, line := range strings.Split(s.flog.String(), "\n") {
		if line != "" {
			counts[line]++
		}
	}
	return counts
}

// run is the discrete-event loop: traffic bursts, messages as they fall
// visible, the sweeper every 15 minutes, the scheduler every minute while
// anything is parked, clock jumps; then until nothing is pending, or a day
// past the end.
func (s *sim) run(t *testing.T) {
	ctx := context.Background()
	end := simStart.Add(simDays * 24 * time.Hour)
	nextBurst, nextSweep, nextSched := simStart, simStart.Add(15*time.Minute), simStart.Add(time.Minute)
	nextJump := s.clock.Add(time.Duration(s.rng.ExpFloat64() * float64(6*time.Hour)))
	for s.clock.Before(end.Add(24 * time.Hour)) {
		msgAt, hasMsg := s.sqs.next(simDeliverQ)
		switch {
		case hasMsg && !msgAt.After(minTime(nextBurst, nextSweep, nextSched, nextJump)):
			s.clock = maxTime(s.clock, msgAt)
			s.handleOne(ctx)
		case !nextBurst.After(minTime(nextSweep, nextSched, nextJump)) && nextBurst.Before(end):
			s.clock = nextBurst
			s.burst(ctx)
			nextBurst = nextBurst.Add(simBurstEach)
		case !nextSweep.After(minTime(nextSched, nextJump)):
			s.clock = nextSweep
			nextSweep = nextSweep.Add(15 * time.Minute)
			// A sweep while every delivery is final would read an empty
			// index: skipped, to keep 30 days under a minute.
			if s.allFinal(ctx) {
				if !nextBurst.Before(end) {
					return
				}
				continue
			}
			_, _ = s.sweep.Run(ctx)
			s.revive()
			s.sweeps++
		case !nextSched.After(nextJump):
			s.clock = nextSched
			if len(s.parked) > 0 {
				_, _ = s.sched.Run(ctx)
				s.revive()
				s.schedules++
			}
			nextSched = nextSched.Add(time.Minute)
		default:
			s.clock = nextJump
			s.offset = time.Duration((s.rng.Float64()*2 - 1) * float64(maxJump))
			s.faults.note(faultClock)
			s.tr.note("", faultClock, "", s.offset.Round(time.Millisecond).String())
			nextJump = s.clock.Add(time.Duration(s.rng.ExpFloat64() * float64(6*time.Hour)))
		}
	}
}

// allFinal reads the deliveries not yet seen final (through the clean
// client: the simulation's own look injects no faults).
func (s *sim) allFinal(ctx context.Context) bool {
	for len(s.open) > 0 {
		got, err := s.reader.GetDelivery(ctx, s.open[0])
		if err != nil || got.Status == domain.StatusPending || got.DLQPending {
			return false
		}
		s.open = s.open[1:]
	}
	return true
}

// burst posts simBurst requests: single events, batches of 5, fan-outs.
func (s *sim) burst(ctx context.Context) {
	for i := range simBurst {
		acct := s.accounts[s.rng.IntN(len(s.accounts))]
		n := s.events + i
		var bodies []string
		switch roll := s.rng.IntN(10); {
		case roll < 6:
			bodies = []string{fmt.Sprintf(`{"event":"soak.%s","n":%d}`, kinds[s.rng.IntN(len(kinds))], n)}
		case roll < 8:
			for j := range batchSize {
				bodies = append(bodies, fmt.Sprintf(`{"event":"soak.%s","n":%d,"j":%d}`, kinds[s.rng.IntN(len(kinds))], n, j))
			}
		default:
			bodies = []string{fmt.Sprintf(`{"event":"soak.fanout","n":%d}`, n)}
		}
		s.post(ctx, acct, n, bodies)
	}
}

// post is a producer: it retries (with its idempotency keys) until each
// event is accepted.
func (s *sim) post(ctx context.Context, acct string, n int, bodies []string) {
	for tries := 0; tries < 20; tries++ {
		if len(bodies) == 1 {
			res, err := s.ingest.Ingest(ctx, acct, []byte(bodies[0]), fmt.Sprintf("sim-%d", n))
			if s.revive() {
				continue // the producer saw the API fail
			}
			if err == nil {
				s.accept(res)
				return
			}
			continue
		}
		items := make([]ingest.Item, len(bodies))
		for j, b := range bodies {
			items[j] = ingest.Item{Body: []byte(b), IdempotencyKey: fmt.Sprintf("sim-%d-%d", n, j)}
		}
		out, err := s.ingest.IngestBatch(ctx, acct, items)
		if s.revive() {
			continue
		}
		all := err == nil
		for _, r := range out {
			all = all && r.Err == nil
		}
		if all {
			for _, r := range out {
				s.accept(r.Result)
			}
			return
		}
	}
}

func (s *sim) accept(r ingest.Result) {
	if r.Replayed {
		return // its first answer counted it (a retry of a batch answers every accepted one again)
	}
	s.events++
	for _, d := range r.Deliveries {
		s.deliveries = append(s.deliveries, tracked{id: d.ID, eventID: d.EventID, endpointID: d.EndpointID})
		s.open = append(s.open, d.ID)
	}
}

// handleOne gives the deliver function the next visible message, as a
// batch of one (a duplicate receive: the same message twice, one after the
// other); a kill leaves it to its visibility timeout.
func (s *sim) handleOne(ctx context.Context) {
	out, err := queueClient{SQS: s.sqs, f: s.faults, t: s.tr}.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(simDeliverQ), MaxNumberOfMessages: 1})
	if err != nil {
		s.sqs.skip(simDeliverQ) // the poller retries after its error; the message stays
		s.revive()
		return
	}
	for _, m := range out.Messages {
		s.handled++
		rec := events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Attributes: m.Attributes, EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:sim-deliveries"}
		if s.deliver(ctx, rec) {
			s.sqs.delete(aws.ToString(m.ReceiptHandle))
		}
	}
}

// deliver is one deliver invocation; a killed one deletes nothing.
func (s *sim) deliver(ctx context.Context, rec events.SQSMessage) bool {
	resp, _ := s.worker.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec}})
	return !s.revive() && len(resp.BatchItemFailures) == 0
}

func minTime(ts ...time.Time) time.Time {
	m := ts[0]
	for _, t := range ts[1:] {
		if t.Before(m) {
			m = t
		}
	}
	return m
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// parkWatch is the worker's store, noting the parks the scheduler will have
// to send: the simulation runs the scheduler only while there are any.
type parkWatch struct {
	*store.Store
	s *sim
}

func (p parkWatch) ParkDelivery(ctx context.Context, id string, pk store.Park) error {
	err := p.Store.ParkDelivery(ctx, id, pk)
	p.s.parked[id] = true // even on an error: it may have been written
	return err
}

type unparkWatch struct {
	*store.Store
	s *sim
}

func (u unparkWatch) ParkedBefore(ctx context.Context, shard int, before int64, limit int32, start store.Cursor) (store.ParkedPage, error) {
	return u.Store.ParkedBefore(ctx, shard, before, limit, start)
}

func (u unparkWatch) Unpark(ctx context.Context, id string, before int64) (domain.Delivery, store.Park, error) {
	d, pk, err := u.Store.Unpark(ctx, id, before)
	if err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		delete(u.s.parked, id)
	}
	return d, pk, err
}

// simLimiter books every slot now: the simulated accounts stay within
// their rates.
type simLimiter struct{ now func() time.Time }

// Reserve books now, or the next second in a second's tail, as the real
// limiter does for an account under its rate (ratelimit.Book).
func (l *simLimiter) Reserve(_ context.Context, _ string, _ int, perSecond float64) (ratelimit.Reservation, error) {
	first := l.now()
	if next := pace.Next(first); next.Sub(first) <= pace.Cutoff {
		first = next
	}
	return ratelimit.Reservation{First: first, Interval: time.Duration(float64(time.Second) / max(perSecond, 1))}, nil
}

func (l *simLimiter) Refund(context.Context, string, ratelimit.Reservation) error { return nil }

func (l *simLimiter) ReserveTaking(ctx context.Context, account string, n int, perSecond float64, _ time.Duration, _ ratelimit.KeyTake) (ratelimit.Reservation, error) {
	return l.Reserve(ctx, account, n, perSecond)
}

// simEndpoints answer as the soak's receiver does, in simulated time.
type simEndpoints struct{ s *sim }

func (e *simEndpoints) Send(_ context.Context, req destination.Request) destination.Outcome {
	s := e.s
	if s.faults.dead.Load() { // a dead process sends nothing
		return destination.Outcome{Verdict: destination.Retry, NoAnswer: true, Class: webhook.ErrNetwork, StartedAt: s.clock}
	}
	path := strings.TrimPrefix(req.URL, "https://sim.example")
	kind := path[strings.LastIndex(path, "/")+1:]
	key := req.EventID + "|" + path
	s.rv.mu.Lock()
	s.rv.total++
	s.rv.requests[key]++
	n := s.rv.requests[key]
	s.rv.mu.Unlock()
	res := destination.Outcome{Status: 200, StartedAt: s.clock.Add(s.offset), Duration: 50 * time.Millisecond}
	switch kind {
	case "slow":
		res.Duration = 8 * time.Second
	case "hanging":
		res.Status, res.NoAnswer, res.Class, res.Duration = 0, true, webhook.ErrTimeout, s.cfg.DeliveryTimeout
	case "refusing":
		res.Status, res.NoAnswer, res.Class = 0, true, webhook.ErrConnRefused
	case "flapping": // down for 3 hours of every 6
		if s.clock.Sub(simStart)%(6*time.Hour) >= 3*time.Hour {
			res.Status = 503
		}
	case "fail_then_ok":
		if n <= failFirst {
			res.Status = 502
		}
	case "gone":
		res.Status = 410
	case "throttling":
		if n%2 == 1 {
			res.Status, res.RetryAfter = 429, time.Minute
		}
	}
	res.Verdict = destination.Retry // no answer
	if res.Status != 0 {
		res.Verdict = webhook.VerdictOf(res.Status, res.RetryAfter)
	}
	s.rv.mu.Lock()
	defer s.rv.mu.Unlock()
	if res.Status/100 == 2 {
		s.rv.ok[key]++
	}
	// The invocation waits for the answer: one invocation at a time, so
	// concurrent attempts are the real soak's to find.
	s.clock = s.clock.Add(res.Duration)
	return res
}

// simSQS is SQS in simulated time: per-message delays, visibility,
// receive counts and the move to the DLQ after schema's maxReceiveCount.
type simSQS struct {
	mu       sync.Mutex
	now      func() time.Time
	byURL    map[string][]*simMsg
	receipts map[string]*simMsg
	seq      int
	t        *tracer // notes a message moved to the DLQ for its receive count
}

type simMsg struct {
	id, body, url string
	visibleAt     time.Time
	sent          time.Time
	receives      int
	deleted       bool
}

func (q *simSQS) add(url, body string, delay int32) {
	q.seq++
	m := &simMsg{id: fmt.Sprintf("m%d", q.seq), body: body, url: url, sent: q.now(), visibleAt: q.now().Add(time.Duration(delay) * time.Second)}
	q.byURL[url] = append(q.byURL[url], m)
}

func (q *simSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.add(aws.ToString(in.QueueUrl), aws.ToString(in.MessageBody), in.DelaySeconds)
	return &sqs.SendMessageOutput{MessageId: aws.String(fmt.Sprintf("m%d", q.seq))}, nil
}

func (q *simSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		q.add(aws.ToString(in.QueueUrl), aws.ToString(e.MessageBody), e.DelaySeconds)
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String(fmt.Sprintf("m%d", q.seq))})
	}
	return out, nil
}

func (q *simSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m, ok := q.receipts[aws.ToString(in.ReceiptHandle)]; ok {
		m.visibleAt = q.now().Add(time.Duration(in.VisibilityTimeout) * time.Second)
	}
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func (q *simSQS) ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	return nil, errors.New("simSQS: not used")
}

func (q *simSQS) DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	return nil, errors.New("simSQS: not used")
}

func (q *simSQS) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	visible := 0
	for _, m := range q.byURL[aws.ToString(in.QueueUrl)] {
		if !m.deleted && !m.visibleAt.After(q.now()) {
			visible++
		}
	}
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{string(sqstypes.QueueAttributeNameApproximateNumberOfMessages): strconv.Itoa(visible)}}, nil
}

// ReceiveMessage hands out the earliest visible message, hidden for the
// queue's visibility timeout; one received more than maxReceiveCount times
// moves to the DLQ instead.
func (q *simSQS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		m := q.earliest(aws.ToString(in.QueueUrl))
		if m == nil || m.visibleAt.After(q.now()) {
			return &sqs.ReceiveMessageOutput{}, nil
		}
		if m.receives >= schema.Queues.MaxReceiveCount {
			m.deleted = true
			q.t.body(m.body, "redrive_to_dlq", simDLQ, fmt.Sprintf("receives=%d", m.receives))
			q.add(simDLQ, m.body, 0)
			continue
		}
		m.receives++
		m.visibleAt = q.now().Add(schema.Queues.VisibilityTimeout)
		q.seq++
		receipt := fmt.Sprintf("r%d", q.seq)
		q.receipts[receipt] = m
		return &sqs.ReceiveMessageOutput{Messages: []sqstypes.Message{{MessageId: aws.String(m.id), ReceiptHandle: aws.String(receipt), Body: aws.String(m.body),
			Attributes: map[string]string{"ApproximateReceiveCount": strconv.Itoa(m.receives), "SentTimestamp": strconv.FormatInt(m.sent.UnixMilli(), 10)}}}}, nil
	}
}

func (q *simSQS) earliest(url string) *simMsg {
	live := q.byURL[url][:0]
	for _, m := range q.byURL[url] {
		if !m.deleted {
			live = append(live, m)
		}
	}
	q.byURL[url] = live
	if len(live) == 0 {
		return nil
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].visibleAt.Before(live[j].visibleAt) })
	return live[0]
}

// next is when the queue's next message falls visible.
func (q *simSQS) next(url string) (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m := q.earliest(url); m != nil {
		return m.visibleAt, true
	}
	return time.Time{}, false
}

// skip hides the earliest visible message for a second: a poller's error
// and its retry.
func (q *simSQS) skip(url string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m := q.earliest(url); m != nil {
		m.visibleAt = q.now().Add(time.Second)
	}
}

func (q *simSQS) delete(receipt string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if m, ok := q.receipts[receipt]; ok {
		m.deleted = true
	}
}
