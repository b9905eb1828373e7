package lifecycle_test

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/store"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func ms(d time.Duration) int64 { return domain.Millis(now.Add(d)) }

// pending is a delivery due now, with its endpoint and event, all of account acct.
func pending() (domain.Delivery, domain.Endpoint, domain.Event) {
	d := domain.Delivery{ID: "dlv_1", EventID: "evt_1", EndpointID: "ep_1", AccountID: "acct_a", Status: domain.StatusPending,
		Gen: 3, Series: 1, NextAttemptAt: ms(0), CreatedAt: ms(-time.Minute), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_a", URL: "https://hooks.example.com/x"}
	ev := domain.Event{ID: "evt_1", AccountID: "acct_a", ExpiresAt: d.ExpiresAt}
	return d, ep, ev
}

func msgFor(d domain.Delivery) lifecycle.Message {
	return lifecycle.Message{DeliveryID: d.ID, AccountID: d.AccountID, EndpointID: d.EndpointID, EventID: d.EventID, Gen: d.Gen}
}

// covered collects the events the decisions below were seen to make.
var covered = map[lifecycle.Event]bool{}

// checkEdge asserts that a decision's event leaves the delivery's state by
// an edge of the table, and records it as covered.
func checkEdge(t *testing.T, d *domain.Delivery, on lifecycle.Event) {
	t.Helper()
	if on == "" {
		return
	}
	from := lifecycle.StateOf(d, now)
	for _, tr := range lifecycle.Transitions {
		if tr.From == from && tr.On == on {
			covered[on] = true
			return
		}
	}
	t.Errorf("decided %q from state %s: no such transition in the table", on, from)
}

func TestDecide(t *testing.T) {
	type change func(m *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event)
	keep := func(d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
		return d, ep, ev
	}
	cases := []struct {
		name   string
		change change
		verb   lifecycle.Verb
		on     lifecycle.Event
		reason domain.FailReason
		until  time.Time
	}{
		{"due: attempt", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			return keep(d, ep, ev)
		}, lifecycle.Attempt, lifecycle.Claimed, "", time.Time{}},
		{"lease ran out: take over", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.Claim, d.LeaseUntil, d.Attempts = "clm_old", ms(-time.Second), 2
			return d, ep, ev
		}, lifecycle.Attempt, lifecycle.TakenOver, "", time.Time{}},
		{"gone", func(_ *lifecycle.Message, _ *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			return nil, ep, ev
		}, lifecycle.Drop, "", "", time.Time{}},
		{"older generation's message", func(m *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			m.Gen = d.Gen - 1
			return d, ep, ev
		}, lifecycle.Drop, "", "", time.Time{}},
		{"delivered: duplicate", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.Status = domain.StatusDelivered
			return d, ep, ev
		}, lifecycle.Drop, "", "", time.Time{}},
		{"dead-lettered: duplicate", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.Status = domain.StatusFailed
			return d, ep, ev
		}, lifecycle.Drop, "", "", time.Time{}},
		{"failed, DLQ message unsent", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.Status, d.DLQPending = domain.StatusFailed, true
			return d, ep, ev
		}, lifecycle.DeadLetter, lifecycle.DLQSent, "", time.Time{}},
		{"live lease", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.Claim, d.LeaseUntil = "clm", ms(20*time.Second)
			return d, ep, ev
		}, lifecycle.Wait, "", "", now.Add(20 * time.Second)},
		{"not due", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.NextAttemptAt = ms(81 * time.Second)
			return d, ep, ev
		}, lifecycle.Wait, "", "", now.Add(81 * time.Second)},
		{"last attempt lost to a crash", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.Attempts, d.Claim, d.LeaseUntil = 8, "clm", ms(-time.Second)
			return d, ep, ev
		}, lifecycle.Fail, lifecycle.Unattemptable, domain.ReasonExhausted, time.Time{}},
		{"endpoint deleted", func(_ *lifecycle.Message, d *domain.Delivery, _ *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			return d, nil, ev
		}, lifecycle.Fail, lifecycle.Unattemptable, domain.ReasonEndpointDeleted, time.Time{}},
		{"endpoint disabled", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			ep.Disabled = true
			return d, ep, ev
		}, lifecycle.Fail, lifecycle.Unattemptable, domain.ReasonEndpointDisabled, time.Time{}},
		{"event gone", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, _ *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			return d, ep, nil
		}, lifecycle.Fail, lifecycle.Unattemptable, domain.ReasonEventExpired, time.Time{}},
		// A pending delivery near its TTL is dead-lettered, not left for DynamoDB to delete.
		{"TTL within the margin", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.ExpiresAt = now.Add(30 * time.Minute).Unix()
			return d, ep, ev
		}, lifecycle.Fail, lifecycle.Unattemptable, domain.ReasonEventExpired, time.Time{}},
		{"next attempt would fall past the TTL margin", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			d.ExpiresAt, d.NextAttemptAt = now.Add(2*time.Hour).Unix(), ms(90*time.Minute)
			return d, ep, ev
		}, lifecycle.Fail, lifecycle.Unattemptable, domain.ReasonEventExpired, time.Time{}},
		{"endpoint paused by Retry-After", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			ep.PausedUntil = ms(30 * time.Second)
			return d, ep, ev
		}, lifecycle.Wait, lifecycle.Deferred, "", now.Add(30 * time.Second)},
		// A message naming one account's event and another's delivery.
		{"message names another account", func(m *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			m.AccountID = "acct_b"
			return d, ep, ev
		}, lifecycle.Quarantine, "", "", time.Time{}},
		{"message names another event", func(m *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			m.EventID, ev.ID, ev.AccountID = "evt_other", "evt_other", "acct_b"
			return d, ep, ev
		}, lifecycle.Quarantine, "", "", time.Time{}},
		{"message names another endpoint", func(m *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			m.EndpointID, ep.ID, ep.AccountID = "ep_b", "ep_b", "acct_b"
			return d, ep, ev
		}, lifecycle.Quarantine, "", "", time.Time{}},
		{"event item of another account", func(_ *lifecycle.Message, d *domain.Delivery, ep *domain.Endpoint, ev *domain.Event) (*domain.Delivery, *domain.Endpoint, *domain.Event) {
			ev.AccountID = "acct_b"
			return d, ep, ev
		}, lifecycle.Quarantine, "", "", time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d0, ep0, ev0 := pending()
			m := msgFor(d0)
			d, ep, ev := c.change(&m, &d0, &ep0, &ev0)
			got := lifecycle.Decide(lifecycle.Input{Msg: m, Delivery: d, Endpoint: ep, Event: ev, Now: now, MaxAttempts: 8})
			if got.Verb != c.verb || got.On != c.on || got.Reason != c.reason || !got.Until.Equal(c.until) {
				t.Fatalf("Decide = %v %q reason %q until %v (%s); want %v %q reason %q until %v",
					got.Verb, got.On, got.Reason, got.Until, got.Why, c.verb, c.on, c.reason, c.until)
			}
			checkEdge(t, d, got.On)
		})
	}
}

