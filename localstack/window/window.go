// Package window counts events in sliding time windows, for the tests and
// load runs that check a receiver's busiest second against a rate.
package window

import (
	"slices"
	"time"
)

// Busiest is the most of the times at that fall within any window
// shorter than w: a receiver's busiest second, with w a second. It sorts at.
func Busiest(at []time.Time, w time.Duration) int {
	slices.SortFunc(at, time.Time.Compare)
	best, j := 0, 0
	for i := range at {
		for at[i].Sub(at[j]) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// BusiestWallClockSecond is the most of the times at that fall within one
// wall-clock second (UTC, from .000 to .999): what an account's rate bounds
// (shared/pace).
func BusiestWallClockSecond(at []time.Time) int {
	n := map[int64]int{}
	best := 0
	for _, t := range at {
		s := t.Unix()
		n[s]++
		best = max(best, n[s])
	}
	return best
}
