package lifecycle_test

import (
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/retry"
)

// The step's rules, one table row each, with plain values: no emulators,
// no clock, no goroutines. A rule changes here and in lifecycle/step.go.

var policy = lifecycle.Policy{Schedule: retry.Default(), MaxInFlight: 5, SweepGrace: 5 * time.Minute, ParkAfter: 15 * time.Minute,
	LeaseFor: 30 * time.Second, AttemptTimeout: 10 * time.Second, MaxEarly: pace.MaxEarly}

// known is a deliver message for a pending delivery due now, loaded.
func known() lifecycle.Known {
	d, ep, ev := pending()
	d.DueAt = d.NextAttemptAt
	m := msgFor(d)
	m.Kind, m.Received = lifecycle.KindDeliver, 1
	return lifecycle.Known{Msg: m, Now: now, Seed: 7, Loaded: true, Delivery: &d, Endpoint: &ep, Event: &ev}
}

// booked is known with a near account slot booked and waited for: next, the claim.
func booked() lifecycle.Known {
	k := known()
	k.Rate = lifecycle.Slot{At: now, Interval: 200 * time.Millisecond}
	return k
}

// claimed is booked with the claim taken: next, the attempt.
func claimed() lifecycle.Known {
	k := booked()
	k.Claim, k.Claimed = lifecycle.ClaimTaken, *k.Delivery
	k.Claimed.Attempts++
	k.LeaseUntil = now.Add(30 * time.Second)
	return k
}

// answered is claimed with the attempt answered status (0: a timeout).
func answered(status int) lifecycle.Known {
	k := claimed()
	k.Answer = &lifecycle.Answer{Outcome: httpOutcome(status, "", 0), Started: now, At: now.Add(100 * time.Millisecond)}
	return k
}

