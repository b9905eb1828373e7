package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

// An instance's memory of the accounts it booked is bounded: past
// memoryMax accounts it starts over, and keeps the newest.
func TestMemoryOfAccountsIsBounded(t *testing.T) {
	l := New(nil, "t", nil, 5)
	at := seenItem{State: State{TAT: time.UnixMilli(1_000)}, ivl: 200_000}
	for i := 0; i <= memoryMax; i++ {
		l.see("acct_"+strconv.Itoa(i), at)
	}
	if n := len(l.seen); n > memoryMax {
		t.Fatalf("%d accounts remembered; want at most %d", n, memoryMax)
	}
	if got := l.lastSeen("acct_" + strconv.Itoa(memoryMax)); !got.TAT.Equal(at.TAT) {
		t.Fatalf("the newest account forgotten: %+v", got)
	}
}
