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
