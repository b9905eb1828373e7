package delivery

// The rate bound at the receiver (at most the account's rate in any
// wall-clock second), proven with a fake clock: events go through ingest's
// booking (ratelimit.Book, no lead; pace.Delay) and the worker's slot rules
// (pace.MaxEarly, pace.Usable, lifecycle.ClaimAhead, a new slot waited for
// at most pace.MaxEarly, or the message sent back for it), with a pipeline
// latency drawn per message, and every POST's time is counted per
// wall-clock second. The worker's waits are added up: what Lambda bills for
// pacing.

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/window"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// simArrival is a message reaching a worker at `at`, carrying slot (zero:
// none) and its lead (lifecycle.Message.Lead).
type simArrival struct {
	at   time.Time
	slot time.Time
	lead time.Duration
	seq  int
}

type arrivals []simArrival

func (a arrivals) Len() int { return len(a) }
func (a arrivals) Less(i, j int) bool {
	if !a[i].at.Equal(a[j].at) {
		return a[i].at.Before(a[j].at)
	}
	return a[i].seq < a[j].seq
}
func (a arrivals) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a *arrivals) Push(x any)   { *a = append(*a, x.(simArrival)) }
func (a *arrivals) Pop() any {
	old := *a
	x := old[len(old)-1]
	*a = old[:len(old)-1]
	return x
}

// rateSim is one account's pipeline with a fake clock.
type rateSim struct {
	ivl     time.Duration
	lim     ratelimit.State
	rnd     *rand.Rand
	latency func(*rand.Rand) time.Duration // from a send (or a visibility) to a worker holding the message
	jitter  time.Duration                  // a claim's latency and the POST's own delay, at most
	stalls  func(time.Time) time.Time      // when a message due at a worker at t gets there (nil: at t)
	queue   arrivals
	seq     int
	posts   []time.Time
	books   int           // reservations after ingest's
	slept   time.Duration // the worker's waits for a second to begin, added up
}

func (s *rateSim) arrive(at, slot time.Time, lead time.Duration) {
	if s.stalls != nil {
		at = s.stalls(at)
	}
	s.seq++
	heap.Push(&s.queue, simArrival{at: at, slot: slot, lead: lead, seq: s.seq})
}

// back sends a message back for slot, landing it lead earlier than
// pace.Early before the slot's second.
func (s *rateSim) back(now, slot time.Time, lead time.Duration) {
	s.arrive(now.Add(pace.Delay(slot.Add(-lead), now)+s.latency(s.rnd)), slot, lead)
}

// ingest books one delivery's slot at now and sends its message as ingest does.
func (s *rateSim) ingest(now time.Time) {
	res, lim := ratelimit.Book(s.lim, now, 1, s.ivl, 0)
	s.lim = lim
	s.back(now, res.First, 0)
}

// work handles one message at its arrival, with the worker's rules.
func (s *rateSim) work(m simArrival) {
	now := m.at
	if !m.slot.IsZero() && pace.Wait(m.slot, now) > pace.MaxEarly+m.lead {
		s.back(now, m.slot, m.lead)
		return
	}
	if !m.slot.IsZero() && pace.Usable(m.slot, now) {
		s.post(now, m.slot)
		return
	}
	// Late for its second: a new slot, booked before the claim (the worker
	// books with no lead): one whose second is near is waited for, a far
	// one goes back with the message, a second earlier each time it came
	// late (pace.NextLead).
	lead := m.lead
	if !m.slot.IsZero() {
		lead = pace.NextLead(lead)
	}
	s.books++
	res, lim := ratelimit.Book(s.lim, now, 1, s.ivl, 0)
	s.lim = lim
	if pace.Wait(res.First, now) <= pace.MaxEarly+lead {
		s.post(now, res.First)
		return
	}
	s.back(now, res.First, lead)
}

// post claims lifecycle.ClaimAhead before the slot's second begins (or
// now); the POST leaves as the second begins, or when the claim is done if
// that is later. The wait before the claim is billed.
func (s *rateSim) post(now, slot time.Time) {
	claimAt := maxTime(now, pace.Second(slot).Add(-lifecycle.ClaimAhead))
	s.slept += claimAt.Sub(now)
	s.posts = append(s.posts, maxTime(pace.Second(slot), claimAt.Add(s.jitterOf())))
}

func (s *rateSim) jitterOf() time.Duration { return time.Duration(s.rnd.Int64N(int64(s.jitter) + 1)) }