func TestDecideResend(t *testing.T) {
	d, ep, ev := pending()
	d.Status = domain.StatusDelivered // a resend goes whatever the status
	in := lifecycle.Input{Msg: msgFor(d), Delivery: &d, Endpoint: &ep, Event: &ev, Now: now}
	if got := lifecycle.DecideResend(in); got.Verb != lifecycle.Attempt {
		t.Errorf("resend of a delivered delivery: %v", got.Verb)
	}
	in.Msg.AccountID = "acct_b"
	if got := lifecycle.DecideResend(in); got.Verb != lifecycle.Quarantine {
		t.Errorf("resend naming another account: %v", got.Verb)
	}
	in.Msg.AccountID, ep.Disabled = d.AccountID, true
	if got := lifecycle.DecideResend(in); got.Verb != lifecycle.Drop {
		t.Errorf("resend to a disabled endpoint: %v", got.Verb)
	}
	ep.Disabled, ep.PausedUntil = false, ms(time.Minute)
	if got := lifecycle.DecideResend(in); got.Verb != lifecycle.Wait || !got.Until.Equal(now.Add(time.Minute)) {
		t.Errorf("resend to a paused endpoint: %v until %v", got.Verb, got.Until)
	}
}

func TestSettle(t *testing.T) {
	sched := retry.Schedule{Waits: []time.Duration{time.Second, 16 * time.Second, 81 * time.Second, 256 * time.Second,
		625 * time.Second, 1296 * time.Second, 2401 * time.Second}} // the default, without jitter
	answer := func(code int, class string, after time.Duration) lifecycle.Answer {
		return lifecycle.Answer{Outcome: httpOutcome(code, class, after)}
	}
	cases := []struct {
		name      string
		attempts  int // as claimed: this attempt's number
		throttles int
		age       time.Duration
		answer    lifecycle.Answer
		want      lifecycle.Outcome
		log       domain.AttemptOutcome
	}{
		{"2xx", 1, 0, 0, answer(204, "", 0), lifecycle.Outcome{Status: domain.StatusDelivered, Healthy: true}, domain.OutcomeDelivered},
		{"2xx on the 8th attempt", 8, 0, 0, answer(200, "", 0), lifecycle.Outcome{Status: domain.StatusDelivered, Healthy: true}, domain.OutcomeDelivered},
		{"4xx", 1, 0, 0, answer(400, "", 0), lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected}, domain.OutcomeRejected},
		{"410 Gone: the endpoint is disabled", 1, 0, 0, answer(410, "", 0),
			lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected, DisableEndpoint: lifecycle.GoneReason}, domain.OutcomeRejected},
		{"forbidden address", 1, 0, 0, answer(0, webhook.ErrBlockedAddress, 0), lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonBlockedAddress}, domain.OutcomeRejected},
		{"5xx after attempt 3", 3, 0, 0, answer(503, "", 0), lifecycle.Outcome{Status: domain.StatusPending, NextAttemptAt: ms(81 * time.Second)}, domain.OutcomeRetry},
		{"timeout after attempt 1", 1, 0, 0, answer(0, webhook.ErrTimeout, 0), lifecycle.Outcome{Status: domain.StatusPending, NextAttemptAt: ms(time.Second)}, domain.OutcomeRetry},
		{"503 Retry-After longer than the schedule: at most twice it", 2, 0, 0, answer(503, "", time.Hour), lifecycle.Outcome{Status: domain.StatusPending, NextAttemptAt: ms(32 * time.Second)}, domain.OutcomeRetry},
		{"5xx on the last attempt", 8, 0, 0, answer(500, "", 0), lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonExhausted}, domain.OutcomeRetry},
		{"429 Retry-After: free", 2, 0, 0, answer(429, "", 10*time.Second),
			lifecycle.Outcome{Status: domain.StatusPending, NextAttemptAt: ms(10 * time.Second), GiveBack: true, PauseUntil: ms(10 * time.Second)}, domain.OutcomeThrottled},
		{"429 Retry-After: pause capped", 2, 0, 0, answer(429, "", 5*time.Hour),
			lifecycle.Outcome{Status: domain.StatusPending, NextAttemptAt: ms(time.Hour), GiveBack: true, PauseUntil: ms(time.Hour)}, domain.OutcomeThrottled},
		// The free throttles run out; then a 429 counts like a 5xx.
		{"429 after MaxFreeThrottles: an attempt", 2, lifecycle.MaxFreeThrottles, 0, answer(429, "", time.Second),
			lifecycle.Outcome{Status: domain.StatusPending, NextAttemptAt: ms(16 * time.Second)}, domain.OutcomeRetry},
		{"429 after MaxFreeThrottles on the last attempt", 8, lifecycle.MaxFreeThrottles, 0, answer(429, "", time.Second),
			lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonExhausted}, domain.OutcomeRetry},
		{"429 of a day-old delivery: an attempt", 2, 0, 25 * time.Hour, answer(429, "", time.Second),
			lifecycle.Outcome{Status: domain.StatusPending, NextAttemptAt: ms(16 * time.Second)}, domain.OutcomeRetry},
		{"429 without Retry-After: rejected", 1, 0, 0, answer(429, "", 0), lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected}, domain.OutcomeRejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _, _ := pending()
			d.Attempts, d.Throttles, d.CreatedAt = c.attempts, c.throttles, ms(-c.age)
			d.Claim, d.LeaseUntil = "clm", ms(time.Minute)
			got := lifecycle.Settle(d, c.answer, now, sched, nil, time.Time{})
			if got != c.want {
				t.Fatalf("Settle = %+v, want %+v", got, c.want)
			}
			if l := lifecycle.LogOutcome(c.answer.Verdict, got); l != c.log {
				t.Errorf("logged as %q, want %q", l, c.log)
			}
			checkEdge(t, &d, got.Event())
		})
	}
	if lifecycle.MaxFreeThrottles > sched.MaxAttempts() {
		t.Errorf("MaxFreeThrottles %d is above the attempt ceiling %d", lifecycle.MaxFreeThrottles, sched.MaxAttempts())
	}
}

