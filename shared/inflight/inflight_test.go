package inflight

import (
	"context"
	"testing"
	"time"
)

// The handoff registry: a message waits only while a claim of its endpoint
// is held here and the waiters are fewer than the limit; slots go to the
// oldest waiter; a wait that ends with nothing handed leaves no trace, and
// one handed a slot as it ends still gets it.
func TestHandoffsWaitOnlyForALocalHolderAndServeTheOldestFirst(t *testing.T) {
	var h Local
	ctx := context.Background()
	soon := func() time.Time { return time.Now().Add(time.Second) }
	if _, ok := h.Await(ctx, "ep", 4, soon()); ok {
		t.Fatal("waited with no local holder")
	}
	if h.HandOff("ep", "0", "clm_a") {
		t.Fatal("handed a slot to nobody")
	}
	h.Hold("ep", "1")
	got := []chan Handed{make(chan Handed, 1), make(chan Handed, 1)}
	for i := 0; i < 2; i++ {
		go func() {
			if g, ok := h.Await(ctx, "ep", 2, soon()); ok {
				got[i] <- g
			}
		}()
		waitFor(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.waiters["ep"]) == i+1 })
	}
	if _, ok := h.Await(ctx, "ep", 2, soon()); ok {
		t.Fatal("a third waiter past the limit of 2")
	}
	if !h.HandOff("ep", "1", "clm_b") || !h.HandOff("ep", "0", "clm_c") {
		t.Fatal("two waiters, two handoffs refused")
	}
	if first, second := <-got[0], <-got[1]; first != (Handed{"1", "clm_b"}) || second != (Handed{"0", "clm_c"}) {
		t.Fatalf("the first waiter got %v, the second %v: want the oldest served first", first, second)
	}
	if _, ok := h.Await(ctx, "ep", 2, time.Now().Add(10*time.Millisecond)); ok {
		t.Fatal("a wait with nothing handed over got a slot")
	}
	if h.HandOff("ep", "0", "clm_d") {
		t.Fatal("a timed-out waiter was handed a slot")
	}
	h.Release("ep", "1")
	if h.Holds("ep") {
		t.Fatal("holder still counted after its release")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500 && !cond(); i++ {
		time.Sleep(2 * time.Millisecond)
	}
	if !cond() {
		t.Fatal("condition never held")
	}
}