func TestStep(t *testing.T) {
	slot := func(d time.Duration) lifecycle.Slot {
		return lifecycle.Slot{At: now.Add(d), Interval: 200 * time.Millisecond}
	}
	cases := []struct {
		name  string
		known func() lifecycle.Known
		p     func(*lifecycle.Policy)
		want  lifecycle.Effect // the fields compared: Do, and each one set here
	}{
		{"a message is loaded first", func() lifecycle.Known { k := known(); k.Loaded = false; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoLoad}},
		{"a message far ahead of its slot's second goes back for it, before any read", func() lifecycle.Known {
			k := known()
			k.Loaded, k.Msg.Slot = false, slot(10*time.Second+300*time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(10 * time.Second), Delay: 10 * time.Second}},
		{"a delivery gone is dropped", func() lifecycle.Known { k := known(); k.Delivery = nil; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoFinish}},
		{"a message of an older generation is dropped", func() lifecycle.Known { k := known(); k.Msg.Gen--; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoFinish}},
		{"a message that lies about its delivery is quarantined", func() lifecycle.Known { k := known(); k.Msg.AccountID = "acct_b"; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoQuarantine}},
		{"a failed delivery whose DLQ message was never sent is dead-lettered", func() lifecycle.Known {
			k := known()
			k.Delivery.Status, k.Delivery.DLQPending = domain.StatusFailed, true
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoDeadLetter, Held: false}},
		{"an attempt another worker holds is looked at again when its lease ends", func() lifecycle.Known {
			k := known()
			k.Delivery.LeaseUntil = ms(20 * time.Second)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(20 * time.Second), Delay: 20 * time.Second}},
		{"a wait past the queue's 15-minute delay is parked", func() lifecycle.Known {
			k := known()
			k.Delivery.NextAttemptAt = ms(time.Hour)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(time.Hour), Park: true}},
		{"a resend's long wait hops in delayed copies", func() lifecycle.Known {
			k := known()
			k.Msg.Kind = lifecycle.KindResend
			k.Endpoint.PausedUntil = ms(time.Hour)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(time.Hour), Delay: 15 * time.Minute, Park: false}},
		{"the last attempt claimed by a worker that died fails as exhausted", func() lifecycle.Known {
			k := known()
			k.Delivery.Attempts = 8
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFail, Reason: domain.ReasonExhausted}},
		{"a disabled endpoint fails the delivery", func() lifecycle.Known { k := known(); k.Endpoint.Disabled = true; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoFail, Reason: domain.ReasonEndpointDisabled}},
		{"an open breaker defers, moving the due time past half the sweep grace", func() lifecycle.Known {
			k := known()
			k.Endpoint.BreakerOpenUntil = ms(4 * time.Minute)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(4 * time.Minute), MoveDue: now.Add(4 * time.Minute), Metric: obs.MetricEndpointDeferrals}},
		{"an open breaker past the delivery's deadline fails it as endpoint_unavailable", func() lifecycle.Known {
			k := known()
			k.Delivery.CreatedAt = ms(-200 * time.Hour)
			k.Endpoint.BreakerOpenUntil = ms(4 * time.Minute)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFail, Reason: domain.ReasonEndpointUnavailable}},
		{"a half-open breaker: take the probe", func() lifecycle.Known {
			k := known()
			k.Endpoint.BreakerOpenUntil, k.Endpoint.BreakerFails = ms(-time.Second), 5
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoProbe, Until: now.Add(30 * time.Second)}},
		{"the probe lost to another worker: look again in a second", func() lifecycle.Known {
			k := known()
			k.Endpoint.BreakerOpenUntil, k.ProbeLost = ms(-time.Second), true
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(time.Second)}},
		{"the breaker off: no probe", func() lifecycle.Known {
			k := known()
			k.Endpoint.BreakerOpenUntil = ms(-time.Second)
			return k
		}, func(p *lifecycle.Policy) { p.BreakerOff = true }, lifecycle.Effect{Do: lifecycle.DoReserve, Line: lifecycle.LineAccount}},
		{"every in-flight slot held elsewhere: back off, giving the carried slot back", func() lifecycle.Known {
			k := known()
			k.Endpoint.Leases = fullLeases(5)
			k.Msg.Slot, k.Msg.SlotFor = slot(0), 0
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Unslot: true, Metric: obs.MetricEndpointDeferrals,
			Refunds: []lifecycle.Refund{{Line: lifecycle.LineAccount, Slot: slot(0)}}}},
		{"every slot held, one by a claim here: go on and wait for its handoff", func() lifecycle.Known {
			k := known()
			k.Endpoint.Leases, k.HeldHere = fullLeases(5), true
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoReserve, Line: lifecycle.LineAccount}},
		{"the cap off: no slot needed", func() lifecycle.Known {
			k := known()
			k.Endpoint.Leases = fullLeases(5)
			return k
		}, func(p *lifecycle.Policy) { p.MaxInFlight = 0 }, lifecycle.Effect{Do: lifecycle.DoReserve}},
		{"no slot carried: book one", known, nil, lifecycle.Effect{Do: lifecycle.DoReserve, Line: lifecycle.LineAccount}},
		{"the slot carried, for this attempt: used, no booking", func() lifecycle.Known {
			k := known()
			k.Msg.Slot = slot(0)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoClaim}},
		{"the slot carried, booked for an earlier attempt: book another", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Delivery.Attempts = slot(0), 1
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoReserve}},
		{"the slot carried, its second over: book another", func() lifecycle.Known {
			k := known()
			k.Msg.Slot = slot(-time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoReserve}},
		{"the slot carried, less than SendBy of its second left: book another", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Now = slot(0), now.Add(time.Second-pace.SendBy)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoReserve}},
		{"the slot carried, late in its second but in time: used at once", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Now = slot(0), now.Add(time.Second-pace.SendBy-time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoClaim}},
		{"the slot carried, its second about to begin: wait for it, claim a little ahead", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Now = slot(time.Second+700*time.Millisecond), now.Add(time.Second-pace.Early)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(time.Second - lifecycle.ClaimAhead)}},
		{"a slot booked far: back carrying it, no claim, the due time moved to it", func() lifecycle.Known {
			k := known()
			k.Rate = slot(400 * time.Second)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(400 * time.Second), Delay: 400 * time.Second, SetSlot: ptr(slot(400 * time.Second)),
			NotDeferral: true, MoveDue: now.Add(400 * time.Second), Metric: obs.MetricRateLimitDeferrals}},
		{"a slot booked in this second: claimed at once, not at the slot", func() lifecycle.Known {
			k := known()
			k.Rate = slot(800 * time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoClaim}},
		{"a slot booked in the next second, within MaxEarly of it: wait for it, claim a little ahead", func() lifecycle.Known {
			k := known()
			k.Rate, k.Now = slot(1100*time.Millisecond), now.Add(time.Second-pace.MaxEarly)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(time.Second - lifecycle.ClaimAhead)}},
		{"a slot booked in the next second, further than MaxEarly: back for it, carrying it", func() lifecycle.Known {
			k := known()
			k.Rate, k.Now = slot(1100*time.Millisecond), now.Add(time.Second-pace.MaxEarly-time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Delay: time.Second, SetSlot: ptr(slot(1100 * time.Millisecond))}},
		// A pipeline late by a steady amount lands every message past its
		// slot: each goes on with a lead, landing a second earlier for the
		// next (pace.LeadStep), or the account's messages are booked again
		// and again at the end of its line, none of them ever sent.
		{"the carried slot missed, the new one far: back a second earlier than usual, with a lead", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Rate = slot(-time.Millisecond), slot(3100*time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Delay: 2 * time.Second, SetSlot: ptr(slot(3100 * time.Millisecond)), Lead: time.Second}},
		{"the carried slot missed again: the lead grows", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Msg.Lead, k.Rate = slot(-time.Millisecond), time.Second, slot(5100*time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Delay: 3 * time.Second, Lead: 2 * time.Second}},
		{"the carried slot missed, the new one within MaxEarly and the lead: waited for in the worker", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Rate = slot(-time.Millisecond), slot(1100*time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(time.Second - lifecycle.ClaimAhead)}},
		{"with a lead, early for its slot by less than the lead and MaxEarly: waits for it in the worker", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Msg.Lead = slot(1100*time.Millisecond), time.Second
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(time.Second - lifecycle.ClaimAhead)}},
		{"with a lead, early by more: back again, keeping its lead", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Msg.Lead = slot(2100*time.Millisecond), time.Second
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Delay: time.Second, Lead: time.Second}},
		{"an endpoint with its own rate books on its own line too", func() lifecycle.Known {
			k := booked()
			k.Endpoint.Settings.RatePerSecond = 2
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoReserve, Line: lifecycle.LineEndpoint, Rate: 2}},
		{"its own slot far: back, both slots given back", func() lifecycle.Known {
			k := booked()
			k.Endpoint.Settings.RatePerSecond = 2
			k.EndpointRate = slot(30 * time.Second)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Unslot: true, NotDeferral: true,
			Refunds: []lifecycle.Refund{{Line: lifecycle.LineAccount, Slot: booked().Rate}, {Line: lifecycle.LineEndpoint, Slot: slot(30 * time.Second)}}}},
		{"a load that failed: read again shortly, in the worker", func() lifecycle.Known {
			k := known()
			k.Loaded, k.LoadTries, k.Err, k.ErrOn = false, 1, errors.New("throttled"), lifecycle.DoLoad
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(lifecycle.LoadAgain)}},
		{"read again after the wait", func() lifecycle.Known {
			k := known()
			k.Loaded, k.LoadTries, k.Slept = false, 1, now
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoLoad}},
		{"a load that failed again: the message goes back for the system error's back-off", func() lifecycle.Known {
			k := known()
			k.Loaded, k.LoadTries, k.Err, k.ErrOn = false, 2, errors.New("throttled"), lifecycle.DoLoad
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRetry, Delay: lifecycle.SystemErrorBackoff}},
		{"a fail write refused: written again shortly, in the worker", func() lifecycle.Known {
			k := known()
			k.Endpoint.Disabled, k.FailTries, k.Err, k.ErrOn = true, 1, errors.New("throttled"), lifecycle.DoFail
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(lifecycle.LoadAgain)}},
		{"written again after the wait", func() lifecycle.Known {
			k := known()
			k.Endpoint.Disabled, k.FailTries, k.Slept = true, 1, now
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFail, Reason: domain.ReasonEndpointDisabled}},
		{"a fail write refused again: the message goes back for the system error's back-off", func() lifecycle.Known {
			k := known()
			k.Endpoint.Disabled, k.FailTries, k.Err, k.ErrOn = true, 2, errors.New("throttled"), lifecycle.DoFail
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRetry, Delay: lifecycle.SystemErrorBackoff}},
		{"a limiter that fails closes the gate: the message goes back delayed, never out now", func() lifecycle.Known {
			k := known()
			k.Err, k.ErrOn = errors.New("throttled"), lifecycle.DoReserve
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRetry, Delay: lifecycle.SystemErrorBackoff}},
		{"a claim that failed on a system error gives back the slot it booked", func() lifecycle.Known {
			k := booked()
			k.Err, k.ErrOn = errors.New("unavailable"), lifecycle.DoClaim
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRetry, Refunds: []lifecycle.Refund{{Line: lifecycle.LineAccount, Slot: booked().Rate}}}},
		{"every slot taken while we waited: back off, the slot given back", func() lifecycle.Known {
			k := booked()
			k.Claim = lifecycle.ClaimFull
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Unslot: true, Refunds: []lifecycle.Refund{{Line: lifecycle.LineAccount, Slot: booked().Rate}}}},
		{"the endpoint changed under a claim taken: give it back first", func() lifecycle.Known {
			k := claimed()
			k.Claim, k.ClaimHeld = lifecycle.ClaimChanged, true
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoYield, Detach: true}},
		{"given back: look again in a second, the slot returned", func() lifecycle.Known {
			k := claimed()
			k.Claim, k.ClaimHeld, k.Yielded = lifecycle.ClaimChanged, true, true
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(time.Second), Unslot: true,
			Refunds: []lifecycle.Refund{{Line: lifecycle.LineAccount, Slot: booked().Rate}}}},
		{"a yield that keeps failing never counts an attempt: the message goes back all the same", func() lifecycle.Known {
			k := claimed()
			k.Claim, k.ClaimHeld, k.YieldTries = lifecycle.ClaimChanged, true, lifecycle.RecordTries
			k.Err, k.ErrOn = errors.New("throttled"), lifecycle.DoYield
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(time.Second), Unslot: true}},
		{"a resend already made is not made again; the slot booked here goes back", func() lifecycle.Known {
			k := booked()
			k.Msg.Kind, k.Claim = lifecycle.KindResend, lifecycle.ClaimDuplicate
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFinish, Refunds: []lifecycle.Refund{{Line: lifecycle.LineAccount, Slot: booked().Rate}}}},
		{"a claim lost to a conflict keeps the slot it carries (its twin uses it)", func() lifecycle.Known {
			k := known()
			k.Msg.Slot, k.Claim = lifecycle.Slot{At: now}, lifecycle.ClaimConflict
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(time.Second)}},
		{"claimed ahead of the slot's second: wait for it", func() lifecycle.Known {
			k := claimed()
			k.Rate, k.Now = slot(time.Second+40*time.Millisecond), now.Add(960*time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(time.Second)}},
		{"claimed as the slot's second ends: the claim given back, no POST into the next second", func() lifecycle.Known {
			k := claimed()
			k.Rate, k.Now = slot(400*time.Millisecond), now.Add(time.Second-pace.LastMoment)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoYield}},
		{"given back as its second ended: back at once without its slot, no attempt used", func() lifecycle.Known {
			k := claimed()
			k.Rate, k.Now, k.Yielded, k.YieldTries = slot(400*time.Millisecond), now.Add(time.Second), true, 1
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now.Add(2 * time.Second), Unslot: true, NotDeferral: true, Lead: time.Second}},
		{"claimed just in time in the slot's second: send", func() lifecycle.Known {
			k := claimed()
			k.Rate, k.Now = slot(400*time.Millisecond), now.Add(time.Second-pace.LastMoment-time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSend, Number: 1}},
		{"claimed within the slot's second, before the slot: send", func() lifecycle.Known {
			k := claimed()
			k.Rate = slot(400 * time.Millisecond)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSend, Number: 1}},
		{"claimed at the slot: send, numbered in its series", claimed, nil, lifecycle.Effect{Do: lifecycle.DoSend, Number: 1}},
		{"a DLQ message sent and marked: finish, counted", func() lifecycle.Known { k := known(); k.DeadLetter = lifecycle.DeadLetterSent; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoFinish, Metric: obs.MetricDeadLettered}},
		{"a DLQ message sent, its mark failed: finish, counted, said as an error", func() lifecycle.Known {
			k := known()
			k.DeadLetter = lifecycle.DeadLetterUnmarked
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFinish, Metric: obs.MetricDeadLettered, Level: slog.LevelError}},
		{"a 200: record it delivered", func() lifecycle.Known { return answered(200) }, nil,
			lifecycle.Effect{Do: lifecycle.DoRecord, Detach: true, Logged: domain.OutcomeDelivered,
				Outcome: lifecycle.Outcome{Status: domain.StatusDelivered, Healthy: true}}},
		{"recorded delivered: finish, with the time from ingest to the 2xx", func() lifecycle.Known { k := answered(200); k.Recorded = true; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoFinish, Metric: obs.MetricDelivered, Took: time.Minute + 100*time.Millisecond}},
		{"a 410: the endpoint is disabled with the outcome", func() lifecycle.Known { return answered(410) }, nil,
			lifecycle.Effect{Do: lifecycle.DoRecord, Outcome: lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected, DisableEndpoint: lifecycle.GoneReason}}},
		{"a 500 recorded: back at the next attempt's time", func() lifecycle.Known { k := answered(500); k.Recorded = true; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoPutBack, Metric: obs.MetricAttemptsFailed}},
		{"the 8th attempt's 500 recorded: dead-letter the failed delivery", func() lifecycle.Known {
			k := answered(500)
			k.Claimed.Attempts, k.Recorded = 8, true
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoDeadLetter, Held: true}},
		{"the 5th timeout in a row opens the breaker", func() lifecycle.Known {
			k := answered(0)
			k.Endpoint.BreakerFails = 4
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRecord, Level: slog.LevelWarn, Why: "endpoint breaker open: no attempts until its probe"}},
		{"failing past DisableAfter: disable the endpoint", func() lifecycle.Known {
			k := answered(500)
			k.Endpoint.FailingSince = ms(-6 * 24 * time.Hour)
			return k
		}, func(p *lifecycle.Policy) { p.DisableAfter = 5 * 24 * time.Hour },
			lifecycle.Effect{Do: lifecycle.DoRecord, Why: "endpoint disabled: failing for too long"}},
		{"an outcome write that failed: wait, then read the delivery again", func() lifecycle.Known {
			k := answered(200)
			k.RecordTries, k.Err, k.ErrOn = 1, errors.New("conflict"), lifecycle.DoRecord
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoSleep, Until: now.Add(200 * time.Millisecond), Detach: true}},
		{"after the wait: read again", func() lifecycle.Known { k := answered(200); k.RecordTries = 1; return k }, nil,
			lifecycle.Effect{Do: lifecycle.DoReread}},
		{"read again, the write was applied after all: finish", func() lifecycle.Known {
			k := answered(200)
			k.RecordTries, k.RereadAt, k.Reread = 1, 1, lifecycle.RecordDone
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFinish, Metric: obs.MetricDelivered}},
		{"read again, the claim lost to a new owner: finish, it carries on", func() lifecycle.Known {
			k := answered(200)
			k.RecordTries, k.RereadAt, k.Reread = 1, 1, lifecycle.RecordLost
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFinish, Level: slog.LevelWarn}},
		{"read again, still ours: write it again", func() lifecycle.Known {
			k := answered(200)
			k.RecordTries, k.RereadAt, k.Reread = 1, 1, lifecycle.RecordRetry
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRecord}},
		{"the outcome write failing past its tries: SQS redelivers", func() lifecycle.Known {
			k := answered(200)
			k.RecordTries, k.Err, k.ErrOn = lifecycle.RecordTries, errors.New("conflict"), lifecycle.DoRecord
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRetry, Delay: lifecycle.SystemErrorBackoff}},
		{"a resend's outcome write failing for good: hidden until its lease is over, then taken over", func() lifecycle.Known {
			k := answered(200)
			k.Msg.Kind = lifecycle.KindResend
			k.RecordTries, k.Err, k.ErrOn = lifecycle.RecordTries, errors.New("conflict"), lifecycle.DoRecord
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRetry, Delay: 31 * time.Second}},
		{"a wait that would outlive the item: fail it as expired", func() lifecycle.Known {
			k := known()
			k.PutBack = lifecycle.PutBackOutlives
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFail, Reason: domain.ReasonEventExpired}},
		{"failed: dead-letter it, holding the DLQ claim", func() lifecycle.Known {
			k := known()
			f := *k.Delivery
			f.Status = domain.StatusFailed
			k.Failed = &f
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoDeadLetter, Held: true}},
		{"lanes: a failing endpoint's message moves to the slow lane at once, carrying its slot, before the claim", func() lifecycle.Known {
			k := known()
			k.Endpoint.FailingSince, k.Msg.Slot, k.Msg.SlotFor = ms(-time.Minute), slot(0), k.Delivery.Attempts
			return k
		}, lanes, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now, Lane: lifecycle.LaneSlow, NotDeferral: true, Metric: obs.MetricSlowLaneMoves}},
		{"lanes: on the slow lane already, it goes on to its attempt", func() lifecycle.Known {
			k := known()
			k.Endpoint.FailingSince, k.Msg.Lane = ms(-time.Minute), lifecycle.LaneSlow
			return k
		}, lanes, lifecycle.Effect{Do: lifecycle.DoReserve}},
		{"lanes: a half-open breaker's probe is taken on the slow lane", func() lifecycle.Known {
			k := known()
			k.Endpoint.BreakerOpenUntil, k.Endpoint.BreakerFails = ms(-time.Second), 5
			return k
		}, lanes, lifecycle.Effect{Do: lifecycle.DoPutBack, Lane: lifecycle.LaneSlow}},
		{"lanes off: no move", func() lifecycle.Known {
			k := known()
			k.Endpoint.FailingSince = ms(-time.Minute)
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoReserve}},
		{"lanes: a failed attempt's retry goes back on the slow lane", func() lifecycle.Known {
			k := answered(500)
			k.Recorded, k.RecordTries = true, 1
			return k
		}, lanes, lifecycle.Effect{Do: lifecycle.DoPutBack, Lane: lifecycle.LaneSlow}},
		{"lanes: an open breaker's wait goes back on the slow lane", func() lifecycle.Known {
			k := known()
			k.Endpoint.BreakerOpenUntil = ms(4 * time.Minute)
			return k
		}, lanes, lifecycle.Effect{Do: lifecycle.DoPutBack, Lane: lifecycle.LaneSlow}},
		{"paced: a slot booked far goes back on the paced lane, carrying it", func() lifecycle.Known {
			k := known()
			k.Rate = slot(3 * time.Second)
			return k
		}, paced, lifecycle.Effect{Do: lifecycle.DoPutBack, SetSlot: ptr(slot(3 * time.Second)), Lane: lifecycle.LanePaced}},
		{"paced: its own slot far, back on the paced lane", func() lifecycle.Known {
			k := booked()
			k.Endpoint.Settings.RatePerSecond = 2
			k.EndpointRate = slot(30 * time.Second)
			return k
		}, paced, lifecycle.Effect{Do: lifecycle.DoPutBack, Unslot: true, Lane: lifecycle.LanePaced}},
		{"paced: a failing endpoint's message on the paced lane moves to the slow lane", func() lifecycle.Known {
			k := known()
			k.Endpoint.FailingSince, k.Msg.Lane = ms(-time.Minute), lifecycle.LanePaced
			return k
		}, paced, lifecycle.Effect{Do: lifecycle.DoPutBack, Until: now, Lane: lifecycle.LaneSlow, Metric: obs.MetricSlowLaneMoves}},
		{"paced: a cap deferral from the paced lane goes back on the fast lane", func() lifecycle.Known {
			k := known()
			k.Endpoint.Leases, k.Msg.Lane = fullLeases(5), lifecycle.LanePaced
			return k
		}, paced, lifecycle.Effect{Do: lifecycle.DoPutBack, Metric: obs.MetricEndpointDeferrals}},
		{"a redriven DLQ message restarts its delivery", func() lifecycle.Known {
			k := known()
			k.Msg.Kind, k.Loaded = lifecycle.KindDeadLetter, false
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoRestart}},
		{"a redriven DLQ message whose delivery is gone restarted nothing, and says so", func() lifecycle.Known {
			k := known()
			k.Msg.Kind, k.Loaded, k.Restarted, k.NotRestarted = lifecycle.KindDeadLetter, false, true, "delivery_gone"
			return k
		}, nil, lifecycle.Effect{Do: lifecycle.DoFinish, Metric: obs.MetricRedriveNotRestarted, Level: slog.LevelWarn}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := policy
			if c.p != nil {
				c.p(&p)
			}
			got := lifecycle.Step(c.known(), p)
			if again := lifecycle.Step(c.known(), p); !reflect.DeepEqual(got, again) {
				t.Fatalf("not a function of its input: %+v, then %+v", got, again)
			}
			checkEffect(t, got, c.want)
		})
	}
}