func TestDecideSweep(t *testing.T) {
	cases := []struct {
		name   string
		change func(*domain.Delivery)
		want   lifecycle.SweepAction
	}{
		{"last attempt lost to a crash", func(d *domain.Delivery) { d.Attempts, d.Claim, d.LeaseUntil = 8, "c", ms(-time.Second) },
			lifecycle.SweepAction{Verb: lifecycle.SweepFail, On: lifecycle.Unattemptable, Reason: domain.ReasonExhausted}},
		{"near its TTL", func(d *domain.Delivery) { d.ExpiresAt = now.Add(10 * time.Minute).Unix() },
			lifecycle.SweepAction{Verb: lifecycle.SweepFail, On: lifecycle.Unattemptable, Reason: domain.ReasonEventExpired}},
		{"failed, DLQ unsent", func(d *domain.Delivery) { d.Status, d.DLQPending = domain.StatusFailed, true },
			lifecycle.SweepAction{Verb: lifecycle.SweepDLQ, On: lifecycle.DLQSent}},
		{"live lease", func(d *domain.Delivery) { d.Attempts, d.Claim, d.LeaseUntil = 8, "c", ms(time.Second) }, lifecycle.SweepAction{}},
		{"moving again", func(d *domain.Delivery) { d.DueAt = ms(time.Minute) }, lifecycle.SweepAction{}},
		{"delivered meanwhile", func(d *domain.Delivery) { d.Status = domain.StatusDelivered }, lifecycle.SweepAction{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, _, _ := pending()
			c.change(&d)
			if got := lifecycle.DecideSweep(d, now, 8); got != c.want {
				t.Fatalf("DecideSweep = %+v, want %+v", got, c.want)
			}
			checkEdge(t, &d, c.want.On)
		})
	}
}

