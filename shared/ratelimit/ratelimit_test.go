package ratelimit_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var ctx = context.Background()

func limiter(t *testing.T, rate float64) *ratelimit.Limiter {
	env := testenv.New(t)
	atASecondsStart()
	return ratelimit.New(env.DB, env.Table, store.RateKey, rate)
}

// atASecondsStart waits for the next second when the current one is past
// its first 100 ms, so that a test on the real clock reads slots of the
// plain rule, far from a second's tail (pace.Cutoff, which the tests below
// prove on their own clocks).
func atASecondsStart() {
	if frac := time.Duration(time.Now().UnixNano() % 1e9); frac > 100*time.Millisecond {
		time.Sleep(time.Second - frac)
	}
}

// Many instances reserving at once get distinct slots exactly one interval
// apart: the conditional writes hand out each slot once.
func TestConcurrentReservationsGetDistinctEvenSlots(t *testing.T) {
	var slots []time.Time
	var mu sync.Mutex
	var wg sync.WaitGroup
	lims := []*ratelimit.Limiter{}
	env := testenv.New(t)
	for i := 0; i < 4; i++ { // four "Lambda instances" sharing the table
		lims = append(lims, ratelimit.New(env.DB, env.Table, store.RateKey, 5))
	}
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(l *ratelimit.Limiter) {
			defer wg.Done()
			r, err := l.Reserve(ctx, "acct_1", 1, 5)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			slots = append(slots, r.First)
			mu.Unlock()
		}(lims[i%4])
	}
	wg.Wait()
	sort.Slice(slots, func(i, j int) bool { return slots[i].Before(slots[j]) })
	evenlySpaced(t, slots, 200*time.Millisecond)
	if span := slots[len(slots)-1].Sub(slots[0]); span != 39*200*time.Millisecond {
		t.Fatalf("40 slots span %s", span)
	}
}

func TestReservingSeveralSlotsAtOnce(t *testing.T) {
	l := limiter(t, 5)
	a, err := l.Reserve(ctx, "acct_1", 3, 10) // ingest knows the account's rate
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Reserve(ctx, "acct_1", 1, 0) // a worker does not: the stored rate applies
	if err != nil {
		t.Fatal(err)
	}
	if a.Interval != 100*time.Millisecond || b.Slot(0) != a.Slot(3) {
		t.Fatalf("a %+v (slot 3 %s), b %+v", a, a.Slot(3), b)
	}
	if _, err := l.Reserve(ctx, "acct_2", 2, 0); err == nil {
		t.Fatal("several slots without a rate must be refused")
	}
}