func (s *rateSim) run(events []time.Time) {
	sort.Slice(events, func(i, j int) bool { return events[i].Before(events[j]) })
	i := 0
	for i < len(events) || s.queue.Len() > 0 {
		if s.seq > 50*len(events) {
			return // booked again and again: most of them never sent
		}
		if i < len(events) && (s.queue.Len() == 0 || !s.queue[0].at.Before(events[i])) {
			s.ingest(events[i])
			i++
			continue
		}
		s.work(heap.Pop(&s.queue).(simArrival))
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func TestRateBoundAtTheReceiver(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	upTo := func(d time.Duration) func(*rand.Rand) time.Duration {
		return func(r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(d) + 1)) }
	}
	behind := func(r *rand.Rand) time.Duration { // one message in five far behind its slot
		if r.IntN(5) == 0 {
			return time.Second + time.Duration(r.Int64N(int64(3*time.Second)))
		}
		return time.Duration(r.Int64N(int64(800 * time.Millisecond)))
	}
	// The pipeline stops for 1.5 s every 4 s (a machine stalled, the
	// pollers busy): what would reach a worker meanwhile gets there at once
	// when it ends, most of it after its slot.
	stalled := func(at time.Time) time.Time {
		const period, stall = 4 * time.Second, 1500 * time.Millisecond
		if in := at.Sub(t0) % period; in < stall {
			return at.Add(stall - in)
		}
		return at
	}
	// LocalStack makes delayed messages visible once a second, at a fixed
	// point of the second (its queue worker's tick): at 0.95 s, every
	// message landed in its slot's second reaches a worker too late for it.
	// Without a lead (pace.NextLead) each one is booked again at the end of
	// the account's line, for ever, and none is sent.
	ticking := func(at time.Time) time.Time {
		const phase = 950 * time.Millisecond
		tick := at.Truncate(time.Second).Add(phase)
		if tick.Before(at) {
			tick = tick.Add(time.Second)
		}
		return tick
	}
	for _, rate := range []float64{5, 20, 25} {
		n := int(rate) * 25 // 25 s of the account's rate
		burst := make([]time.Time, n)
		for i := range burst { // all within a quarter of a second
			burst[i] = t0.Add(time.Duration(i) * 250 * time.Millisecond / time.Duration(n))
		}
		backlog := make([]time.Time, 2*n)
		for i := range backlog { // twice the rate for 25 s: the queue falls 25 s behind
			backlog[i] = t0.Add(time.Duration(float64(i) / (2 * rate) * float64(time.Second)))
		}
		trickle := make([]time.Time, n)
		for i := range trickle { // lone events, each on an idle account: "now"
			trickle[i] = t0.Add(time.Duration(i) * 1501 * time.Millisecond)
		}
		for _, c := range []struct {
			name    string
			events  []time.Time
			latency func(*rand.Rand) time.Duration
			stalls  func(time.Time) time.Time
		}{
			{"burst, pipeline quick", burst, upTo(80 * time.Millisecond), nil},
			{"burst, pipeline slow", burst, upTo(800 * time.Millisecond), nil},
			{"backlog, pipeline slow", backlog, upTo(800 * time.Millisecond), nil},
			{"burst, pipeline behind", burst, behind, nil},
			{"backlog, pipeline behind", backlog, behind, nil},
			{"burst, pipeline stalling", burst, upTo(300 * time.Millisecond), stalled},
			{"backlog, pipeline stalling", backlog, upTo(300 * time.Millisecond), stalled},
			{"burst, delays ticking", burst, upTo(60 * time.Millisecond), ticking},
			{"backlog, delays ticking", backlog, upTo(60 * time.Millisecond), ticking},
			{"lone events", trickle, upTo(80 * time.Millisecond), nil},
		} {
			t.Run(fmt.Sprintf("%g per s, %s", rate, c.name), func(t *testing.T) {
				s := &rateSim{ivl: time.Duration(float64(time.Second) / rate), rnd: rand.New(rand.NewPCG(1, uint64(rate))),
					latency: c.latency, jitter: 40 * time.Millisecond, stalls: c.stalls}
				s.run(append([]time.Time(nil), c.events...))
				if len(s.posts) != len(c.events) {
					t.Fatalf("%d POSTs for %d events", len(s.posts), len(c.events))
				}
				busiest := window.BusiestWallClockSecond(s.posts)
				t.Logf("%d POSTs, busiest wall-clock second %d (sliding %d), %d slots booked again, wait %s per delivery",
					len(s.posts), busiest, window.Busiest(s.posts, time.Second), s.books, s.slept/time.Duration(len(s.posts)))
				if busiest > int(rate) {
					t.Errorf("%d POSTs in one wall-clock second at %g/s", busiest, rate)
				}
			})
		}
	}
}
