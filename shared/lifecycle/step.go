package lifecycle

import (
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/endpointcfg"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/retry"
)

// The step: what to do next with one queue message, from what is known of
// it so far. Step is pure (no context, no I/O, no clock, no randomness of
// its own): the executor (shared/delivery) carries out the effect it
// returns, writes the result into Known, and asks again, until a final
// effect (DoFinish, DoRetry). This is etcd-io/raft's Ready/Advance: every
// rule of the delivery path is here, tested with plain values
// (step_test.go), and the executor decides nothing.

// Do is an effect's verb; the comment says where the executor puts its result.
type Do int

// The effects.
const (
	DoFinish     Do = iota // final: the message is done with; delete it
	DoRetry                // final: a system error; leave the message to SQS, hidden for Effect.Delay
	DoLoad                 // read the delivery, its endpoint and event (Known.Loaded, .Stale, .Delivery, .Endpoint, .Event, .HeldHere)
	DoProbe                // take the endpoint's breaker probe until Effect.Until (Known.Probe)
	DoReserve              // book a rate slot on Effect.Key's line at Effect.Rate (Known.Rate or Known.EndpointRate)
	DoSleep                // wait until Effect.Until (Known.Slept)
	DoClaim                // take the attempt and an in-flight slot, the endpoint read again alongside (Known.Claim)
	DoYield                // give back a claim that made no request (Known.Yielded)
	DoSend                 // make the attempt (Known.Answer)
	DoRecord               // write the attempt and Effect.Outcome (Known.Recorded)
	DoReread               // read the delivery again after a failed record (Known.Reread)
	DoFail                 // fail the delivery without an attempt, Effect.Reason (Known.Failed)
	DoDeadLetter           // send the DLQ message of Effect.Delivery; Effect.Held: this process wrote the failure (Known.DeadLetter)
	DoRestart              // a redriven DLQ message: give its delivery a new series (Known.Restarted)
	DoPutBack              // make the message come back at Effect.Until (Known.PutBack)
	DoQuarantine           // the message to the DLQ as it is, for a human (Known.Quarantined)
	DoPrev                 // read the delivery's predecessor in its key's order (Known.PrevRead, .Prev)
)

var doNames = [...]string{"finish", "retry", "load", "probe", "reserve", "sleep", "claim", "yield", "send",
	"record", "reread", "fail", "dead_letter", "restart", "put_back", "quarantine", "prev"}

func (d Do) String() string {
	if d == Arrived {
		return "message"
	}
	return doNames[d]
}

// The kinds of queue message (queue.Kind*).
const (
	KindDeliver    = "deliver"
	KindResend     = "resend"
	KindDeadLetter = "dead_letter"
)

// Policy is every tunable of the step, resolved once per process from the
// deployment's settings (delivery.Worker).
type Policy struct {
	Schedule       retry.Schedule
	MaxInFlight    int           // per endpoint; 0: no cap
	DisableAfter   time.Duration // disable an endpoint failing for this long; 0: never
	SweepGrace     time.Duration // deferrals past half of it move the due time, so the sweeper leaves them alone
	ParkAfter      time.Duration // a longer wait is parked in the table; 0 or past MaxQueueDelay: MaxQueueDelay
	BreakerOff     bool
	LeaseFor       time.Duration // how long a claim holds an attempt
	AttemptTimeout time.Duration // one attempt's HTTP timeout (DELIVERY_TIMEOUT)
	MaxEarly       time.Duration // a message this early for its slot's second waits for it in the worker (pace.MaxEarly)
	Lanes          bool          // a slow lane is deployed: failing endpoints' messages travel on it (lane.go)
	Paced          bool          // a paced lane is deployed: messages carrying a slot booked ahead travel on it (lane.go)
	CapWhenSlow    bool          // the cap's slots only while an endpoint is slow (capslow.go)
}

// Tunables of the step, with their reasons.
const (
	// SQS's longest delay: a wait up to it is a delayed copy of the message.
	MaxQueueDelay = 15 * time.Minute
	// An endpoint's own rate slot this close is waited for in the worker
	// instead of going back to the queue (a second receive costs more).
	MaxWaitInWorker = time.Second
	// The claim is made this long before the slot (a claim write takes a
	// few ms, tens on a loaded machine), so that the request leaves at the
	// slot rather than a claim's latency after it.
	ClaimAhead = 50 * time.Millisecond
	// Back-off of a message that found its endpoint at its in-flight cap.
	CapBackoffMin, CapBackoffMax = time.Second, 30 * time.Second
	// A system error (DynamoDB or SQS unavailable) retries the message
	// soon; if it keeps failing, SQS's maxReceiveCount moves it to the DLQ.
	SystemErrorBackoff = 10 * time.Second
	// A load or a fail write that was refused (a throttle) is made again
	// once, LoadAgain later, in the worker, before the message is hidden
	// for SystemErrorBackoff: in the soak, one refused read or write kept a
	// delivery already at its deadline 10 s from its final state.
	LoadAgain = 250 * time.Millisecond
	// The end of a claim (the outcome, a yield) is written again after a
	// transient failure this many times, while the lease lasts: giving up
	// means the next claim logs the attempt as interrupted and sends it
	// again.
	RecordTries = 5
)

