package inflight

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// takes records a pool's writes (the table's side is store.TakeSlots',
// tested on the emulator); every slot asked for is granted.
type takes struct {
	mu    sync.Mutex
	asked [][]string
	freed [][]string
}

func (t *takes) TakeSlots(_ context.Context, _ string, st store.SlotTake) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.asked = append(t.asked, st.Slots)
	return st.Slots, nil
}

func (t *takes) FreeSlots(_ context.Context, _, _ string, slots []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.freed = append(t.freed, slots)
}

func (t *takes) SlotRoute(context.Context, string) (string, error) { return "", nil }

// A pool living past its lease's horizon (make dev's process serves many
// invocations) takes its idle slot again for longer, in one write, rather
// than losing it while the table still leases it to the group (no one
// could use it until it ran out), and frees what it holds at the end.
func TestAPoolRenewsAnIdleSlotWhoseLeaseRunsShort(t *testing.T) {
	clock := time.Now()
	now := func() time.Time { return clock }
	var ps Pools
	tk := &takes{}
	ep := &domain.Endpoint{ID: "ep_1", AccountID: "acct_1"}
	ps.Join("k", ep.ID)
	ctx := context.Background()
	first, checked, err := ps.acquire(ctx, tk, "k", ep, 1, 25*time.Second, now, clock.Add(Wait))
	if err != nil || first == "" || !checked || len(tk.asked) != 1 {
		t.Fatalf("first acquire: %q %v %v after %d takes", first, checked, err, len(tk.asked))
	}
	ps.Put("k", first)
	// A later message read the endpoint while the pool held the slot.
	ep.Leases = map[string]domain.Lease{first: {Until: domain.Millis(clock.Add(time.Minute)), Claim: ps.by["k"].group}}
	clock = clock.Add(40 * time.Second) // past FunctionTimeout: the lease covers no new claim's
	again, checked, err := ps.acquire(ctx, tk, "k", ep, 1, 25*time.Second, now, clock.Add(Wait))
	if err != nil || again != first || !checked || len(tk.asked) != 2 || !slices.Equal(tk.asked[1], []string{first}) {
		t.Fatalf("after 40 s: %q %v %v, takes %v; want slot %q taken again", again, checked, err, tk.asked, first)
	}
	if l := ps.by["k"].held[first]; l < domain.Millis(clock.Add(25*time.Second)) {
		t.Fatalf("renewed lease %d ends before the claim's", l)
	}
	ps.Put("k", again)
	ps.Leave(ctx, tk, "k")
	if len(tk.freed) != 1 || !slices.Equal(tk.freed[0], []string{first}) {
		t.Fatalf("freed %v at the end, want [%s]", tk.freed, first)
	}
}

// gated takes slots only as the test lets each write finish.
type gated struct {
	takes
	gate chan struct{}
}

func (g *gated) TakeSlots(ctx context.Context, id string, st store.SlotTake) ([]string, error) {
	<-g.gate
	return g.takes.TakeSlots(ctx, id, st)
}

// A waiter whose wait ends while a take made for it is under way waits for
// that take's grant without the pools' lock: the take must lock it to give
// the grant. Holding it there deadlocked every message of the process.
func TestAWaiterCoveredByATakeUnderWayDoesNotBlockIt(t *testing.T) {
	var ps Pools
	g := &gated{gate: make(chan struct{})}
	ep := &domain.Endpoint{ID: "ep_1", AccountID: "acct_1"}
	ctx := context.Background()
	waiters := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			ps.mu.Lock()
			p := ps.by["k"]
			got := p != nil && len(p.waiters) == n
			ps.mu.Unlock()
			if got {
				return
			}
		}
		t.Fatalf("never %d waiters", n)
	}
	done := make(chan string, 3)
	acquire := func(wait time.Duration) {
		slot, _, err := ps.acquire(ctx, g, "k", ep, 3, time.Minute, time.Now, time.Now().Add(wait))
		if err != nil {
			t.Error(err)
		}
		done <- slot
	}
	go acquire(time.Minute) // A: the first take, held at the gate
	waiters(0)
	time.Sleep(20 * time.Millisecond)
	go acquire(time.Minute) // B: waits for A's take
	waiters(1)
	go acquire(300 * time.Millisecond) // C: waits, briefly
	waiters(2)
	g.gate <- struct{}{} // A's take ends: A has its slot; B is woken and takes for C too
	waiters(0)
	time.Sleep(500 * time.Millisecond) // C's wait ends while B's take is under way
	g.gate <- struct{}{}
	for i := 0; i < 3; i++ {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of 3 acquires returned: the pools are locked", i)
		}
	}
}
