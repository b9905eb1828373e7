package window

import (
	"testing"
	"time"
)

func TestBusiestCountsTheFullestWindowShorterThanW(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms ...int) []time.Time {
		var ts []time.Time
		for _, m := range ms {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	for _, c := range []struct {
		name string
		at   []time.Time
		want int
	}{
		{"none", nil, 0},
		{"one", at(5), 1},
		{"a second apart is two windows", at(0, 1000), 1},
		{"just under a second is one", at(0, 999), 2},
		{"unsorted", at(2500, 100, 1200, 900, 1050), 3}, // 100, 900, 1050
		{"the busiest is not the first", at(0, 1500, 1600, 1700, 2400), 4},
	} {
		if got := Busiest(c.at, time.Second); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestBusiestWallClockSecondCountsWithinWholeSeconds(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms ...int) []time.Time {
		var ts []time.Time
		for _, m := range ms {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	for _, c := range []struct {
		name string
		at   []time.Time
		want int
	}{
		{"none", nil, 0},
		{"across a second's end: two seconds", at(900, 950, 1000, 1050), 2},
		{"within one", at(0, 500, 999, 1000), 3},
	} {
		if got := BusiestWallClockSecond(c.at); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