// Message is what a queue message carries.
type Message struct {
	Kind                                       string
	DeliveryID, AccountID, EndpointID, EventID string
	Gen                                        int
	Slot                                       Slot // the account rate slot it carries (zero: none)
	SlotFor                                    int  // the attempt number the slot was booked for
	Deferred                                   int  // times it was put back
	Received                                   int  // SQS's ApproximateReceiveCount of this copy
	Lane                                       Lane // the queue it came from
	// Lead is how much earlier than pace.Early its slot put-backs land it:
	// pace.LeadStep more each time it came too late for its slot (nextLead).
	Lead time.Duration
	// Carried: it carries its delivery and its event's body as ingest
	// wrote them (ingest's first message), so its load reads only the
	// endpoint and the endpoint's slot item.
	Carried bool
}

// Slot is a booked rate slot: its time, and the line's interval (what a
// refund needs).
type Slot struct {
	At       time.Time
	Interval time.Duration
}

// Line is the rate line a slot is booked on.
type Line int

// The rate lines.
const (
	LineAccount  Line = iota // the account's rate (its stored rate)
	LineEndpoint             // the endpoint's own rate, when it has one
)

// Key is the line's key in the limiter: the account, or account/endpoint.
func (l Line) Key(accountID, endpointID string) string {
	if l == LineEndpoint {
		return accountID + "/" + endpointID
	}
	return accountID
}

// RateOn is the slot booked on line l for this message.
func (k *Known) RateOn(l Line) *Slot {
	if l == LineEndpoint {
		return &k.EndpointRate
	}
	return &k.Rate
}

// ClaimResult is what a claim came to.
type ClaimResult int

// The claim results.
const (
	ClaimNone      ClaimResult = iota // not tried yet
	ClaimTaken                        // ours: Known.Claimed, .LeaseUntil
	ClaimFull                         // every in-flight slot held, none handed over in time
	ClaimConflict                     // the delivery changed under us
	ClaimChanged                      // the endpoint was disabled, deleted or re-pointed (Known.ClaimHeld: the claim was taken and must be yielded)
	ClaimDuplicate                    // a manual attempt already made, or being made
)

// PutBackResult is what putting a message back came to.
type PutBackResult int

// The put-back results.
const (
	PutBackNone       PutBackResult = iota
	PutBackDone                     // it will come back
	PutBackSuperseded               // parking found a newer generation: nothing to do
	PutBackOutlives                 // the wait would end past the item's expiry
)

// DeadLetterResult is what sending a DLQ message came to.
type DeadLetterResult int

// The dead-letter results.
const (
	DeadLetterNone      DeadLetterResult = iota
	DeadLetterSent                       // sent, and the delivery marked
	DeadLetterUnmarked                   // sent, but the mark failed: the sweeper may send it again
	DeadLetterElsewhere                  // someone else sends it, or it was sent
)

// Sent reports whether the DLQ message went out from here (marked or not).
func (r DeadLetterResult) Sent() bool { return r == DeadLetterSent || r == DeadLetterUnmarked }

// Known is everything known about one message so far.
type Known struct {
	Msg  Message
	Now  time.Time
	Seed uint64 // this message's jitter (back-offs, the retry schedule, breaker pauses)

	// Err is the system error of the last effect, ErrOn that effect.
	Err   error
	ErrOn Do

	Loaded bool
	// Stale: the load was eventually consistent (Effect.Eventual), so the
	// endpoint and its slot item may be up to about a second old.
	Stale    bool
	Delivery *domain.Delivery
	Endpoint *domain.Endpoint
	Event    *domain.Event
	HeldHere bool // a claim in this process holds one of the endpoint's slots (it will hand it over)

	ProbeTaken, ProbeLost bool
	Rate                  Slot // the account slot booked here (the message's own is Msg.Slot)
	EndpointRate          Slot
	Slept                 time.Time
	// Settings are the endpoint's effective settings for this attempt,
	// resolved once (Effect.Resolved) when its account's rate is known,
	// kept by the executor: every later step reads them.
	Settings *endpointcfg.Effective

	Claim                 ClaimResult
	ClaimHeld             bool // with ClaimChanged
	Claimed               domain.Delivery
	LeaseUntil            time.Time
	Yielded               bool
	YieldTries            int
	LoadTries             int // loads made, failed or not
	FailTries             int // fail writes made, failed or not
	Answer                *Answer
	Recorded, RecordLost  bool
	RecordTries, RereadAt int
	Reread                RecordResult
	Failed                *domain.Delivery
	FailLost              bool
	DeadLetter            DeadLetterResult
	Restarted             bool
	NotRestarted          string // with Restarted: why nothing was restarted ("" when it was)
	PutBack               PutBackResult
	Quarantined           bool
	PrevRead              bool             // the predecessor was read (order.go)
	Prev                  *domain.Delivery // what was found; nil: absent
}

