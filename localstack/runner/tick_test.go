package runner

import (
	"testing"
	"time"
)

// A runner started again keeps its schedule's cadence: the first tick after
// a restart comes at most one interval after the last tick before it,
// wherever in the interval the restart falls.
func TestScheduleKeepsItsCadenceAcrossRestarts(t *testing.T) {
	every := 10 * time.Second
	t0 := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	last := nextTick(t0, every) // a tick the first process made
	for _, after := range []time.Duration{0, time.Millisecond, 3 * time.Second, 9*time.Second + 900*time.Millisecond} {
		restart := last.Add(after)
		next := nextTick(restart, every)
		if !next.After(restart) {
			t.Fatalf("restart at +%s: next tick %s is not after it", after, next.Sub(last))
		}
		if gap := next.Sub(last); gap > every {
			t.Fatalf("restart at +%s after a tick: the next tick is %s after it, more than the interval %s", after, gap, every)
		}
	}
}