func TestAccountsAreIndependentAndIdleStartsNow(t *testing.T) {
	l := limiter(t, 5)
	before := time.Now()
	for i := 0; i < 10; i++ {
		if _, err := l.Reserve(ctx, "busy", 1, 5); err != nil {
			t.Fatal(err)
		}
	}
	r, err := l.Reserve(ctx, "quiet", 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if r.First.Before(before.Add(-time.Millisecond)) || r.First.After(time.Now()) {
		t.Fatalf("an idle account's first slot is %s, want now", r.First)
	}
	// Once its slots are in the past, the busy account is idle again: no debt carried.
	time.Sleep(2100 * time.Millisecond)
	r, err = l.Reserve(ctx, "busy", 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(r.First); d < 0 || d > time.Second {
		t.Fatalf("a limiter idle again starts at %s (now %s)", r.First, time.Now())
	}
}

func BenchmarkReserve(b *testing.B) {
	env := testenv.New(b)
	l := ratelimit.New(env.DB, env.Table, store.RateKey, 1e6)
	for i := 0; i < b.N; i++ {
		if _, err := l.Reserve(ctx, "acct", 1, 1e6); err != nil {
			b.Fatal(err)
		}
	}
}

// ReserveAhead carries out Book: an idle account's first slot is now; once
// busy, the next slot is no earlier than now + lead (the slots in between
// stay unused), and after that the slots follow each other; several booked
// on an idle account start now, 1/rate apart.
func TestReserveAheadBooksPastTheLeadWhenBusy(t *testing.T) {
	l := limiter(t, 5)
	const lead = time.Second
	before := time.Now()
	a, err := l.ReserveAhead(ctx, "acct_1", 1, 5, lead)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if a.First.Before(before.Truncate(time.Millisecond)) || a.First.After(after) {
		t.Fatalf("idle: first slot %s, want now (%s..%s)", a.First, before, after)
	}
	before = time.Now()
	b, err := l.ReserveAhead(ctx, "acct_1", 1, 5, lead) // busy, tat 200 ms ahead: within the lead
	if err != nil {
		t.Fatal(err)
	}
	after = time.Now()
	if b.First.Before(before.Add(lead).Truncate(time.Millisecond)) || b.First.After(after.Add(lead)) {
		t.Fatalf("busy within the lead: slot %s, want now + %s (%s..%s)", b.First, lead, before.Add(lead), after.Add(lead))
	}
	c, err := l.ReserveAhead(ctx, "acct_1", 2, 5, lead) // tat beyond the lead: the slots follow
	if err != nil {
		t.Fatal(err)
	}
	if c.Slot(0) != b.First.Add(200*time.Millisecond) || c.Slot(1) != c.Slot(0).Add(200*time.Millisecond) {
		t.Fatalf("busy beyond the lead: %s, %s after %s", c.Slot(0), c.Slot(1), b.First)
	}
	d, err := l.Reserve(ctx, "acct_1", 1, 0) // a worker books with no lead: right after
	if err != nil || d.First != c.Slot(1).Add(200*time.Millisecond) {
		t.Fatalf("a worker's slot %s (%v), want %s", d.First, err, c.Slot(1).Add(200*time.Millisecond))
	}

	before = time.Now()
	e, err := l.ReserveAhead(ctx, "acct_2", 3, 5, lead) // several on an idle account: from now, 1/rate apart
	if err != nil {
		t.Fatal(err)
	}
	if e.First.Before(before.Truncate(time.Millisecond)) || e.First.After(time.Now()) || e.Interval != 200*time.Millisecond {
		t.Fatalf("several on an idle account: %+v", e)
	}
}

// Many bookers at once with a lead (ingest at 100/s on several instances)
// all get a reservation (the chaos run found "no reservation after repeated
// races" with the three states tried in a fixed cycle), and distinct slots.
func TestConcurrentReservationsAheadAllSucceed(t *testing.T) {
	env := testenv.New(t)
	var mu sync.Mutex
	var wg sync.WaitGroup
	seen := map[time.Time]bool{}
	for i := 0; i < 16; i++ {
		l := ratelimit.New(env.DB, env.Table, store.RateKey, 100)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 40; j++ {
				lead := time.Second
				if j%4 == 3 {
					lead = 0 // a worker's booking
				}
				r, err := l.ReserveAhead(ctx, "acct_1", 1, 100, lead)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[r.First] {
					t.Errorf("slot %s handed out twice", r.First)
				}
				seen[r.First] = true
				mu.Unlock()
				time.Sleep(time.Duration(j%3) * 40 * time.Millisecond) // about the rate: tat hovers at now + lead
			}
		}()
	}
	wg.Wait()
}

// Book's rule in plain values, at 5/s (200 ms apart) and 1,000/s (1 ms)
// with ingest's lead of 1 s.
func TestBookSkipsTheLeadOnlyWhenAFreshRunTurnsBusy(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	ms := func(d int) time.Time { return now.Add(time.Duration(d) * time.Millisecond) }
	const lead = time.Second
	cases := []struct {
		name      string
		limit     ratelimit.State
		ivl       time.Duration
		lead      time.Duration
		wantFirst time.Time
		wantLed   bool
	}{
		{"idle: now", ratelimit.State{TAT: ms(-5), Led: true}, 200 * time.Millisecond, lead, now, false},
		{"fresh run 200 ms ahead at 5/s: skip to the lead", ratelimit.State{TAT: ms(200)}, 200 * time.Millisecond, lead, ms(1000), true},
		{"fresh run 2 ms ahead at 1,000/s: follow it", ratelimit.State{TAT: ms(2)}, time.Millisecond, lead, ms(2), false},
		{"fresh run 99 ms ahead: follow it", ratelimit.State{TAT: ms(99)}, time.Millisecond, lead, ms(99), false},
		{"fresh run 100 ms ahead: skip", ratelimit.State{TAT: ms(100)}, time.Millisecond, lead, ms(1000), true},
		{"led run back within the lead: follow it, drain", ratelimit.State{TAT: ms(600), Led: true}, 200 * time.Millisecond, lead, ms(600), true},
		{"past the lead: follow it", ratelimit.State{TAT: ms(1500)}, 200 * time.Millisecond, lead, ms(1500), false},
		{"a worker (no lead): follow it", ratelimit.State{TAT: ms(300)}, 200 * time.Millisecond, 0, ms(300), false},
	}
	for _, c := range cases {
		res, next := ratelimit.Book(c.limit, now, 2, c.ivl, c.lead)
		if !res.First.Equal(c.wantFirst) || next.Led != c.wantLed || !next.TAT.Equal(c.wantFirst.Add(2*c.ivl)) {
			t.Errorf("%s: first %d ms, next %+v; want first %d ms, led %v",
				c.name, res.First.Sub(now).Milliseconds(), next, c.wantFirst.Sub(now).Milliseconds(), c.wantLed)
		}
	}
}

// The limiter's writes carry out Book: an account far under its rate books
// right after the last slot, with no lead, however close together its events
// come (the unpaced load run at 1,000/s had every event wait the lead); a run
// that skipped the lead follows its slots when they come back within it.
func TestReserveAheadFollowsCloseSlotsAndDrainsALedRun(t *testing.T) {
	l := limiter(t, 5)
	const lead = time.Second
	a, err := l.ReserveAhead(ctx, "fast", 1, 1000, lead)
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.ReserveAhead(ctx, "fast", 1, 1000, lead)
	if err != nil {
		t.Fatal(err)
	}
	if gap := b.First.Sub(a.First); gap < time.Millisecond || gap >= 100*time.Millisecond {
		t.Fatalf("1,000/s, two events at once: slots %s then %s, want the second right after (or now), not a lead later", a.First, b.First)
	}

	if _, err := l.ReserveAhead(ctx, "slow", 1, 5, lead); err != nil { // idle: now
		t.Fatal(err)
	}
	c, err := l.ReserveAhead(ctx, "slow", 1, 5, lead) // tat 200 ms ahead: skip
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // tat (c + 200 ms) is now within the lead
	d, err := l.ReserveAhead(ctx, "slow", 1, 5, lead)
	if err != nil {
		t.Fatal(err)
	}
	if d.First != c.First.Add(200*time.Millisecond) {
		t.Fatalf("a led run back within the lead: slot %s, want %s (right after %s)", d.First, c.First.Add(200*time.Millisecond), c.First)
	}
}

// A booking is one write, whichever state the limiter is in, and one more
// when another instance booked in between: the write whose condition
// failed returns the item as it is, which says the state to write for.
func TestBookingIsOneWritePlusOnePerBookingInBetween(t *testing.T) {
	env := testenv.New(t)
	const lead = time.Second
	ca, cb := testenv.NewCalls(), testenv.NewCalls() // each instance's writes
	a, _ := env.CountedClients(ca)
	b, _ := env.CountedClients(cb)
	la, lb := ratelimit.New(a, env.Table, store.RateKey, 5), ratelimit.New(b, env.Table, store.RateKey, 5)
	book := func(l *ratelimit.Limiter, account string, rate float64) ratelimit.Reservation {
		t.Helper()
		r, err := l.ReserveAhead(ctx, account, 1, rate, lead)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// One instance alone at 5/s: idle (now), then a fresh run within the
	// lead (a skip to now + lead), then a led run (after it): one write each.
	first := book(la, "acct_1", 5)
	second := book(la, "acct_1", 5)
	third := book(la, "acct_1", 5)
	if second.First.Sub(first.First) < lead || third.First != second.First.Add(200*time.Millisecond) {
		t.Fatalf("slots %s, %s, %s: want a skip of the lead, then the next slot", first.First, second.First, third.First)
	}
	if n := ca.Count("DynamoDB.UpdateItem"); n != 3 {
		t.Fatalf("3 bookings by one instance took %d writes; want 3", n)
	}
	// Another instance, which has never seen the account, guesses idle: its
	// failed write returns the led run, and the next write follows it.
	if r := book(lb, "acct_1", 5); r.First != third.First.Add(200*time.Millisecond) {
		t.Fatalf("the other instance's slot %s, want %s", r.First, third.First.Add(200*time.Millisecond))
	}
	if n := cb.Count("DynamoDB.UpdateItem"); n != 2 {
		t.Fatalf("a booking after another instance's took %d writes; want 2", n)
	}
	// At 1,000/s two bookings a millisecond apart: tat just ahead of now,
	// which the slots follow; the second instance's second write is it.
	la2, lb2 := ratelimit.New(a, env.Table, store.RateKey, 5), ratelimit.New(b, env.Table, store.RateKey, 5)
	ca.Reset()
	cb.Reset()
	x, y := book(la2, "fast", 1000), book(lb2, "fast", 1000)
	if !y.First.After(x.First) || y.First.Sub(x.First) >= 100*time.Millisecond {
		t.Fatalf("1,000/s: slots %s then %s, want the second right after", x.First, y.First)
	}
	if ca.Count("DynamoDB.UpdateItem") != 1 || cb.Count("DynamoDB.UpdateItem") > 2 {
		t.Fatalf("1,000/s: %d and %d writes; want 1, and at most 2 for the one that came second", ca.Count("DynamoDB.UpdateItem"), cb.Count("DynamoDB.UpdateItem"))
	}
}

// A slot booked and not used (the endpoint at its cap)
// is given back while it is the last one booked, so a lone deferred
// delivery costs its account one slot, not two. A slot from the middle of
// a booked run is spent: giving it back would put two attempts in one slot
// at the end of the run (the burst test would see 29 in a second at 20/s).
func TestOnlyTheLastSlotBookedIsGivenBack(t *testing.T) {
	l := limiter(t, 5)
	if _, err := l.Reserve(ctx, "acct_1", 1, 5); err != nil { // the account busy: the next run is ahead of now
		t.Fatal(err)
	}
	a, err := l.Reserve(ctx, "acct_1", 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	middle := ratelimit.Reservation{First: a.Slot(1), Interval: a.Interval}
	if err := l.Refund(ctx, "acct_1", middle); err != nil {
		t.Fatal(err)
	}
	b, err := l.Reserve(ctx, "acct_1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := a.Slot(2).Add(a.Interval); !b.First.Equal(want) {
		t.Fatalf("after giving back a middle slot the next is %s, want %s after the run (booked %s..%s)", b.First, want, a.Slot(0), a.Slot(2))
	}
	last := ratelimit.Reservation{First: b.First, Interval: a.Interval}
	if err := l.Refund(ctx, "acct_1", last); err != nil {
		t.Fatal(err)
	}
	c, err := l.Reserve(ctx, "acct_1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.First.Equal(b.First) {
		t.Fatalf("after giving back the last slot the next is %s, want it (%s)", c.First, b.First)
	}
	// A slot already in the past, or one with no interval, gives nothing back.
	if err := l.Refund(ctx, "acct_1", ratelimit.Reservation{First: time.Now().Add(-time.Second), Interval: a.Interval}); err != nil {
		t.Fatal(err)
	}
	d, err := l.Reserve(ctx, "acct_1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !d.First.Equal(c.First.Add(a.Interval)) {
		t.Fatalf("a past slot was given back: next %s, want %s", d.First, c.First.Add(a.Interval))
	}
}

// In the last pace.Cutoff of a second, slots that would fall in that second
// start at the next one (a message sent now would reach its worker too late
// to leave in it); slots already past it, and bookings earlier in the
// second, follow the plain rule.
func TestBookInASecondsTailStartsAtTheNextSecond(t *testing.T) {
	sec := time.UnixMilli(1_000_000)
	ms := func(d int) time.Time { return sec.Add(time.Duration(d) * time.Millisecond) }
	ivl := 200 * time.Millisecond
	tailStart := int((time.Second - pace.Cutoff).Milliseconds())
	for _, c := range []struct {
		name      string
		tat, now  time.Time
		wantFirst time.Time
	}{
		{"idle, before the tail: now", ms(-5), ms(tailStart - 1), ms(tailStart - 1)},
		{"idle, in the tail: the next second", ms(-5), ms(tailStart), ms(1000)},
		{"idle, the second's last ms: the next second", ms(-5), ms(999), ms(1000)},
		{"busy within this second, in the tail: the next second", ms(950), ms(tailStart + 10), ms(1000)},
		{"busy past this second: follow it", ms(1200), ms(tailStart + 10), ms(1200)},
	} {
		res, next := ratelimit.Book(ratelimit.State{TAT: c.tat}, c.now, 2, ivl, 0)
		if !res.First.Equal(c.wantFirst) || !next.TAT.Equal(c.wantFirst.Add(2*ivl)) {
			t.Errorf("%s: first %d ms, tat %d ms; want first %d ms", c.name,
				res.First.Sub(sec).Milliseconds(), next.TAT.Sub(sec).Milliseconds(), c.wantFirst.Sub(sec).Milliseconds())
		}
	}
}

// The limiter's writes carry out the tail rule, from the item as it is,
// whatever this instance remembers of it: an idle account and one booked
// only into the current second both start at the next second; the next
// booking follows.
func TestReserveInASecondsTailStartsAtTheNextSecond(t *testing.T) {
	env := testenv.New(t)
	l := ratelimit.New(env.DB, env.Table, store.RateKey, 5)
	sec := time.Now().Truncate(time.Second).Add(3 * time.Second)
	clock := sec.Add(-pace.Cutoff / 2) // in the tail of the second before sec
	l.WithClock(func() time.Time { return clock })
	a, err := l.Reserve(ctx, "idle", 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !a.First.Equal(sec) {
		t.Fatalf("idle in a tail: first slot %s, want the next second %s", a.First, sec)
	}
	b, err := l.Reserve(ctx, "idle", 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !b.First.Equal(sec.Add(400 * time.Millisecond)) {
		t.Fatalf("then: %s, want right after the first two (%s)", b.First, sec.Add(400*time.Millisecond))
	}
	// An account booked just into the current second, as another instance
	// (which remembers it as idle) finds it in the tail.
	other := ratelimit.New(env.DB, env.Table, store.RateKey, 5)
	other.WithClock(func() time.Time { return sec.Add(-pace.Cutoff - 50*time.Millisecond) }) // before the tail
	if _, err := other.Reserve(ctx, "near", 1, 5); err != nil {                              // tat: 50 ms before the second ends
		t.Fatal(err)
	}
	fresh := ratelimit.New(env.DB, env.Table, store.RateKey, 5)
	fresh.WithClock(func() time.Time { return clock })
	c, err := fresh.Reserve(ctx, "near", 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !c.First.Equal(sec) {
		t.Fatalf("booked into this second, in its tail: %s, want the next second %s", c.First, sec)
	}
}
