package retry

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestDefaultScheduleIsTheContract(t *testing.T) {
	s := Default()
	want := []time.Duration{1, 16, 81, 256, 625, 1296, 2401}
	if len(s.Waits) != len(want) || s.MaxAttempts() != 8 {
		t.Fatalf("waits %v, max attempts %d", s.Waits, s.MaxAttempts())
	}
	for i, w := range want {
		if s.Waits[i] != w*time.Second {
			t.Errorf("wait before retry %d = %s, want %ds", i+1, s.Waits[i], w)
		}
	}
	if got := s.Total(); got != 4676*time.Second { // 77.9 minutes
		t.Errorf("total %s", got)
	}
	// An outage under about an hour is absorbed; one over ~90 min (even with full jitter) is not.
	if s.Total() < time.Hour || time.Duration(float64(s.Total())*(1+s.Jitter)) > 90*time.Minute {
		t.Errorf("total %s does not fit the contract's 1 h .. 90 min", s.Total())
	}
}

func TestJitterBounds(t *testing.T) {
	s := Default()
	r := rand.New(rand.NewPCG(1, 2))
	for attempt := 1; attempt <= 7; attempt++ {
		base := s.Waits[attempt-1]
		lo, hi := base, base+time.Duration(0.15*float64(base))
		var min, max time.Duration = 1 << 62, 0
		for i := 0; i < 2000; i++ {
			d, ok := s.Wait(attempt, r)
			if !ok {
				t.Fatalf("attempt %d: no wait", attempt)
			}
			if d < lo || d > hi {
				t.Fatalf("attempt %d: wait %s outside [%s, %s]", attempt, d, lo, hi)
			}
			min, max = minD(min, d), maxD(max, d)
		}
		// The jitter is really used: draws spread over most of the 15 %.
		if spread := float64(max-min) / float64(hi-lo); spread < 0.9 {
			t.Errorf("attempt %d: jitter spread only %.2f of the range", attempt, spread)
		}
	}
	if _, ok := s.Wait(8, r); ok {
		t.Error("after the 8th attempt there must be no wait: the delivery fails")
	}
	if _, ok := s.Wait(0, r); ok {
		t.Error("attempt 0 does not exist")
	}
}

func minD(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func maxD(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func TestParse(t *testing.T) {
	s, err := Parse("1s, 1s,2s")
	if err != nil || len(s.Waits) != 3 || s.Waits[2] != 2*time.Second || s.MaxAttempts() != 4 {
		t.Fatalf("Parse = %+v, %v", s, err)
	}
	if s, err := Parse(""); err != nil || s.MaxAttempts() != 8 {
		t.Fatalf("empty must give the default: %+v %v", s, err)
	}
	for _, bad := range []string{"1", "1s,,2s", "-1s", "13h", "soon"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) must fail", bad)
		}
	}
}
