package ratelimit_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// gated holds an UpdateItem at its gate.
type gated struct {
	ratelimit.DynamoDB
	*testenv.Gate
}

// gatedTable is a test's table, its calls counted, through a gate.
func gatedTable(t *testing.T) (*testenv.Env, *testenv.Calls, *gated) {
	t.Helper()
	env := testenv.New(t)
	calls := testenv.NewCalls()
	db, _ := env.CountedClients(calls)
	return env, calls, &gated{DynamoDB: db, Gate: testenv.NewGate()}
}

func (g *gated) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	g.Pass()
	return g.DynamoDB.UpdateItem(ctx, in, o...)
}

// bookWhileAWriteIsInFlight books once, and while that write is held, n
// more bookings of the same kind; it returns every slot's start, sorted.
func bookWhileAWriteIsInFlight(t *testing.T, l *ratelimit.Limiter, g *gated, account string, n int, perSecond float64, lead time.Duration) []time.Time {
	t.Helper()
	var mu sync.Mutex
	var slots []time.Time
	var wg sync.WaitGroup
	book := func() {
		defer wg.Done()
		r, err := l.ReserveAhead(ctx, account, 1, perSecond, lead)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		slots = append(slots, r.First)
		mu.Unlock()
	}
	// Not near a second's end: a booking in its last pace.Cutoff starts at
	// the next second (Book's tail), which would split the slots.
	if left := time.Until(time.Now().Truncate(time.Second).Add(time.Second)); left < time.Second/2 {
		time.Sleep(left)
	}
	wg.Add(1 + n)
	g.Arm()
	go book()
	<-g.Entered
	for range n {
		go book()
	}
	if !gathered(l, account, perSecond, lead, n) {
		g.Open()
		wg.Wait()
		t.Fatalf("%d of %d slots gathered behind the write in flight", l.Gathering(account, perSecond, lead), n)
	}
	g.Open()
	wg.Wait()
	sort.Slice(slots, func(i, j int) bool { return slots[i].Before(slots[j]) })
	return slots
}

// gathered waits up to 5 s for n slots of account's bookings at perSecond
// and lead to gather behind the write in flight.
func gathered(l *ratelimit.Limiter, account string, perSecond float64, lead time.Duration, n int) bool {
	for deadline := time.Now().Add(5 * time.Second); l.Gathering(account, perSecond, lead) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func evenlySpaced(t *testing.T, slots []time.Time, ivl time.Duration) {
	t.Helper()
	for i := 1; i < len(slots); i++ {
		if gap := slots[i].Sub(slots[i-1]); gap != ivl {
			t.Fatalf("slots %d and %d are %s apart, want %s: %v", i-1, i, gap, ivl, slots)
		}
	}
}

// The bookings one process makes for an account while a write of theirs is
// in flight wait for it and then book in one write, sharing its slots: 10
// bookings, 2 writes, 10 distinct slots one interval apart.
func TestBookingsWaitingForAWriteShareTheNext(t *testing.T) {
	env, calls, g := gatedTable(t)
	l := ratelimit.New(g, env.Table, store.RateKey, 5)
	slots := bookWhileAWriteIsInFlight(t, l, g, "acct_1", 9, 10, ratelimit.Lead)
	if len(slots) != 10 {
		t.Fatalf("%d bookings succeeded, want 10", len(slots))
	}
	evenlySpaced(t, slots, 100*time.Millisecond)
	if n := calls.Count("DynamoDB.UpdateItem"); n != 2 {
		t.Fatalf("10 bookings took %d writes; want 2 (the first alone, the nine that waited for it together)", n)
	}
}

// A worker's bookings (no rate: the stored one) share a write too once the
// instance knows the stored interval. Several slots at the stored rate are
// booked at the interval last seen, on the condition that the item still
// stores it: after another instance changed the rate, the write is made
// again at the new one, which stays.
func TestWorkerBookingsShareAWriteAtTheStoredRate(t *testing.T) {
	env, calls, g := gatedTable(t)
	la := ratelimit.New(g, env.Table, store.RateKey, 5)
	lb := ratelimit.New(env.DB, env.Table, store.RateKey, 5)
	// la's first booking goes alone (it does not know the interval yet) and
	// stores the default, 5/s; then ingest, elsewhere, books at 20/s.
	if _, err := la.Reserve(ctx, "acct_1", 1, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := lb.Reserve(ctx, "acct_1", 1, 20); err != nil {
		t.Fatal(err)
	}
	calls.Reset()
	three, err := la.Reserve(ctx, "acct_1", 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if three.Interval != 50*time.Millisecond || calls.Count("DynamoDB.UpdateItem") != 2 {
		t.Fatalf("3 slots at the stored rate: %s apart in %d writes; want 50ms (20/s) in 2 (the one for 5/s refused)",
			three.Interval, calls.Count("DynamoDB.UpdateItem"))
	}
	calls.Reset()
	slots := bookWhileAWriteIsInFlight(t, la, g, "acct_1", 6, 0, 0)
	if len(slots) != 7 {
		t.Fatalf("%d bookings succeeded, want 7", len(slots))
	}
	evenlySpaced(t, append([]time.Time{three.Slot(2)}, slots...), 50*time.Millisecond)
	if n := calls.Count("DynamoDB.UpdateItem"); n != 2 {
		t.Fatalf("7 worker bookings took %d writes; want 2 (one alone, the six that waited for it together)", n)
	}
	r, err := lb.Reserve(ctx, "acct_1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := slots[len(slots)-1].Add(50 * time.Millisecond); !r.First.Equal(want) {
		t.Fatalf("the next slot at the stored rate is %s, want %s: the workers' writes changed the rate", r.First, want)
	}
}

// The write a group's first booking makes is the others' too: that booking's
// caller going away (its context canceled) fails no other booking.
func TestABookingsCanceledContextFailsNoOtherBooking(t *testing.T) {
	env, _, g := gatedTable(t)
	l := ratelimit.New(g, env.Table, store.RateKey, 5)
	g.Arm()
	firstErr := make(chan error, 1)
	go func() { _, err := l.ReserveAhead(ctx, "acct_1", 1, 10, 0); firstErr <- err }()
	<-g.Entered // the write in flight
	gone, hangUp := context.WithCancel(ctx)
	goneErr, otherErr := make(chan error, 1), make(chan error, 1)
	go func() { _, err := l.ReserveAhead(gone, "acct_1", 1, 10, 0); goneErr <- err }() // the next write's maker
	if !gathered(l, "acct_1", 10, 0, 1) {
		t.Fatal("the booking was not gathered behind the write in flight")
	}
	go func() { _, err := l.ReserveAhead(ctx, "acct_1", 1, 10, 0); otherErr <- err }()
	if !gathered(l, "acct_1", 10, 0, 2) {
		t.Fatal("the other booking was not gathered")
	}
	hangUp()
	g.Open()
	for name, c := range map[string]chan error{"first": firstErr, "other": otherErr, "canceled": goneErr} {
		if err := <-c; err != nil {
			t.Errorf("%s booking: %v", name, err)
		}
	}
}
