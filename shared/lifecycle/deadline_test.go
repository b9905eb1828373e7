package lifecycle_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/retry"
)

// The deadline counts from the series' start: the schedule's waits at their
// longest plus one timeout per attempt (1 s x 7 with 15 % jitter, 10 s:
// 8.05 s + 80 s).
func TestDeadlineIsWhenTheScheduleWouldHaveEnded(t *testing.T) {
	s := retry.Schedule{Waits: []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second}, Jitter: 0.15}
	d, _, _ := pending()
	if got, want := lifecycle.Deadline(d, s, 10*time.Second), time.UnixMilli(d.CreatedAt).Add(88050*time.Millisecond); !got.Equal(want) {
		t.Fatalf("first series: deadline %s, want %s", got, want)
	}
	d.Series, d.SeriesAt = 2, ms(time.Hour)
	if got, want := lifecycle.Deadline(d, s, 10*time.Second), now.Add(time.Hour+88050*time.Millisecond); !got.Equal(want) {
		t.Fatalf("a restarted series: deadline %s, want %s", got, want)
	}
}

// While the breaker was open, deliveries waited without
// using attempts, so a dead endpoint's deliveries never failed (200 still
// pending after 24 h). A breaker wait now ends at the deadline, and there
// the delivery fails as endpoint_unavailable.
func TestABreakerWaitEndsAtTheDeadline(t *testing.T) {
	d, ep, ev := pending()
	ep.BreakerOpenUntil, ep.BreakerPauseMs = ms(5*time.Minute), (5 * time.Minute).Milliseconds()
	in := lifecycle.Input{Msg: msgFor(d), Delivery: &d, Endpoint: &ep, Event: &ev, Now: now, MaxAttempts: 8}

	in.Deadline = now.Add(time.Hour)
	end := time.UnixMilli(ep.BreakerOpenUntil)
	if a := lifecycle.Decide(in); a.Verb != lifecycle.Wait || a.Until.Before(end) || !a.Until.Before(end.Add(75*time.Second)) {
		t.Fatalf("deadline after the pause: %+v, want a wait for the pause (and at most a quarter of it more)", a)
	}
	in.Deadline = now.Add(time.Minute)
	if a := lifecycle.Decide(in); a.Verb != lifecycle.Wait || !a.Until.Equal(in.Deadline) {
		t.Fatalf("deadline within the pause: %+v, want a wait until the deadline", a)
	}
	in.Deadline = now
	a := lifecycle.Decide(in)
	if a.Verb != lifecycle.Fail || a.Reason != domain.ReasonEndpointUnavailable {
		t.Fatalf("at the deadline: %+v, want fail endpoint_unavailable", a)
	}
	checkEdge(t, &d, a.On)
	// A probe in flight holds the others the same way.
	ep.BreakerOpenUntil, ep.BreakerProbeUntil = ms(-time.Second), ms(time.Minute)
	if a := lifecycle.Decide(in); a.Verb != lifecycle.Fail || a.Reason != domain.ReasonEndpointUnavailable {
		t.Fatalf("probing, at the deadline: %+v, want fail endpoint_unavailable", a)
	}
	// No deadline (the simulation's zero value): the breaker alone decides.
	in.Deadline = time.Time{}
	if a := lifecycle.Decide(in); a.Verb != lifecycle.Wait {
		t.Fatalf("no deadline: %+v, want a wait", a)
	}
}

func TestEndpointWait(t *testing.T) {
	w := lifecycle.Action{Verb: lifecycle.Wait, Until: now.Add(30 * time.Second), Deferral: true}
	for _, c := range []struct {
		name     string
		deadline time.Time
		verb     lifecycle.Verb
		until    time.Time
	}{
		{"no deadline", time.Time{}, lifecycle.Wait, w.Until},
		{"deadline after the wait", now.Add(time.Minute), lifecycle.Wait, w.Until},
		{"deadline within the wait", now.Add(10 * time.Second), lifecycle.Wait, now.Add(10 * time.Second)},
		{"deadline now", now, lifecycle.Fail, time.Time{}},
		{"deadline passed", now.Add(-time.Hour), lifecycle.Fail, time.Time{}},
	} {
		got := lifecycle.EndpointWait(w, now, c.deadline)
		if got.Verb != c.verb || !got.Until.Equal(c.until) {
			t.Errorf("%s: %+v, want %s until %s", c.name, got, c.verb, c.until)
		}
		if got.Verb == lifecycle.Fail && got.Reason != domain.ReasonEndpointUnavailable {
			t.Errorf("%s: reason %q", c.name, got.Reason)
		}
	}
}

