package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

func parkedIDs(t *testing.T, s *store.Store, before time.Time) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for shard := 0; shard < schema.SweepShards; shard++ {
		page, err := s.ParkedBefore(ctx, shard, domain.Millis(before), 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range page.IDs {
			ids[id] = true
		}
	}
	return ids
}

func sweepIDs(t *testing.T, s *store.Store, before time.Time) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for shard := 0; shard < schema.SweepShards; shard++ {
		page, err := s.DueForSweep(ctx, shard, 0, domain.Millis(before), 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range page.IDs {
			ids[id] = true
		}
	}
	return ids
}

// A parked delivery is in the park index by its time, out of the sweeper's
// reach until then, and unparked by exactly one of several concurrent
// scheduler runs, which bumps its generation and gets the slot it carried.
func TestParkedDeliveryIsUnparkedOnce(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(40 * time.Minute)
	p := store.Park{Until: domain.Millis(until), Gen: d.Gen, SlotAt: domain.Millis(until), SlotFor: 0, Deferred: 3}
	if err := s.ParkDelivery(ctx, d.ID, store.Park{Until: p.Until, Gen: d.Gen + 1}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a message of another generation parked it: %v", err)
	}
	if err := s.ParkDelivery(ctx, d.ID, p); err != nil {
		t.Fatal(err)
	}
	if err := s.ParkDelivery(ctx, d.ID, p); err != nil { // a duplicate of the parking message
		t.Fatal(err)
	}
	if parkedIDs(t, s, until.Add(-time.Minute))[d.ID] || !parkedIDs(t, s, until.Add(time.Minute))[d.ID] {
		t.Fatal("the park index does not hold it by its time")
	}
	if sweepIDs(t, s, until.Add(-time.Minute))[d.ID] {
		t.Fatal("the sweeper would take a parked delivery for stuck before its time")
	}

	var mu sync.Mutex
	var won []store.Park
	var gens []int
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, park, err := s.Unpark(ctx, d.ID, domain.Millis(until.Add(time.Minute)))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won, gens = append(won, park), append(gens, got.Gen)
			case !errors.Is(err, store.ErrConflict):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(won) != 1 || won[0] != p || gens[0] != d.Gen+1 {
		t.Fatalf("unparked by %d runs: %+v gens %v; want one, with %+v, gen %d", len(won), won, gens, p, d.Gen+1)
	}
	if cur, _ := s.GetDelivery(ctx, d.ID); cur.Gen != d.Gen+1 || cur.DueAt != p.Until {
		t.Fatalf("after unpark: gen %d due %d", cur.Gen, cur.DueAt)
	}
	if parkedIDs(t, s, until.Add(time.Hour))[d.ID] {
		t.Fatal("still in the park index")
	}
}

// A park left behind when the delivery moved on (the sweeper re-queued it
// under a new generation) is cleared by the scheduler, not sent.
func TestStaleParkIsCleared(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := s.ParkDelivery(ctx, d.ID, store.Park{Until: domain.Millis(past), Gen: d.Gen}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Requeue(ctx, d.ID, domain.Millis(time.Now()), domain.Millis(time.Now()), 8); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Unpark(ctx, d.ID, domain.Millis(time.Now())); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a stale park was unparked: %v", err)
	}
	if parkedIDs(t, s, time.Now())[d.ID] {
		t.Fatal("the stale park is still in the index")
	}
}

// A wait past the item's TTL (a rate backlog longer than
// the retention) was parked, and the delivery vanished with the item,
// never dead-lettered. Parking now refuses a wait that would end within the
// expiry margin of the TTL (ErrOutlives), and writes nothing.
func TestParkingPastTheItemsTTLIsRefused(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	ttl := time.Unix(d.ExpiresAt, 0)
	before, _ := s.GetDelivery(ctx, d.ID)
	late := store.Park{Until: domain.Millis(ttl.Add(-30 * time.Minute)), Gen: d.Gen}
	if err := s.ParkDelivery(ctx, d.ID, late); !errors.Is(err, store.ErrOutlives) {
		t.Fatalf("a wait ending 30 min before the TTL: %v, want ErrOutlives", err)
	}
	if got, _ := s.GetDelivery(ctx, d.ID); got.DueAt != before.DueAt {
		t.Fatalf("a refused park moved the due time: %d, was %d", got.DueAt, before.DueAt)
	}
	if err := s.ParkDelivery(ctx, d.ID, store.Park{Until: late.Until, Gen: d.Gen + 1}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another generation's late park: %v, want ErrConflict", err)
	}
	if err := s.ParkDelivery(ctx, d.ID, store.Park{Until: domain.Millis(ttl.Add(-2 * time.Hour)), Gen: d.Gen}); err != nil {
		t.Fatalf("a wait ending 2 h before the TTL: %v", err)
	}
}

// An unpark whose write was taken and retried (its answer lost) is the
// scheduler's own: unparked, with the park's time, so that its message is
// sent (taken for another run's, none was, and the delivery waited for the
// sweeper); gen is bumped once.
func TestAnUnparkRetriedAfterItsWriteWasTakenIsUnparked(t *testing.T) {
	env := testenv.New(t)
	s := store.New(testenv.WritesTwice{DynamoDB: env.DB}, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(40 * time.Minute)
	if err := s.ParkDelivery(ctx, d.ID, store.Park{Until: domain.Millis(until), Gen: d.Gen}); err != nil {
		t.Fatal(err)
	}
	got, p, err := s.Unpark(ctx, d.ID, domain.Millis(until.Add(time.Minute)))
	if err != nil || got.Gen != d.Gen+1 || p.Until != domain.Millis(until) {
		t.Fatalf("unpark retried after its write was taken: %+v %+v %v, want unparked at %d, gen %d", got, p, err, domain.Millis(until), d.Gen+1)
	}
}