// Refund is a slot to give back, on its line.
type Refund struct {
	Line Line
	Slot Slot
}

// Effect is what to do next.
type Effect struct {
	Do    Do
	Until time.Time     // DoProbe, DoSleep, DoPutBack
	Delay time.Duration // DoRetry: hide for; DoPutBack: the queue delay (Park false)
	Park  bool          // DoPutBack: park it in the table for the scheduler (a wait past the queue's delay)
	// DoLoad: read eventually consistent (half the read units).
	Eventual bool
	// DoClaim: without an in-flight slot (CapNow: the cap only while slow).
	Uncapped bool
	// DoReserve: the line, and the rate of the endpoint's own line.
	Line Line
	Rate float64
	// DoPutBack: what the message carries back.
	SetSlot     *Slot // a new account slot, booked for Known.Delivery's next attempt
	SlotFor     int
	Unslot      bool // its slot was given back: it goes back without one
	NotDeferral bool // a far slot is not a deferral (Message.Deferred counts put-backs)
	MoveDue     time.Time
	Lane        Lane          // the queue it goes back to
	Lead        time.Duration // what it carries as Message.Lead from now on
	// Refunds are given back before the effect (best effort: a failed refund costs only rate).
	Refunds []Refund

	Reason   domain.FailReason     // DoFail
	Delivery domain.Delivery       // DoDeadLetter
	Held     bool                  // DoDeadLetter
	Outcome  Outcome               // DoRecord
	Logged   domain.AttemptOutcome // DoRecord: the attempt log's word
	Detach   bool                  // DoSleep, DoRecord, DoYield: run even as the invocation ends

	// What the executor says about it.
	Why    string
	Level  slog.Level    // of Why; 0 (info) when Why is empty
	Metric string        // counted once (obs.Metric*)
	Took   time.Duration // with MetricDelivered: from the delivery's creation to its 2xx (obs.MetricTimeToDeliver)
	Number int           // DoSend: the attempt's number in its series, 0 for a manual one
	// DoSend: the key's previous event failed for good (order.go).
	PrevFailed bool
	// DoSend: mark the endpoint slow if the answer takes SlowWatch (capslow.go).
	WatchSlow bool
	// Settings (DoSend) are the endpoint's effective settings for this
	// attempt (Known.Settings): the request is built from them, nothing
	// else reads the endpoint's raw settings.
	Settings endpointcfg.Effective
	// Resolved: the settings, resolved by this step, the first that knew
	// the account's rate; the executor keeps them in Known.Settings.
	Resolved *endpointcfg.Effective
}

// Step is the next effect for a message, from what is known of it.
func Step(k Known, p Policy) Effect {
	if k.Err != nil {
		return onError(k, p)
	}
	switch {
	case k.Quarantined:
		return Effect{Do: DoFinish}
	case k.DeadLetter == DeadLetterSent:
		return Effect{Do: DoFinish, Metric: obs.MetricDeadLettered}
	case k.DeadLetter == DeadLetterUnmarked:
		return Effect{Do: DoFinish, Metric: obs.MetricDeadLettered, Why: "DLQ message sent but not marked; it may be sent again", Level: slog.LevelError}
	case k.DeadLetter == DeadLetterElsewhere:
		return Effect{Do: DoFinish}
	case k.Failed != nil:
		return Effect{Do: DoDeadLetter, Delivery: *k.Failed, Held: true, Why: "delivery failed for good", Level: slog.LevelWarn}
	case k.PutBack != PutBackNone:
		return afterPutBack(k)
	case k.FailLost:
		return putBack(k, p, k.Now.Add(time.Second), Effect{})
	case k.Msg.Kind == KindDeadLetter:
		if k.Restarted && k.NotRestarted != "" {
			return Effect{Do: DoFinish, Metric: obs.MetricRedriveNotRestarted, Level: slog.LevelWarn,
				Why: "a redriven DLQ message restarted nothing (" + k.NotRestarted + "); its message is removed"}
		}
		if k.Restarted {
			return Effect{Do: DoFinish, Why: "a redriven DLQ message restarted its delivery", Level: slog.LevelInfo}
		}
		return Effect{Do: DoRestart}
	case k.Answer != nil:
		return afterSend(k, p)
	case k.Claim == ClaimTaken:
		if at, ok := claimedSlot(k); ok && pace.Late(at, k.Now) && !k.Yielded && k.YieldTries < RecordTries && (k.YieldTries == 0 || k.Now.Before(k.LeaseUntil)) {
			// The claim took so long that the POST would leave in the next
			// second, whose slots are all booked: give the claim back (no
			// attempt used), and book a new slot on the next receive.
			return Effect{Do: DoYield, Detach: true}
		}
		if k.Yielded {
			return putBack(k, p, k.Now, Effect{Unslot: true, NotDeferral: true, Metric: obs.MetricRateLimitDeferrals, Lead: pace.NextLead(k.Msg.Lead),
				Why: "claimed too late for its slot's second: the claim given back, a new slot to book", Level: slog.LevelDebug})
		}
		if sendAt := sendAt(k, p); k.Now.Before(sendAt) && k.Slept.Before(sendAt) {
			return Effect{Do: DoSleep, Until: sendAt}
		}
		// The attempt's number in its series (the receiver's header); a
		// manual attempt is not one of the series': 0.
		cfg, fresh := settings(k, p)
		e := Effect{Do: DoSend, Settings: *cfg, Resolved: fresh, WatchSlow: WatchSlow(p, *k.Endpoint, k.Now)}
		if k.Msg.Kind != KindResend {
			e.Number, e.PrevFailed = k.Claimed.Attempts, PrevFailed(k)
		}
		return e
	case k.Claim != ClaimNone:
		return afterClaim(k, p)
	}
	if !k.Msg.Slot.At.IsZero() && pace.Wait(k.Msg.Slot.At, k.Now) > p.MaxEarly+k.Msg.Lead {
		// Back long before the second of the slot it carries: again, by the same rule.
		return slotBack(k, p, k.Msg.Slot.At, Effect{})
	}
	if !k.Loaded {
		return Effect{Do: DoLoad, Eventual: k.Msg.Carried}
	}
	e := beforeClaim(k, p)
	if k.Stale && e.Do != DoClaim && e.Do != DoSleep && e.Do != DoReserve {
		// Ingest's first message reads its endpoint eventually consistent:
		// ingest has just read it strongly, and what an attempt needs of it
		// is checked where it matters, as the attempt is claimed (the
		// slot's take is made only for the route as loaded; with the cap
		// off, the endpoint is read again alongside the claim).
		// Anything but going on to the claim (the endpoint missing,
		// disabled, paused, failing, its breaker open, its slots held) may
		// come from an item a second old: read it again, strongly, first.
		return Effect{Do: DoLoad}
	}
	return e
}