func lanes(p *lifecycle.Policy) { p.Lanes = true }

func paced(p *lifecycle.Policy) { p.Lanes, p.Paced = true, true }

// A message goes on the paced lane only from the fast lane, with a paced
// lane deployed, when it is delayed.
func TestPacedLane(t *testing.T) {
	for _, c := range []struct {
		name  string
		lane  lifecycle.Lane
		paced bool
		delay time.Duration
		want  lifecycle.Lane
	}{
		{"delayed to its slot's second", lifecycle.LaneFast, true, time.Second, lifecycle.LanePaced},
		{"not delayed", lifecycle.LaneFast, true, 0, lifecycle.LaneFast},
		{"no paced lane deployed", lifecycle.LaneFast, false, 3 * time.Second, lifecycle.LaneFast},
		{"a failing endpoint's stays slow", lifecycle.LaneSlow, true, 3 * time.Second, lifecycle.LaneSlow},
	} {
		if got := lifecycle.PacedLane(c.lane, c.paced, c.delay); got != c.want {
			t.Errorf("%s: lane %v, want %v", c.name, got, c.want)
		}
	}
}

// A put-back goes on its endpoint's lane as it is now: a message on the
// slow lane comes back on the fast one once its endpoint is healthy.
func TestAPutBackGoesOnItsEndpointsLane(t *testing.T) {
	p := policy
	lanes(&p)
	k := known()
	k.Endpoint.Leases, k.Msg.Lane = fullLeases(5), lifecycle.LaneSlow
	if e := lifecycle.Step(k, p); e.Do != lifecycle.DoPutBack || e.Lane != lifecycle.LaneFast {
		t.Fatalf("a healthy endpoint's cap deferral from the slow lane: %v on lane %v, want a put-back on the fast lane", e.Do, e.Lane)
	}
	k.Endpoint.FailingSince = ms(-time.Minute)
	if e := lifecycle.Step(k, p); e.Do != lifecycle.DoPutBack || e.Lane != lifecycle.LaneSlow {
		t.Fatalf("a failing endpoint's cap deferral: %v on lane %v, want a put-back on the slow lane", e.Do, e.Lane)
	}
	if e := lifecycle.Step(k, policy); e.Lane != lifecycle.LaneFast {
		t.Fatalf("lanes off: lane %v", e.Lane)
	}
}

