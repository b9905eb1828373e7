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