// beforeClaim: the message is loaded; is an attempt due, and may it go now?
func beforeClaim(k Known, p Policy) Effect {
	d, ep, now := k.Delivery, k.Endpoint, k.Now
	manual := k.Msg.Kind == KindResend
	var act Action
	in := Input{Msg: k.Msg, Delivery: d, Endpoint: ep, Event: k.Event, Now: now, MaxAttempts: p.Schedule.MaxAttempts()}
	if manual {
		act = DecideResend(in)
	} else {
		if d != nil {
			in.Deadline = Deadline(*d, p.Schedule, p.AttemptTimeout)
		}
		act = Decide(in)
	}
	switch act.Verb {
	case Quarantine:
		return Effect{Do: DoQuarantine, Why: act.Why, Level: slog.LevelError}
	// A slot booked here and not used goes back. The slot the message
	// carries goes back only on a deferral (the endpoint's pause or
	// breaker): a message dropped or waiting may be a duplicate whose twin
	// is making the attempt at that very slot.
	case Drop:
		return Effect{Do: DoFinish, Why: act.Why, Level: slog.LevelDebug, Refunds: booked(k)}
	case DeadLetter:
		return Effect{Do: DoDeadLetter, Delivery: *d, Why: act.Why, Level: slog.LevelInfo, Refunds: booked(k)}
	case Fail:
		return Effect{Do: DoFail, Reason: act.Reason, Why: act.Why, Level: slog.LevelWarn, Refunds: booked(k)}
	case Wait:
		e := Effect{Why: act.Why, Level: slog.LevelDebug, Refunds: booked(k)}
		if act.Deferral {
			// A hold of the endpoint's (its breaker, its Retry-After) is one
			// wait to a known time, not a poll: it does not count toward the
			// in-flight cap's backoff (capDeferral). Counted, a delivery held
			// five times by a breaker met the cap after it with the longest
			// backoff at once (30 s), past its deadline on a short schedule.
			e.NotDeferral = true
			e.Metric, e.Refunds, e.Unslot = obs.MetricEndpointDeferrals, giveBack(k), true
			if !manual {
				e.MoveDue = act.Until
			}
		}
		return putBack(k, p, act.Until, e)
	}
	if !manual {
		switch Hold(*d, endpointcfg.Ordered(*ep), k.PrevRead, k.Prev, now) {
		case OrderRead:
			return Effect{Do: DoPrev}
		case OrderHold:
			until := holdUntil(k)
			return putBack(k, p, until, Effect{Refunds: giveBack(k), Unslot: true, MoveDue: until, Metric: obs.MetricOrderedHolds,
				Why: "held: the previous event of its ordering key is not final on this endpoint", Level: slog.LevelDebug})
		}
	}
	if p.Lanes && k.Msg.Lane != LaneSlow && LaneOf(*ep, now) == LaneSlow {
		// At once, carrying what it carries: only the lane changes.
		return Effect{Do: DoPutBack, Until: now, Lane: LaneSlow, NotDeferral: true, Refunds: booked(k),
			Metric: obs.MetricSlowLaneMoves, Why: "endpoint failing: its attempt goes on the slow lane", Level: slog.LevelDebug}
	}
	if act.Probe && !p.BreakerOff && !k.ProbeTaken {
		if k.ProbeLost {
			return putBack(k, p, now.Add(time.Second), Effect{Why: "another worker probes the endpoint", Level: slog.LevelDebug, Refunds: giveBack(k), Unslot: true})
		}
		return Effect{Do: DoProbe, Until: now.Add(p.LeaseFor), Why: "breaker half-open: this attempt is the probe", Level: slog.LevelInfo}
	}
	if known, _ := accountSlot(k); CapNow(p, *ep, known.Interval, now) && len(FreeSlots(*ep, p.MaxInFlight, now, 0, nil)) == 0 && !(k.HeldHere && !manual) {
		return capDeferral(k, p) // every slot held elsewhere: nothing to wait for here
	}
	rate, ok := accountSlot(k)
	if !ok {
		if k.Rate.At.IsZero() {
			return Effect{Do: DoReserve, Line: LineAccount}
		}
		rate = k.Rate
	}
	if rate == k.Rate && pace.Wait(rate.At, now) > p.MaxEarly+nextLead(k) {
		// Booked here, and its second is ahead: back for it (the queue's
		// delays are whole seconds, pace.Delay), carrying it. (A slot the
		// message carries is at most Policy.MaxEarly, and its lead, away.)
		e := Effect{SetSlot: &rate, SlotFor: d.Attempts, NotDeferral: true, Metric: obs.MetricRateLimitDeferrals}
		if !manual {
			e.MoveDue = rate.At
		}
		return slotBack(k, p, rate.At, e)
	}
	cfg, fresh := settings(k, p)
	if cfg.OwnRate {
		if k.EndpointRate.At.IsZero() {
			return Effect{Do: DoReserve, Line: LineEndpoint, Rate: cfg.RatePerSecond, Resolved: fresh}
		}
		if at := k.EndpointRate.At; at.Sub(now) > MaxWaitInWorker {
			e := Effect{Refunds: giveBack(k), Unslot: true, NotDeferral: true, MoveDue: at, Metric: obs.MetricRateLimitDeferrals}
			return slotBack(k, p, at, e) // a new run resolves them again
		}
	}
	// Wait for the slot before the claim, which holds an in-flight slot that
	// must not sit idle meanwhile. (Claiming ahead of the slot would not do: at
	// 20/s with the cap of 5 the slots ran out and a burst drained at half
	// the rate.)
	if at := sendAt(k, p).Add(-ClaimAhead); now.Before(at) && k.Slept.Before(at) {
		return Effect{Do: DoSleep, Until: at, Resolved: fresh}
	}
	return Effect{Do: DoClaim, Resolved: fresh, Uncapped: !CapNow(p, *ep, rate.Interval, now)}
}