func TestLaneOf(t *testing.T) {
	for _, c := range []struct {
		name string
		ep   domain.Endpoint
		want lifecycle.Lane
	}{
		{"healthy", domain.Endpoint{}, lifecycle.LaneFast},
		{"failing", domain.Endpoint{FailingSince: ms(-time.Second)}, lifecycle.LaneSlow},
		{"breaker open", domain.Endpoint{BreakerOpenUntil: ms(time.Minute)}, lifecycle.LaneSlow},
		{"breaker half-open", domain.Endpoint{BreakerOpenUntil: ms(-time.Second)}, lifecycle.LaneSlow},
		{"paused by a Retry-After, not failing", domain.Endpoint{PausedUntil: ms(time.Minute)}, lifecycle.LaneFast},
	} {
		if got := lifecycle.LaneOf(c.ep, now); got != c.want {
			t.Errorf("%s: lane %v, want %v", c.name, got, c.want)
		}
	}
}

// checkEffect compares the fields of want that are set (Do always).
func checkEffect(t *testing.T, got, want lifecycle.Effect) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range w.NumField() {
		name := w.Type().Field(i).Name
		if name != "Do" && w.Field(i).IsZero() {
			continue
		}
		if wt, ok := w.Field(i).Interface().(time.Time); ok && wt.Equal(g.Field(i).Interface().(time.Time)) {
			continue
		}
		if !reflect.DeepEqual(g.Field(i).Interface(), w.Field(i).Interface()) {
			t.Errorf("%s = %+v, want %+v (effect %s: %+v)", name, g.Field(i).Interface(), w.Field(i).Interface(), got.Do, got)
		}
	}
}

