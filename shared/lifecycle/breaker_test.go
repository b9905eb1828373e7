package lifecycle_test

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
)

// A wait up to SQS's delay limit is a delayed copy; beyond it a delivery's
// own message is parked, a resend's hops in delayed copies.
func TestHowToWait(t *testing.T) {
	d, _, _ := pending()
	for _, c := range []struct {
		wait   time.Duration
		resend bool
		want   lifecycle.WaitVerb
	}{
		{time.Second, false, lifecycle.WaitDelayed},
		{15 * time.Minute, false, lifecycle.WaitDelayed},
		{15*time.Minute + time.Millisecond, false, lifecycle.WaitParked},
		{2401 * time.Second, false, lifecycle.WaitParked},
		{2401 * time.Second, true, lifecycle.WaitDelayed},
	} {
		got := lifecycle.HowToWait(c.wait, 15*time.Minute, c.resend)
		if got != c.want {
			t.Errorf("HowToWait(%v, resend %v) = %v, want %v", c.wait, c.resend, got, c.want)
		}
		if got == lifecycle.WaitParked {
			checkEdge(t, &d, lifecycle.Parked)
		}
	}
}

// covering collects the breaker events the cases below make.
var breakerCovered = map[lifecycle.BreakerEvent]bool{}

func TestBreakerAfterAttempt(t *testing.T) {
	timeout := httpOutcome(0, webhook.ErrTimeout, 0)
	refused := httpOutcome(0, webhook.ErrConnRefused, 0)
	answered := httpOutcome(503, "", 0)
	ok := httpOutcome(200, "", 0)
	open := func(ep *domain.Endpoint) { ep.BreakerOpenUntil, ep.BreakerPauseMs = ms(20*time.Second), 30_000 }
	halfOpen := func(pauseMs int64) func(*domain.Endpoint) {
		return func(ep *domain.Endpoint) { ep.BreakerOpenUntil, ep.BreakerPauseMs = ms(-time.Second), pauseMs }
	}
	cases := []struct {
		name  string
		setup func(*domain.Endpoint)
		r     destination.Outcome
		probe bool
		on    lifecycle.BreakerEvent
		pause time.Duration // > 0: opens with this pause
		count bool
		close bool
	}{
		{"first timeout: counted", func(*domain.Endpoint) {}, timeout, false, lifecycle.BreakerFailed, 0, true, false},
		{"fourth connection failure: counted", func(ep *domain.Endpoint) { ep.BreakerFails = 3 }, refused, false, lifecycle.BreakerFailed, 0, true, false},
		{"fifth in a row: opens for 30 s", func(ep *domain.Endpoint) { ep.BreakerFails = 4 }, timeout, false, lifecycle.BreakerTripped, 30 * time.Second, false, false},
		{"an HTTP answer resets the count", func(ep *domain.Endpoint) { ep.BreakerFails = 4 }, answered, false, lifecycle.BreakerAnswered, 0, false, true},
		{"a 2xx with no count: nothing to write", func(*domain.Endpoint) {}, ok, false, "", 0, false, false},
		{"a 5xx with no count: nothing to write", func(*domain.Endpoint) {}, answered, false, "", 0, false, false},
		{"an attempt in flight when it opened: no change", open, timeout, false, "", 0, false, false},
		{"probe answered 2xx: closed", halfOpen(30_000), ok, true, lifecycle.BreakerProbeOK, 0, false, true},
		{"probe answered 5xx: closed (it answers again)", halfOpen(30_000), answered, true, lifecycle.BreakerProbeOK, 0, false, true},
		{"probe timed out: 60 s", halfOpen(30_000), timeout, true, lifecycle.BreakerProbeBad, time.Minute, false, false},
		{"probe timed out at 160 s: 5 min at most", halfOpen(160_000), timeout, true, lifecycle.BreakerProbeBad, 5 * time.Minute, false, false},
		{"probe refused at 5 min: stays 5 min", halfOpen(300_000), refused, true, lifecycle.BreakerProbeBad, 5 * time.Minute, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ep, _ := pending()
			c.setup(&ep)
			from := lifecycle.BreakerOf(ep, now)
			if c.probe && from != lifecycle.BreakerHalfOpen {
				t.Fatalf("setup: a probe from %s", from)
			}
			if c.probe {
				from = lifecycle.BreakerProbing // the worker won the probe
			}
			rnd := rand.New(rand.NewPCG(1, 2))
			got := lifecycle.BreakerAfterAttempt(ep, c.r, c.probe, now, rnd)
			if got.On != c.on || got.Count != c.count || got.Close != c.close || (got.OpenUntil != 0) != (c.pause > 0) {
				t.Fatalf("BreakerAfterAttempt = %+v; want on %q count %v close %v pause %v", got, c.on, c.count, c.close, c.pause)
			}
			if c.pause > 0 {
				open := time.UnixMilli(got.OpenUntil).Sub(now)
				if got.PauseMs != c.pause.Milliseconds() || open < c.pause*8/10 || open > c.pause*12/10 {
					t.Fatalf("opens for %v with pause %d ms; want %v ±20 %%", open, got.PauseMs, c.pause)
				}
			}
			if got.On != "" {
				checkBreakerEdge(t, from, got.On)
			}
		})
	}
}

func checkBreakerEdge(t *testing.T, from lifecycle.BreakerState, on lifecycle.BreakerEvent) {
	t.Helper()
	for _, tr := range lifecycle.BreakerTransitions {
		if tr.From == lifecycle.State(from) && tr.On == lifecycle.Event(on) {
			breakerCovered[on] = true
			return
		}
	}
	t.Errorf("breaker: %q from %s is not in BreakerTransitions", on, from)
}