// afterClaim: a claim that did not come to an attempt. A claim lost to a
// conflict or a duplicate was most likely lost to a twin of this message
// making the attempt at the slot both carry: only a slot booked here goes
// back then.
func afterClaim(k Known, p Policy) Effect {
	back := Effect{Refunds: giveBack(k), Unslot: true, Level: slog.LevelInfo}
	switch k.Claim {
	case ClaimFull:
		return capDeferral(k, p)
	case ClaimDuplicate:
		return Effect{Do: DoFinish, Refunds: booked(k), Why: "this resend was already made, or is being made", Level: slog.LevelInfo}
	case ClaimChanged:
		if k.ClaimHeld && !k.Yielded && k.YieldTries < RecordTries && (k.YieldTries == 0 || k.Now.Before(k.LeaseUntil)) {
			return Effect{Do: DoYield, Detach: true}
		}
		back.Why = "endpoint changed before the claim; looking again"
	default: // ClaimConflict
		back = Effect{Refunds: booked(k), Why: "the delivery changed under the claim; looking again", Level: slog.LevelDebug}
		if k.Msg.Kind != KindResend {
			back.MoveDue = k.Now.Add(time.Second)
		}
	}
	return putBack(k, p, k.Now.Add(time.Second), back)
}

// afterSend: the attempt was made; record it, then finish, retry or dead-letter.
func afterSend(k Known, p Policy) Effect {
	manual := k.Msg.Kind == KindResend
	if k.RecordLost {
		return Effect{Do: DoFinish, Why: "attempt made but its claim was lost (lease expired); the new owner carries on", Level: slog.LevelWarn}
	}
	rec := record(k, p)
	if !k.Recorded {
		if !manual && k.RecordTries > 0 && k.RereadAt != k.RecordTries {
			return Effect{Do: DoReread, Detach: true}
		}
		if k.RecordTries > 0 && k.RereadAt == k.RecordTries {
			switch k.Reread {
			case RecordDone:
				k.Recorded = true
			case RecordLost:
				k.RecordLost = true
				return afterSend(k, p)
			}
		}
		if !k.Recorded {
			return rec
		}
	}
	if manual {
		return Effect{Do: DoFinish, Why: "manual attempt", Level: slog.LevelInfo}
	}
	o := rec.Outcome
	switch o.Status {
	case domain.StatusDelivered:
		// A plain success logs nothing at info: the attempt is in the
		// table, and the metric counts it (CloudWatch Logs bills each line).
		return Effect{Do: DoFinish, Why: "delivered", Level: slog.LevelDebug, Metric: obs.MetricDelivered,
			Took: k.Answer.At.Sub(time.UnixMilli(k.Delivery.CreatedAt))}
	case domain.StatusPending:
		return putBack(k, p, time.UnixMilli(o.NextAttemptAt), Effect{Why: "attempt failed; retry scheduled", Level: slog.LevelInfo, Metric: obs.MetricAttemptsFailed})
	}
	failed := k.Claimed
	failed.Status, failed.FailReason, failed.FailedAt = domain.StatusFailed, o.FailReason, domain.Millis(k.Answer.At)
	failed.LastStatus, failed.LastError = k.Answer.Status, k.Answer.Class
	return Effect{Do: DoDeadLetter, Delivery: failed, Held: true, Why: "delivery failed for good", Level: slog.LevelWarn}
}