func TestCheckRecord(t *testing.T) {
	d, _, _ := pending()
	d.Claim = "clm_1"
	if got := lifecycle.CheckRecord(d, true, "clm_1", "att_1"); got != lifecycle.RecordRetry {
		t.Errorf("claim still ours, write not applied: %v", got)
	}
	applied := d
	applied.Claim, applied.LastAttemptID = "", "att_1"
	if got := lifecycle.CheckRecord(applied, true, "clm_1", "att_1"); got != lifecycle.RecordDone {
		t.Errorf("write applied despite the error: %v", got)
	}
	taken := d
	taken.Claim = "clm_2"
	if got := lifecycle.CheckRecord(taken, true, "clm_1", "att_1"); got != lifecycle.RecordLost {
		t.Errorf("claim taken over: %v", got)
	}
	if got := lifecycle.CheckRecord(domain.Delivery{}, false, "clm_1", "att_1"); got != lifecycle.RecordLost {
		t.Errorf("delivery gone: %v", got)
	}
}

// Every event a worker or the sweeper decides is produced by some case
// above; the rest are made by ingest, the API, the sweeper's conditional
// re-queue and DynamoDB's TTL, and the worker's rate-slot rule (a claim
// given back: shared/delivery), and proven by the store's emulator tests.
func TestEveryDecidedTransitionIsCovered(t *testing.T) {
	t.Run("decide", TestDecide)
	t.Run("settle", TestSettle)
	t.Run("sweep", TestDecideSweep)
	t.Run("wait", TestHowToWait)
	notDecidedHere := map[lifecycle.Event]bool{lifecycle.Ingested: true, lifecycle.Requeued: true, lifecycle.Unparked: true,
		lifecycle.Restarted: true, lifecycle.Expired: true, lifecycle.Yielded: true}
	for _, tr := range lifecycle.Transitions {
		if !covered[tr.On] && !notDecidedHere[tr.On] {
			t.Errorf("no decision test makes %s --%s--> %s", tr.From, tr.On, tr.To)
		}
	}
}

// The table's writes are the store's methods: a renamed method renames its edge.
func TestEveryWriteIsAStoreMethod(t *testing.T) {
	st := reflect.TypeOf(&store.Store{})
	for _, tr := range append(append([]lifecycle.Transition{}, lifecycle.Transitions...), lifecycle.BreakerTransitions...) {
		if tr.Write == "" {
			continue
		}
		if _, ok := st.MethodByName(tr.Write); !ok {
			t.Errorf("%s --%s--> %s: store has no method %s", tr.From, tr.On, tr.To, tr.Write)
		}
	}
}

// docs/lifecycle.md shows the table as it is.
func TestDiagramMatchesTheTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/lifecycle.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), lifecycle.MarkdownTable(lifecycle.Transitions)) {
		t.Errorf("docs/lifecycle.md's table differs from lifecycle.Transitions; it should contain:\n%s", lifecycle.MarkdownTable(lifecycle.Transitions))
	}
	if !strings.Contains(string(doc), "```mermaid\n"+lifecycle.Mermaid(lifecycle.Transitions)+"```") {
		t.Fatalf("docs/lifecycle.md's diagram differs from lifecycle.Transitions; replace its mermaid block with:\n%s", lifecycle.Mermaid(lifecycle.Transitions))
	}
}