// The pauses of breakers opened together are spread over ±20 %.
func TestBreakerPausesAreJittered(t *testing.T) {
	_, ep, _ := pending()
	ep.BreakerFails = 4
	rnd := rand.New(rand.NewPCG(7, 7))
	lo, hi := time.Hour, time.Duration(0)
	for i := 0; i < 200; i++ {
		c := lifecycle.BreakerAfterAttempt(ep, httpOutcome(0, webhook.ErrTimeout, 0), false, now, rnd)
		d := time.UnixMilli(c.OpenUntil).Sub(now)
		lo, hi = min(lo, d), max(hi, d)
	}
	if lo < 24*time.Second || hi > 36*time.Second || hi-lo < 8*time.Second {
		t.Fatalf("pauses from %v to %v; want spread over 24..36 s", lo, hi)
	}
}

// While the breaker is open, or another worker probes, a delivery waits
// without an attempt; half-open, its attempt is the probe.
func TestDecideHonoursTheBreaker(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*domain.Endpoint)
		verb  lifecycle.Verb
		until time.Time
		probe bool
		state lifecycle.BreakerState
	}{
		{"closed", func(*domain.Endpoint) {}, lifecycle.Attempt, time.Time{}, false, lifecycle.BreakerClosed},
		{"open", func(ep *domain.Endpoint) { ep.BreakerOpenUntil = ms(20 * time.Second) }, lifecycle.Wait, now.Add(20 * time.Second), false, lifecycle.BreakerOpen},
		{"half-open: the probe", func(ep *domain.Endpoint) { ep.BreakerOpenUntil = ms(-time.Second) }, lifecycle.Attempt, time.Time{}, true, lifecycle.BreakerHalfOpen},
		{"another worker probes", func(ep *domain.Endpoint) {
			ep.BreakerOpenUntil, ep.BreakerProbeUntil = ms(-time.Second), ms(25*time.Second)
		},
			lifecycle.Wait, now.Add(25 * time.Second), false, lifecycle.BreakerProbing},
		{"the probe's worker died", func(ep *domain.Endpoint) {
			ep.BreakerOpenUntil, ep.BreakerProbeUntil = ms(-time.Minute), ms(-time.Second)
		},
			lifecycle.Attempt, time.Time{}, true, lifecycle.BreakerHalfOpen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ep, ev := pending()
			c.setup(&ep)
			if s := lifecycle.BreakerOf(ep, now); s != c.state {
				t.Fatalf("BreakerOf = %s, want %s", s, c.state)
			}
			got := lifecycle.Decide(lifecycle.Input{Msg: msgFor(d), Delivery: &d, Endpoint: &ep, Event: &ev, Now: now, MaxAttempts: 8})
			if got.Verb != c.verb || !got.Until.Equal(c.until) || got.Probe != c.probe {
				t.Fatalf("Decide = %v until %v probe %v (%s); want %v until %v probe %v", got.Verb, got.Until, got.Probe, got.Why, c.verb, c.until, c.probe)
			}
			if got.Verb == lifecycle.Wait && (!got.Deferral || got.On != lifecycle.Deferred) {
				t.Fatalf("a breaker wait must be a deferral (no attempt, due time kept): %+v", got)
			}
			checkEdge(t, &d, got.On)
			// A manual resend does not POST while the breaker is open either.
			r := lifecycle.DecideResend(lifecycle.Input{Msg: msgFor(d), Delivery: &d, Endpoint: &ep, Event: &ev, Now: now})
			if (c.state == lifecycle.BreakerOpen) != (r.Verb == lifecycle.Wait) {
				t.Fatalf("resend with the breaker %s: %v", c.state, r.Verb)
			}
		})
	}
}

// Every breaker transition made by a write is produced by a case above; the
// others are the passing of time.
func TestEveryBreakerTransitionIsCovered(t *testing.T) {
	t.Run("after attempt", TestBreakerAfterAttempt)
	byTime := map[lifecycle.Event]bool{lifecycle.Event(lifecycle.BreakerPauseOver): true, lifecycle.Event(lifecycle.BreakerProbeLost): true,
		lifecycle.Event(lifecycle.BreakerProbeTook): true} // TakeProbe's condition: the store's emulator test
	for _, tr := range lifecycle.BreakerTransitions {
		if !breakerCovered[lifecycle.BreakerEvent(tr.On)] && !byTime[tr.On] {
			t.Errorf("no test makes %s --%s--> %s", tr.From, tr.On, tr.To)
		}
	}
}

// docs/lifecycle.md shows the breaker's table and diagram as they are.
func TestBreakerDiagramMatchesTheTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lifecycle.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## The endpoint's circuit breaker")
	_, rest, ok2 := strings.Cut(rest, "```mermaid\n")
	block, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/lifecycle.md has no breaker section with a mermaid block")
	}
	if block != lifecycle.Mermaid(lifecycle.BreakerTransitions) {
		t.Errorf("the breaker diagram differs; replace it with:\n%s", lifecycle.Mermaid(lifecycle.BreakerTransitions))
	}
	if !strings.Contains(string(doc), lifecycle.MarkdownTable(lifecycle.BreakerTransitions)) {
		t.Errorf("the breaker table differs; it should contain:\n%s", lifecycle.MarkdownTable(lifecycle.BreakerTransitions))
	}
}
