// Package retry holds the contract's retry schedule and the table that sorts
// an attempt's result into delivered, retry, or failed for good.
package retry

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// DefaultJitter is the most random time added to a wait, as a fraction of it.
const DefaultJitter = 0.15

// Schedule is the waits before retries 1..n; the delivery gets len(Waits)+1
// attempts in all.
type Schedule struct {
	Waits  []time.Duration
	Jitter float64 // 0.15: each wait grows by 0 to 15 %
}

// Default is the contract: 8 attempts, the wait before retry n is n^4 seconds
// (1 s, 16 s, 81 s, 256 s, 625 s, 1296 s, 2401 s: 78 minutes in all), plus jitter.
func Default() Schedule {
	waits := make([]time.Duration, 7)
	for i := range waits {
		n := time.Duration(i + 1)
		waits[i] = n * n * n * n * time.Second
	}
	return Schedule{Waits: waits, Jitter: DefaultJitter}
}

// Parse reads an override such as "1s,1s,2s" (RETRY_SCHEDULE). An empty
// string means the default.
func Parse(s string) (Schedule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Default(), nil
	}
	var waits []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil {
			return Schedule{}, fmt.Errorf("retry schedule %q: %w", s, err)
		}
		if d < 0 || d > 12*time.Hour {
			// SQS can hide a received message for at most 12 hours.
			return Schedule{}, fmt.Errorf("retry schedule %q: wait %s is outside 0..12h", s, d)
		}
		waits = append(waits, d)
	}
	return Schedule{Waits: waits, Jitter: DefaultJitter}, nil
}

// MaxAttempts is the first attempt plus one per wait.
func (s Schedule) MaxAttempts() int { return len(s.Waits) + 1 }

// Wait returns how long to wait after failed attempt number attempt (1-based)
// before the next one, with jitter drawn from r (nil: a shared source).
// ok is false when no attempts are left.
func (s Schedule) Wait(attempt int, r *rand.Rand) (d time.Duration, ok bool) {
	if attempt < 1 || attempt > len(s.Waits) {
		return 0, false
	}
	base := s.Waits[attempt-1]
	f := rand.Float64
	if r != nil {
		f = r.Float64
	}
	return base + time.Duration(f()*s.Jitter*float64(base)), true
}

// Total is the sum of the waits without jitter: how long a delivery can stay
// pending before it fails for good.
func (s Schedule) Total() time.Duration {
	var t time.Duration
	for _, w := range s.Waits {
		t += w
	}
	return t
}