// record is the outcome write of the attempt answered (Known.Answer).
func record(k Known, p Policy) Effect {
	a, ep := *k.Answer, *k.Endpoint
	e := Effect{Do: DoRecord, Detach: true}
	if k.Msg.Kind == KindResend {
		e.Logged = domain.AttemptOutcome(a.Verdict.String()) // the verdict words are the outcome words
		e.Outcome = Outcome{Healthy: a.Verdict == destination.Delivered, DisableEndpoint: Gone(a.Verdict)}
		if a.Verdict == destination.Throttled {
			e.Outcome.PauseUntil = domain.Millis(a.At.Add(min(a.RetryAfter, MaxThrottlePause)))
		}
		return e
	}
	rnd := rand.New(rand.NewPCG(k.Seed, 1))
	o := Settle(k.Claimed, a, a.At, p.Schedule, rnd, Deadline(k.Claimed, p.Schedule, p.AttemptTimeout))
	if !p.BreakerOff {
		probe := BreakerOf(ep, a.Started) == BreakerHalfOpen
		o.Breaker = BreakerAfterAttempt(ep, a.Outcome, probe, a.At, rnd)
		switch o.Breaker.On {
		case BreakerTripped, BreakerProbeBad:
			e.Why, e.Level = "endpoint breaker open: no attempts until its probe", slog.LevelWarn
		case BreakerProbeOK:
			e.Why, e.Level = "endpoint breaker closed: the probe was answered", slog.LevelInfo
		}
	}
	if failing := time.UnixMilli(ep.FailingSince); !o.Healthy && !o.GiveBack && o.DisableEndpoint == "" &&
		p.DisableAfter > 0 && ep.FailingSince != 0 && a.Started.Sub(failing) >= p.DisableAfter {
		o.DisableEndpoint = "failing without a success since " + failing.UTC().Format(time.RFC3339)
		e.Why, e.Level = "endpoint disabled: failing for too long", slog.LevelWarn
	}
	o.WarnDisabling = WarnsDisabling(ep, o, a.Started, p.DisableAfter)
	o.Blip = Blip(ep, k.Claimed.Attempts, a.Outcome, o)
	// A retry due soon after the delivery was due (the schedule's first
	// waits: 1 s, 16 s, 81 s) leaves its sweep index entry where it is.
	o.KeepDue = o.Status == domain.StatusPending && p.SweepGrace > 0 &&
		KeepsDue(k.Claimed.DueAt, time.UnixMilli(o.NextAttemptAt), p.SweepGrace)
	e.Outcome, e.Logged = o, LogOutcome(a.Verdict, o)
	return e
}

// onError: the last effect failed with a system error.
func onError(k Known, p Policy) Effect {
	why := "system error: " + k.Err.Error()
	switch k.ErrOn {
	case DoRecord, DoYield:
		tries := k.RecordTries
		if k.ErrOn == DoYield {
			tries = k.YieldTries
		}
		wait := 100 * time.Millisecond << min(tries, 4)
		if tries < RecordTries && k.Now.Add(wait).Before(k.LeaseUntil) {
			return Effect{Do: DoSleep, Until: k.Now.Add(wait), Detach: true, Why: "ending the claim failed; trying again", Level: slog.LevelWarn}
		}
		if k.ErrOn == DoYield {
			k.Err, k.Yielded = nil, true // the next claim logs it as interrupted
			e := Step(k, p)
			e.Why, e.Level = "could not give the claim back; the next claim logs it as interrupted: "+why, slog.LevelWarn
			return e
		}
		if k.Msg.Kind == KindResend {
			// Hidden until the lease is over: the next receive takes the claim over.
			return Effect{Do: DoRetry, Delay: k.LeaseUntil.Sub(k.Now) + time.Second, Why: why, Level: slog.LevelError}
		}
	case DoReread:
		k.Err, k.RereadAt, k.Reread = nil, k.RecordTries, RecordRetry
		return Step(k, p)
	case DoLoad:
		if k.LoadTries < 2 {
			return Effect{Do: DoSleep, Until: k.Now.Add(LoadAgain), Why: "reading the delivery failed; reading it again: " + k.Err.Error(), Level: slog.LevelWarn}
		}
	case DoFail:
		// As a load: a delivery failed at its deadline (the endpoint held
		// it) whose write was throttled ended 10 s later, past the
		// allowance in the soak.
		if k.FailTries < 2 {
			return Effect{Do: DoSleep, Until: k.Now.Add(LoadAgain), Why: "failing the delivery failed; writing it again: " + k.Err.Error(), Level: slog.LevelWarn}
		}
	case DoPutBack:
		why = "could not put the message back; SQS will redeliver it: " + k.Err.Error()
	}
	e := Effect{Do: DoRetry, Delay: SystemErrorBackoff, Why: why, Level: slog.LevelError}
	if k.Claim == ClaimNone {
		e.Refunds = booked(k)
	}
	return e
}

