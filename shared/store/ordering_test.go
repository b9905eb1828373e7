package store_test

import (
	"fmt"
	"sync"
	"testing"
)

// A key's events are numbered 1, 2, 3... and each ordered delivery is
// chained to the one before it on its endpoint; other keys and accounts
// count on their own.
func TestSequenceNumbersAndChains(t *testing.T) {
	s := newStore(t)
	first, err := s.Sequence(ctx, "acct_a", "order-1", map[string]string{"ep_1": "dlv_1"}, 0)
	if err != nil || first.Seq != 1 || len(first.Prev) != 0 {
		t.Fatalf("first: %+v %v", first, err)
	}
	second, err := s.Sequence(ctx, "acct_a", "order-1", map[string]string{"ep_1": "dlv_2", "ep_2": "dlv_3"}, 0)
	if err != nil || second.Seq != 2 || second.Prev["ep_1"] != "dlv_1" || second.Prev["ep_2"] != "" {
		t.Fatalf("second: %+v %v", second, err)
	}
	third, err := s.Sequence(ctx, "acct_a", "order-1", nil, 0) // no ordered endpoint: numbered, chains kept
	if err != nil || third.Seq != 3 {
		t.Fatalf("third: %+v %v", third, err)
	}
	fourth, _ := s.Sequence(ctx, "acct_a", "order-1", map[string]string{"ep_1": "dlv_4"}, 0)
	if fourth.Seq != 4 || fourth.Prev["ep_1"] != "dlv_2" {
		t.Fatalf("fourth: %+v", fourth)
	}
	for _, other := range [][2]string{{"acct_a", "order-2"}, {"acct_b", "order-1"}} {
		if o, err := s.Sequence(ctx, other[0], other[1], map[string]string{"ep_1": "x"}, 0); err != nil || o.Seq != 1 || len(o.Prev) != 0 {
			t.Fatalf("%v: %+v %v", other, o, err)
		}
	}
}

// Concurrent events of one key form one chain in the order of their
// numbers: n's predecessor is n-1's delivery, none skipped or repeated.
func TestSequenceChainUnderConcurrency(t *testing.T) {
	s := newStore(t)
	const n = 20
	prevOf := make(map[int64]string, n)
	deliveryOf := make(map[int64]string, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := fmt.Sprintf("dlv_%d", i)
			sq, err := s.Sequence(ctx, "acct_c", "k", map[string]string{"ep_1": d}, 0)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if _, dup := deliveryOf[sq.Seq]; dup {
				t.Errorf("number %d given twice", sq.Seq)
			}
			prevOf[sq.Seq], deliveryOf[sq.Seq] = sq.Prev["ep_1"], d
		}()
	}
	wg.Wait()
	for seq := int64(1); seq <= n; seq++ {
		want := deliveryOf[seq-1] // "" for the first
		if prevOf[seq] != want {
			t.Fatalf("number %d follows %q, want %q", seq, prevOf[seq], want)
		}
	}
}