// The deliveries a breaker holds come back spread over a quarter of its
// pause, each at its own offset, not all at its end: there every one of them
// would load its endpoint's item in the same second, on the account's
// partition (285 % of its read capacity in the simulated day). Without the
// spread all 1,000 come back in the same millisecond.
func TestHeldDeliveriesComeBackSpreadOverTheirPause(t *testing.T) {
	_, ep, ev := pending()
	pause := 5 * time.Minute
	ep.BreakerOpenUntil, ep.BreakerPauseMs = ms(pause), pause.Milliseconds()
	window := time.Duration(lifecycle.HeldSpread * float64(pause))
	for _, state := range []string{"open", "probing"} {
		end := time.UnixMilli(ep.BreakerOpenUntil)
		if state == "probing" {
			ep.BreakerOpenUntil, ep.BreakerProbeUntil = ms(-time.Second), ms(25*time.Second)
			end = time.UnixMilli(ep.BreakerProbeUntil)
		}
		perSecond := map[int64]int{}
		for i := range 1000 {
			d, _, _ := pending()
			d.ID = fmt.Sprintf("dlv_%d", i)
			in := lifecycle.Input{Msg: msgFor(d), Delivery: &d, Endpoint: &ep, Event: &ev, Now: now, MaxAttempts: 8}
			a := lifecycle.Decide(in)
			if a.Verb != lifecycle.Wait || a.Until.Before(end) || !a.Until.Before(end.Add(window)) {
				t.Fatalf("%s, %s: %+v, want a wait within %s of %s", state, d.ID, a, window, end)
			}
			if again := lifecycle.Decide(in); !again.Until.Equal(a.Until) {
				t.Fatalf("%s, %s: %s then %s: one delivery's offset changed", state, d.ID, a.Until, again.Until)
			}
			perSecond[a.Until.Unix()]++
		}
		// 1,000 over 75 s: about 13 a second; a uniform spread stays well under 40.
		if busiest := slices.Max(slices.Collect(maps.Values(perSecond))); busiest > 40 {
			t.Errorf("%s: %d of 1,000 held deliveries come back in the same second", state, busiest)
		}
	}
}

// A retry's wait ends by the deadline, whatever stretched the series: one
// that would end past it is cut to it, and an attempt failing at or past
// the deadline is the last (a probe winner made late by breaker holds ran
// the rest of its schedule from the probe, up to an hour past it).
func TestARetryWaitEndsAtTheDeadline(t *testing.T) {
	sched := retry.Default()
	now := time.Unix(1_800_000_000, 0)
	failed := lifecycle.Answer{Outcome: destination.Outcome{Verdict: destination.Retry, Status: 503}}
	d := domain.Delivery{Attempts: 3, CreatedAt: domain.Millis(now.Add(-time.Hour))}
	deadline := now.Add(time.Minute) // the 256 s wait would end past it
	if o := lifecycle.Settle(d, failed, now, sched, nil, deadline); o.Status != domain.StatusPending || o.NextAttemptAt != domain.Millis(deadline) {
		t.Fatalf("near the deadline: %+v, want the retry at the deadline", o)
	}
	if o := lifecycle.Settle(d, failed, deadline, sched, nil, deadline); o.Status != domain.StatusFailed || o.FailReason != domain.ReasonEndpointUnavailable {
		t.Fatalf("at the deadline: %+v, want failed as endpoint_unavailable", o)
	}
	if o := lifecycle.Settle(d, failed, now, sched, nil, now.Add(time.Hour)); o.Status != domain.StatusPending || o.NextAttemptAt >= domain.Millis(now.Add(time.Hour)) {
		t.Fatalf("far from the deadline: %+v, want the schedule's wait", o)
	}
}

// The receiver's Retry-After ends by the deadline too (the soak's
// throttling endpoint held deliveries 24 s past their deadline + one
// sweep): its pause holds a delivery at most until the deadline, where it
// fails as endpoint_unavailable; and a 429 whose pause would end past the
// deadline is not free: it counts as an attempt, its wait cut to the
// deadline.
func TestARetryAfterPauseEndsAtTheDeadline(t *testing.T) {
	d, ep, ev := pending()
	ep.PausedUntil = ms(5 * time.Minute)
	in := lifecycle.Input{Msg: msgFor(d), Delivery: &d, Endpoint: &ep, Event: &ev, Now: now, MaxAttempts: 8, Deadline: now.Add(time.Hour)}
	if a := lifecycle.Decide(in); a.Verb != lifecycle.Wait || !a.Until.Equal(time.UnixMilli(ep.PausedUntil)) {
		t.Fatalf("deadline after the pause: %+v, want a wait for the pause", a)
	}
	in.Deadline = now.Add(time.Minute)
	if a := lifecycle.Decide(in); a.Verb != lifecycle.Wait || !a.Until.Equal(in.Deadline) {
		t.Fatalf("deadline within the pause: %+v, want a wait until the deadline", a)
	}
	in.Deadline = now
	if a := lifecycle.Decide(in); a.Verb != lifecycle.Fail || a.Reason != domain.ReasonEndpointUnavailable {
		t.Fatalf("paused at the deadline: %+v, want fail endpoint_unavailable", a)
	}

	sched := retry.Default()
	throttled := lifecycle.Answer{Outcome: destination.Outcome{Verdict: destination.Throttled, Status: 429, RetryAfter: 2 * time.Minute}}
	fresh := domain.Delivery{Attempts: 3, CreatedAt: domain.Millis(now.Add(-time.Minute))}
	if o := lifecycle.Settle(fresh, throttled, now, sched, nil, now.Add(time.Hour)); !o.GiveBack || o.PauseUntil != domain.Millis(now.Add(2*time.Minute)) {
		t.Fatalf("a pause ending before the deadline: %+v, want a free throttle", o)
	}
	o := lifecycle.Settle(fresh, throttled, now, sched, nil, now.Add(20*time.Second)) // the retry's wait (81 s, up to twice that for the Retry-After) ends past it
	if o.GiveBack || o.Status != domain.StatusPending || o.NextAttemptAt != domain.Millis(now.Add(20*time.Second)) {
		t.Fatalf("a pause ending past the deadline: %+v, want an attempt counted, retried at the deadline", o)
	}
	if o := lifecycle.Settle(fresh, throttled, now, sched, nil, now); o.Status != domain.StatusFailed || o.FailReason != domain.ReasonEndpointUnavailable {
		t.Fatalf("a 429 at the deadline: %+v, want failed as endpoint_unavailable", o)
	}
}