// afterPutBack: the message was put back (or parking found why not).
func afterPutBack(k Known) Effect {
	switch {
	case k.PutBack == PutBackSuperseded:
		return Effect{Do: DoFinish, Why: "message superseded while parking it; dropped", Level: slog.LevelDebug}
	case k.PutBack != PutBackOutlives || k.FailLost:
		return Effect{Do: DoFinish}
	case !k.Loaded:
		return Effect{Do: DoLoad}
	case k.Delivery == nil:
		return Effect{Do: DoFinish}
	}
	return Effect{Do: DoFail, Reason: domain.ReasonEventExpired, Why: "its wait would outlive the item", Level: slog.LevelWarn}
}

// putBack makes the message come back at until (at least a second on: the
// queue's delays are whole seconds): a wait up to Policy.ParkAfter is a
// fresh copy sent with that delay; a longer wait of a delivery's own
// message is parked in the table and the scheduler sends it again at its
// time (a resend's message is not the delivery's: it hops in delayed
// copies). e carries what goes with it; MoveDue is kept only where the
// sweeper would otherwise take the delivery for stuck.
func putBack(k Known, p Policy, until time.Time, e Effect) Effect {
	e.Do = DoPutBack
	until = later(until, k.Now)
	e.Until = until
	wait := until.Sub(k.Now)
	maxDelay := p.ParkAfter
	if maxDelay <= 0 || maxDelay > MaxQueueDelay {
		maxDelay = MaxQueueDelay
	}
	e.Park = HowToWait(wait, maxDelay, k.Msg.Kind == KindResend) == WaitParked
	e.Delay = min(wait, maxDelay)
	e.Lane = laneAfter(k, p)
	if !e.MoveDue.IsZero() && (p.SweepGrace <= 0 || k.Delivery == nil || KeepsDue(k.Delivery.DueAt, e.MoveDue, p.SweepGrace)) {
		e.MoveDue = time.Time{}
	}
	return e
}

// KeepsDue reports whether a delivery due at due (unix ms, its sweep index
// entry's time) that will next move at next needs its due time left where
// it is: the sweeper takes a delivery for stuck only a whole grace past its
// due, so a move within half of it is never mistaken for a stuck one, and
// moving the entry would cost two write units (the index entry out and in)
// for nothing. Deferrals (putBack's MoveDue) and retries (record) keep it
// by this one rule.
func KeepsDue(due int64, next time.Time, grace time.Duration) bool {
	return due != 0 && next.Sub(time.UnixMilli(due)) <= grace/2
}

func later(t, now time.Time) time.Time { return now.Add(max(t.Sub(now), time.Second)) }

// capDeferral puts back a message that found its endpoint at its in-flight
// cap; its rate slot is given back (a deferral costs the account no rate).
// A delivery's wait for the cap ends by its deadline, as a breaker's does
// (EndpointWait): an endpoint too slow for its traffic fails the deliveries
// it could not take in the contract's time as endpoint_unavailable, where
// the back-off (growing to 30 s while newer messages took the freed slots)
// left them minutes past it in the soak. Near the deadline it backs off at
// most half the time left, so a delivery looks for a slot again before it.
func capDeferral(k Known, p Policy) Effect {
	rnd := rand.New(rand.NewPCG(k.Seed, 2))
	d := CapBackoffMin << min(max(k.Msg.Received+k.Msg.Deferred-1, 0), 5)
	d = min(d, CapBackoffMax)
	d += time.Duration(rnd.Int64N(int64(d/4) + 1))
	e := Effect{Refunds: giveBack(k), Unslot: true, Metric: obs.MetricEndpointDeferrals}
	if k.Msg.Kind == KindResend || k.Delivery == nil {
		return putBack(k, p, k.Now.Add(d), e)
	}
	deadline := Deadline(*k.Delivery, p.Schedule, p.AttemptTimeout)
	d = min(d, max(deadline.Sub(k.Now)/2, CapBackoffMin))
	w := EndpointWait(Action{Verb: Wait, Until: k.Now.Add(d), Why: "its in-flight cap is full"}, k.Now, deadline)
	if w.Verb == Fail {
		return Effect{Do: DoFail, Reason: w.Reason, Refunds: giveBack(k), Level: slog.LevelWarn, Why: w.Why}
	}
	e.MoveDue = w.Until
	return putBack(k, p, w.Until, e)
}