func fullLeases(n int) map[string]domain.Lease {
	l := map[string]domain.Lease{}
	for i := range n {
		l[string(rune('0'+i))] = domain.Lease{Claim: "clm_x", Until: ms(time.Minute)}
	}
	return l
}

func ptr[T any](v T) *T { return &v }

// One message's whole path, the executor played by the test: the effects
// in order for a first attempt answered 200, and for one answered 500.
func TestStepPath(t *testing.T) {
	for _, c := range []struct {
		status int
		want   []lifecycle.Do
	}{
		{200, []lifecycle.Do{lifecycle.DoLoad, lifecycle.DoReserve, lifecycle.DoClaim, lifecycle.DoSend, lifecycle.DoRecord, lifecycle.DoFinish}},
		{500, []lifecycle.Do{lifecycle.DoLoad, lifecycle.DoReserve, lifecycle.DoClaim, lifecycle.DoSend, lifecycle.DoRecord, lifecycle.DoPutBack, lifecycle.DoFinish}},
	} {
		full := known()
		k := lifecycle.Known{Msg: full.Msg, Now: now, Seed: 1}
		var got []lifecycle.Do
		for range 20 {
			e := lifecycle.Step(k, policy)
			got = append(got, e.Do)
			switch e.Do {
			case lifecycle.DoFinish:
			case lifecycle.DoLoad:
				k.Loaded, k.Delivery, k.Endpoint, k.Event = true, full.Delivery, full.Endpoint, full.Event
			case lifecycle.DoReserve:
				k.Rate = lifecycle.Slot{At: now, Interval: time.Second}
			case lifecycle.DoClaim:
				k.Claim, k.Claimed, k.LeaseUntil = lifecycle.ClaimTaken, *full.Delivery, now.Add(time.Minute)
				k.Claimed.Attempts++
			case lifecycle.DoSend:
				k.Answer = &lifecycle.Answer{Outcome: httpOutcome(c.status, "", 0), Started: now, At: now}
			case lifecycle.DoRecord:
				k.Recorded = true
			case lifecycle.DoPutBack:
				k.PutBack = lifecycle.PutBackDone
			default:
				t.Fatalf("unexpected effect %s", e.Do)
			}
			if e.Do == lifecycle.DoFinish {
				break
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%d: path %v, want %v", c.status, got, c.want)
		}
	}
}

// A deferral moves the due time only when the sweeper would otherwise take
// the delivery for stuck (past half its grace): a short one writes nothing.
func TestShortDeferralLeavesTheDueTimeAlone(t *testing.T) {
	k := known()
	k.Endpoint.BreakerOpenUntil = ms(30 * time.Second)
	if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoPutBack || !e.MoveDue.IsZero() {
		t.Fatalf("%s, MoveDue %v: want a put-back that moves nothing", e.Do, e.MoveDue)
	}
}

// A message dropped or waiting may be a duplicate whose twin makes the
// attempt at the slot both carry: it never gives that slot back (a refund
// would let another booking take the same slot). A deferral's copy is the
// one that would have used it, and gives it back.
func TestOnlyADeferralGivesTheCarriedSlotBack(t *testing.T) {
	carried := lifecycle.Slot{At: now, Interval: 200 * time.Millisecond}
	for name, c := range map[string]struct {
		change func(*lifecycle.Known)
		refund bool
	}{
		"dropped: delivered by its twin":    {func(k *lifecycle.Known) { k.Delivery.Status = domain.StatusDelivered }, false},
		"waiting: its twin holds the claim": {func(k *lifecycle.Known) { k.Delivery.LeaseUntil = ms(20 * time.Second) }, false},
		"deferred: the endpoint paused":     {func(k *lifecycle.Known) { k.Endpoint.PausedUntil = ms(time.Minute) }, true},
	} {
		k := known()
		k.Msg.Slot = carried
		c.change(&k)
		e := lifecycle.Step(k, policy)
		if got := len(e.Refunds) > 0; got != c.refund || (got && e.Refunds[0].Slot != carried) {
			t.Errorf("%s: %s refunds %+v, want a refund of the carried slot: %v", name, e.Do, e.Refunds, c.refund)
		}
	}
}

func TestAClaimLostToAConflictGivesNothingBack(t *testing.T) {
	k := known()
	k.Msg.Slot, k.Claim = lifecycle.Slot{At: now}, lifecycle.ClaimConflict
	if e := lifecycle.Step(k, policy); len(e.Refunds) != 0 || e.Unslot {
		t.Fatalf("refunds %+v, unslot %v: want the carried slot kept", e.Refunds, e.Unslot)
	}
}

// A DLQ message someone else sends (or sent) is not counted here, and a
// resend's attempt is numbered 0 (it is not one of the series').
func TestUncountedDeadLetterAndManualNumber(t *testing.T) {
	k := known()
	k.DeadLetter = lifecycle.DeadLetterElsewhere
	if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoFinish || e.Metric != "" {
		t.Errorf("elsewhere: %s counted %q, want a finish counting nothing", e.Do, e.Metric)
	}
	k = claimed()
	k.Msg.Kind = lifecycle.KindResend
	if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoSend || e.Number != 0 {
		t.Errorf("resend: %s number %d, want a send numbered 0", e.Do, e.Number)
	}
}

// A retry due within half the sweeper's grace of the delivery's due time
// leaves its sweep index entry (due_at) where it is, and only such a retry:
// the sweeper, which waits a whole grace past due_at, then cannot take the
// delivery for stuck before its retry was due. Every attempt of the
// schedule, with many jitters, from a delivery due now and one due long ago.
func TestARetrySoonAfterItsDueKeepsItsSweepEntry(t *testing.T) {
	kept := map[bool]int{}
	for _, dueAgo := range []time.Duration{0, 10 * time.Minute} {
		for attempts := 1; attempts < 8; attempts++ {
			for seed := uint64(0); seed < 50; seed++ {
				k := answered(500)
				k.Claimed.Attempts, k.Claimed.DueAt, k.Seed = attempts, now.Add(-dueAgo).UnixMilli(), seed
				e := lifecycle.Step(k, policy)
				o := e.Outcome
				if e.Do != lifecycle.DoRecord || o.Status != domain.StatusPending {
					t.Fatalf("attempt %d: %+v", attempts, e)
				}
				soon := time.UnixMilli(o.NextAttemptAt).Sub(time.UnixMilli(k.Claimed.DueAt)) <= policy.SweepGrace/2
				if o.KeepDue != soon {
					t.Fatalf("due %v ago, attempt %d: next in %v, keep due = %v", dueAgo, attempts,
						time.UnixMilli(o.NextAttemptAt).Sub(now), o.KeepDue)
				}
				kept[o.KeepDue]++
			}
		}
	}
	if kept[true] == 0 || kept[false] == 0 {
		t.Fatalf("kept %d, moved %d: both should happen", kept[true], kept[false])
	}
	// The schedule's first retries, from a delivery due now, keep it.
	k := answered(500)
	if o := lifecycle.Step(k, policy).Outcome; !o.KeepDue {
		t.Fatalf("the first retry, a second on: %+v", o)
	}
}

// Ingest's first message carries its delivery and event, so its load reads
// only the endpoint and its slot item, and reads them eventually
// consistent. What such a load may act on by itself is only the way to the
// claim (whose slot's take, or with the cap off its re-read, checks the
// endpoint as it is now); anything else it would decide from the endpoint
// (missing, disabled, paused, failing, its breaker, its slots) may come
// from an item a second old, and is decided again after a strong read.
func TestAnEventualLoadGoesOnlyTowardTheClaim(t *testing.T) {
	first := func() lifecycle.Known {
		k := known()
		k.Msg.Carried, k.Stale = true, true
		return k
	}
	for name, c := range map[string]struct {
		loaded bool
		carry  bool
		want   lifecycle.Effect
	}{
		"ingest's first message loads eventually consistent": {false, true, lifecycle.Effect{Do: lifecycle.DoLoad, Eventual: true}},
		"any other message loads strongly":                   {false, false, lifecycle.Effect{Do: lifecycle.DoLoad, Eventual: false}},
	} {
		k := known()
		k.Loaded, k.Msg.Carried = c.loaded, c.carry
		if e := lifecycle.Step(k, policy); e.Do != c.want.Do || e.Eventual != c.want.Eventual {
			t.Errorf("%s: %s eventual %v, want %s eventual %v", name, e.Do, e.Eventual, c.want.Do, c.want.Eventual)
		}
	}
	// A healthy endpoint: on to the claim, with no second read.
	k := first()
	for _, want := range []lifecycle.Do{lifecycle.DoReserve, lifecycle.DoClaim} {
		e := lifecycle.Step(k, policy)
		if e.Do != want {
			t.Fatalf("healthy endpoint, stale load: %s, want %s", e.Do, want)
		}
		k.Rate = lifecycle.Slot{At: now, Interval: time.Second}
	}
	k.Rate, k.Now = lifecycle.Slot{At: now.Add(time.Second), Interval: time.Second}, now.Add(900*time.Millisecond)
	if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoSleep {
		t.Fatalf("a slot whose second begins in 0.1 s, stale load: %s, want a sleep toward the claim", e.Do)
	}
	lanes := policy
	lanes.Lanes = true
	for name, change := range map[string]func(*lifecycle.Known){
		"endpoint missing":   func(k *lifecycle.Known) { k.Endpoint = nil },
		"endpoint disabled":  func(k *lifecycle.Known) { k.Endpoint.Disabled = true },
		"endpoint paused":    func(k *lifecycle.Known) { k.Endpoint.PausedUntil = ms(time.Minute) },
		"breaker open":       func(k *lifecycle.Known) { k.Endpoint.BreakerOpenUntil = ms(4 * time.Minute) },
		"breaker half-open":  func(k *lifecycle.Known) { k.Endpoint.BreakerOpenUntil, k.Endpoint.BreakerFails = ms(-time.Second), 5 },
		"slots all held":     func(k *lifecycle.Known) { k.Endpoint.Leases = fullLeases(5) },
		"failing: slow lane": func(k *lifecycle.Known) { k.Endpoint.FailingSince = ms(-time.Minute) },
		"delivery moved on":  func(k *lifecycle.Known) { k.Delivery.Status = domain.StatusDelivered },
	} {
		k := first()
		change(&k)
		e := lifecycle.Step(k, lanes)
		if e.Do != lifecycle.DoLoad || e.Eventual {
			t.Errorf("%s, stale load: %s (eventual %v), want a strong load first", name, e.Do, e.Eventual)
		}
		k.Stale = false // what the strong load found: the same
		if again := lifecycle.Step(k, lanes); again.Do == lifecycle.DoLoad {
			t.Errorf("%s, strong load: loads again", name)
		}
	}
}

// A blip: a delivery's first attempt answered with an HTTP error, on an
// endpoint not failing, retried, writes nothing of the endpoint's health.
// Everything else that fails does: a transport failure, a second failure,
// an endpoint already failing, a failure for good, a free throttle.
func TestABlipLeavesTheEndpointsHealthAsItIs(t *testing.T) {
	for name, c := range map[string]struct {
		known func() lifecycle.Known
		blip  bool
	}{
		"first attempt, 500":       {func() lifecycle.Known { return answered(500) }, true},
		"first attempt, 503":       {func() lifecycle.Known { return answered(503) }, true},
		"first attempt, a timeout": {func() lifecycle.Known { return answered(0) }, false},
		"second attempt, 500": {func() lifecycle.Known {
			k := answered(500)
			k.Claimed.Attempts = 2
			return k
		}, false},
		"first attempt, 500, the endpoint failing already": {func() lifecycle.Known {
			k := answered(500)
			k.Endpoint.FailingSince = ms(-time.Minute)
			return k
		}, false},
		"first attempt, 400: failed for good": {func() lifecycle.Known { return answered(400) }, false},
		"first attempt, 200":                  {func() lifecycle.Known { return answered(200) }, false},
	} {
		e := lifecycle.Step(c.known(), policy)
		if e.Do != lifecycle.DoRecord || e.Outcome.Blip != c.blip {
			t.Errorf("%s: %s, blip %v; want a record, blip %v", name, e.Do, e.Outcome.Blip, c.blip)
		}
	}
}

// An endpoint's settings are resolved under its account's real rate (its
// account slot's interval: 5/s here): an endpoint rate not below it books
// no slot of its own (a write saved), a lower one does; the send carries
// the settings resolved for the attempt, which the request is built from.
func TestSettingsAreResolvedWithTheAccountsRate(t *testing.T) {
	k := booked() // account slot interval 200 ms: 5 deliveries a second
	k.Endpoint.Settings.RatePerSecond = 8
	if e := lifecycle.Step(k, policy); e.Do == lifecycle.DoReserve {
		t.Fatalf("an endpoint rate above the account's booked its own line: %+v", e)
	}
	k.Endpoint.Settings.RatePerSecond = 4
	if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoReserve || e.Line != lifecycle.LineEndpoint || e.Rate != 4 {
		t.Fatalf("an endpoint rate below the account's: %+v", e)
	}
	c := claimed()
	c.Endpoint.Settings = domain.EndpointSettings{TimeoutSeconds: 3, Headers: map[string]string{"Authorization": "Bearer x"}}
	e := lifecycle.Step(c, policy)
	if e.Do != lifecycle.DoSend || e.Settings.Timeout != 3*time.Second || e.Settings.Headers["Authorization"] != "Bearer x" || e.Settings.RatePerSecond != 5 {
		t.Fatalf("the send's settings: %+v", e)
	}
}

// A delivery held by its endpoint's breaker, then at the in-flight cap once
// the breaker closes, backs off from the cap's first step: the holds are
// one wait each to a known time, not polls, and the message put back for
// them (queue.Message.PutBack) does not count them as deferrals.
func TestBreakerHoldsDoNotGrowTheCapBackoff(t *testing.T) {
	k := known()
	m := queue.Message{Deferred: k.Msg.Deferred}
	for range 5 {
		k.Endpoint.BreakerOpenUntil = ms(4 * time.Minute)
		e := lifecycle.Step(k, policy)
		if e.Do != lifecycle.DoPutBack {
			t.Fatalf("a breaker hold: %v, want a put-back", e.Do)
		}
		m = m.PutBack(e)
		k.Msg.Deferred = m.Deferred
	}
	k.Endpoint.BreakerOpenUntil, k.Endpoint.Leases = 0, fullLeases(5)
	e := lifecycle.Step(k, policy)
	if max := lifecycle.CapBackoffMin + lifecycle.CapBackoffMin/4; e.Do != lifecycle.DoPutBack || e.Delay > max {
		t.Fatalf("the cap's first deferral after five breaker holds: %v for %s, want at most %s", e.Do, e.Delay, max)
	}
}

// A delivery's wait for its endpoint's in-flight cap ends by its deadline,
// as a breaker's does: near it the back-off is at most half the time left,
// and a delivery that finds the cap full at its deadline fails as
// endpoint_unavailable (the soak's slow endpoint left deliveries deferred
// with a 30 s back-off minutes past their deadlines). A resend has no
// deadline: it backs off as before.
func TestCapWaitsEndByTheDeadline(t *testing.T) {
	at := func(left time.Duration) lifecycle.Known {
		k := known()
		k.Endpoint.Leases = fullLeases(5)
		k.Msg.Deferred = 9 // the back-off at its longest
		k.Delivery.SeriesAt = seriesFor(*k.Delivery, now.Add(left))
		return k
	}
	if e := lifecycle.Step(at(time.Hour), policy); e.Do != lifecycle.DoPutBack || e.Delay < lifecycle.CapBackoffMax {
		t.Fatalf("an hour before the deadline: %v for %s, want the longest back-off", e.Do, e.Delay)
	}
	if e := lifecycle.Step(at(20*time.Second), policy); e.Do != lifecycle.DoPutBack || e.Delay != 10*time.Second {
		t.Fatalf("20 s before the deadline: %v for %s, want 10 s (half the time left)", e.Do, e.Delay)
	}
	for _, left := range []time.Duration{0, -time.Minute} {
		k := at(left)
		if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoFail || e.Reason != domain.ReasonEndpointUnavailable {
			t.Fatalf("%s before the deadline: %+v, want a fail as endpoint_unavailable", left, e)
		}
		k.Msg.Kind = lifecycle.KindResend
		if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoPutBack {
			t.Fatalf("a resend at the cap past the deadline: %v, want a put-back", e.Do)
		}
	}
	// A claim that found the cap full (every slot taken since the load).
	k := claimed()
	k.Claim = lifecycle.ClaimFull
	k.Delivery.SeriesAt = seriesFor(*k.Delivery, now)
	if e := lifecycle.Step(k, policy); e.Do != lifecycle.DoFail || e.Reason != domain.ReasonEndpointUnavailable {
		t.Fatalf("a full cap at the claim, at the deadline: %+v", e)
	}
}

// seriesFor is the series start (unix ms) that puts d's deadline at deadline.
func seriesFor(d domain.Delivery, deadline time.Time) int64 {
	d.SeriesAt = 0
	return d.CreatedAt + deadline.Sub(lifecycle.Deadline(d, policy.Schedule, policy.AttemptTimeout)).Milliseconds()
}

// An endpoint failing into the last day before it is disabled (a fifth of
// a shorter DisableAfter) is warned of it once per failing period: not
// before that window, not by the attempt that disables it, not again once
// warned, not by a success or a free throttle.
func TestAFailureJustBeforeTheDisableWarnsOnce(t *testing.T) {
	const days = 24 * time.Hour
	for name, c := range map[string]struct {
		known        func() lifecycle.Known
		disableAfter time.Duration
		warn         bool
	}{
		"failing 4 days 1h of 5":               {failingFor(500, 4*days+time.Hour, 0), 5 * days, true},
		"failing exactly 4 days":               {failingFor(500, 4*days, 0), 5 * days, true},
		"a timeout at 4.5 days":                {failingFor(0, 4*days+12*time.Hour, 0), 5 * days, true},
		"failing 3 days 23h":                   {failingFor(500, 4*days-time.Hour, 0), 5 * days, false},
		"warned already":                       {failingFor(500, 4*days+time.Hour, ms(-time.Minute)), 5 * days, false},
		"failing 6 days: disabled, not warned": {failingFor(500, 6*days, 0), 5 * days, false},
		"answered 200":                         {failingFor(200, 4*days+time.Hour, 0), 5 * days, false},
		"a free throttle":                      {failingFor(429, 4*days+time.Hour, 0), 5 * days, false},
		"never disabled":                       {failingFor(500, 4*days+time.Hour, 0), 0, false},
		"DisableAfter 20s, failing 17s":        {failingFor(500, 17*time.Second, 0), 20 * time.Second, true},
		"DisableAfter 20s, failing 15s":        {failingFor(500, 15*time.Second, 0), 20 * time.Second, false},
	} {
		p := policy
		p.DisableAfter = c.disableAfter
		e := lifecycle.Step(c.known(), p)
		if e.Do != lifecycle.DoRecord || e.Outcome.WarnDisabling != c.warn {
			t.Errorf("%s: %s, warn %v; want a record, warn %v", name, e.Do, e.Outcome.WarnDisabling, c.warn)
		}
	}
	if got := lifecycle.DisableWarning(5 * days); got != days {
		t.Errorf("DisableWarning(5 days) = %s", got)
	}
}

// failingFor is an attempt answered status (0: a timeout; 429: with
// Retry-After) to an endpoint failing for that long, warned at warnedAt
// (0: not warned).
func failingFor(status int, failing time.Duration, warnedAt int64) func() lifecycle.Known {
	return func() lifecycle.Known {
		k := answered(status)
		if status == 429 {
			k.Answer.Outcome = httpOutcome(429, "", time.Second)
		}
		k.Endpoint.FailingSince, k.Endpoint.DisableWarnedAt = ms(-failing), warnedAt
		return k
	}
}

// The settings are resolved once per attempt: the first step that knows
// the account's rate returns them (Resolved), the executor keeps them, and
// every later step, the send's too, reads the kept ones, never the
// endpoint's raw settings again (changed here after the resolve, to show it).
func TestSettingsAreResolvedOncePerAttempt(t *testing.T) {
	k := booked()
	k.Endpoint.Settings = domain.EndpointSettings{RatePerSecond: 4, TimeoutSeconds: 3}
	resolves := 0
	for range 10 {
		e := lifecycle.Step(k, policy)
		if e.Resolved != nil {
			resolves++
			k.Settings = e.Resolved
			k.Endpoint.Settings.TimeoutSeconds = 7 // a later read would see this
		}
		switch e.Do {
		case lifecycle.DoReserve:
			k.EndpointRate = lifecycle.Slot{At: now, Interval: 250 * time.Millisecond}
		case lifecycle.DoSleep:
			k.Slept = e.Until
		case lifecycle.DoClaim:
			k.Claim, k.Claimed = lifecycle.ClaimTaken, *k.Delivery
			k.Claimed.Attempts++
			k.LeaseUntil = now.Add(30 * time.Second)
		case lifecycle.DoSend:
			if resolves != 1 || e.Settings.Timeout != 3*time.Second || e.Settings.RatePerSecond != 4 || !e.Settings.OwnRate {
				t.Fatalf("the send after %d resolves carries %+v, want the one resolve's (3 s, 4/s)", resolves, e.Settings)
			}
			return
		default:
			t.Fatalf("unexpected step %s", e.Do)
		}
	}
	t.Fatal("no send within 10 steps")
}