// accountSlot is the account slot this attempt goes at: one booked here, or
// the message's own when it was booked for this attempt (any, for a resend)
// and its second has not passed (pace.Usable: a late message books a new
// slot rather than spill into the next second, whose slots are booked). ok
// is false when there is none.
func accountSlot(k Known) (Slot, bool) {
	if !k.Rate.At.IsZero() {
		return k.Rate, true
	}
	if at, ok := claimedSlot(k); ok && pace.Usable(at, k.Now) {
		return k.Msg.Slot, true
	}
	return Slot{}, false
}

// claimedSlot is the account slot a claim was taken for: one booked here,
// or the message's own for this attempt (any, for a resend), usable or not.
func claimedSlot(k Known) (time.Time, bool) {
	if !k.Rate.At.IsZero() {
		return k.Rate.At, true
	}
	return ownSlot(k)
}

// ownSlot is the slot the message carries for this attempt (any, for a
// resend).
func ownSlot(k Known) (time.Time, bool) {
	m := k.Msg
	forThis := m.Kind == KindResend || (k.Delivery != nil && m.SlotFor == k.Delivery.Attempts)
	return m.Slot.At, !m.Slot.At.IsZero() && forThis
}

// sendAt is when the attempt may leave: when its account slot's second
// begins (pace.Second) and at its endpoint slot, whichever is later.
func sendAt(k Known, p Policy) time.Time {
	var at time.Time
	if s, ok := accountSlot(k); ok {
		at = pace.Second(s.At)
	}
	if k.EndpointRate.At.After(at) {
		return k.EndpointRate.At
	}
	return at
}

// giveBack lists the slots booked for this attempt that it will not use.
func giveBack(k Known) []Refund {
	var r []Refund
	if s, ok := accountSlot(k); ok {
		r = append(r, Refund{LineAccount, s})
	}
	if !k.EndpointRate.At.IsZero() {
		r = append(r, Refund{LineEndpoint, k.EndpointRate})
	}
	return r
}

// booked lists the slots booked by this run (the message's own stays with
// the message SQS redelivers).
func booked(k Known) []Refund {
	var r []Refund
	if !k.Rate.At.IsZero() {
		r = append(r, Refund{LineAccount, k.Rate})
	}
	if !k.EndpointRate.At.IsZero() {
		r = append(r, Refund{LineEndpoint, k.EndpointRate})
	}
	return r
}

// slotBack puts the message back for a rate slot at: delayed to its
// second (pace.Delay, whole seconds), it reaches a worker at most
// pace.Early before the second begins, and waits for it there.
func slotBack(k Known, p Policy, at time.Time, e Effect) Effect {
	e.Lead = nextLead(k)
	e = putBack(k, p, k.Now.Add(pace.Delay(at.Add(-e.Lead), k.Now)), e)
	e.Lane = PacedLane(e.Lane, p.Paced, e.Delay)
	return e
}

// nextLead is the lead the message goes on with: a step more than it
// carries if it reached this worker too late for the slot it carries for
// this attempt (pace.LeadStep).
func nextLead(k Known) time.Duration {
	if at, ok := ownSlot(k); ok && !pace.Usable(at, k.Now) {
		return pace.NextLead(k.Msg.Lead)
	}
	return k.Msg.Lead
}

// settings are the attempt's effective settings: Known.Settings, or, the
// first time, endpointcfg.Resolve under its account's real rate, as the
// account's limiter holds it (the interval of the attempt's account slot),
// returned fresh too for the executor to keep. Its interval is truncated
// (to the µs or, carried by the message, the ms), which can only make the
// account look faster, so the endpoint's own rate is never skipped when it
// is the lower; no slot (or an interval under a ms): the endpoint's own
// rate is booked whenever it has one.
func settings(k Known, p Policy) (cfg, fresh *endpointcfg.Effective) {
	if k.Settings != nil {
		return k.Settings, nil
	}
	var acct domain.Account
	if s, ok := accountSlot(k); ok && s.Interval > 0 {
		acct.RatePerSecond = float64(time.Second) / float64(s.Interval)
	}
	e := endpointcfg.Resolve(*k.Endpoint, acct, endpointcfg.Defaults{Timeout: p.AttemptTimeout})
	return &e, &e
}

// FreeSlots lists the endpoint's in-flight slots (of max) that nobody held
// as read, except skip, from start on (the executor spreads concurrent
// workers over the slots with a random start).
func FreeSlots(ep domain.Endpoint, max int, now time.Time, start int, skip map[string]bool) []string {
	var free []string
	for i := range max {
		k := strconv.Itoa((start + i) % max)
		if l, held := ep.Leases[k]; !skip[k] && (!held || l.Until < domain.Millis(now)) {
			free = append(free, k)
		}
	}
	return free
}
