// Package delivery is where a delivery decision is made: the deliver
// function's handler takes a batch of queue messages and, for each, decides
// whether an attempt is due, claims it, sends it, records it, and then
// finishes the delivery, puts the message back for the next retry, or
// dead-letters it.
package delivery

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/endpointcfg"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/sender"
	"github.com/gifq/webhooks/shared/store"
)

// Store is what the worker needs of the table.
type Store interface {
	LoadForAttempt(context.Context, store.Ref) (store.Snapshot, error)
	ClaimAttempt(context.Context, domain.Delivery, store.Claim) (domain.Delivery, error)
	YieldClaim(ctx context.Context, seen, claimed domain.Delivery, c store.Claim) error
	FreeSlot(ctx context.Context, endpointID, slot, claim string)
	RecordAttempt(context.Context, domain.Delivery, *domain.Endpoint, store.Claim, domain.Attempt, store.Outcome) error
	FailWithoutAttempt(ctx context.Context, d domain.Delivery, reason domain.FailReason, sendDLQ bool) (domain.Delivery, error)
	ClaimDeadLetter(context.Context, string) error
	PushDue(ctx context.Context, id string, gen int, until int64) error
	ParkDelivery(ctx context.Context, id string, p store.Park) error
	TakeProbe(ctx context.Context, accountID, endpointID string, until int64) error
	MarkDeadLettered(ctx context.Context, id string, gen int) error
	GetDelivery(ctx context.Context, id string) (domain.Delivery, error)
	GetEndpoint(ctx context.Context, accountID, id string) (domain.Endpoint, error)
	Restart(ctx context.Context, id, endpointID string, gen int) (domain.Delivery, error)
	ClaimManual(context.Context, domain.Delivery, domain.Attempt, store.Claim) error
	FinishManual(context.Context, domain.Delivery, *domain.Endpoint, store.Claim, domain.Attempt, store.Outcome) error
}

// Queue is what the worker needs of SQS.
type Queue interface {
	Send(context.Context, queue.Message, time.Duration) error
	Hide(ctx context.Context, receipt string, d time.Duration) error
	DeadLetter(context.Context, queue.Message) error
	DeadLetterRaw(ctx context.Context, body, reason string) error
}

// Limiter reserves the account's rate-limit slots, and takes back one that
// will not be used.
type Limiter interface {
	Reserve(ctx context.Context, account string, n int, perSecond float64) (ratelimit.Reservation, error)
	Refund(ctx context.Context, account string, r ratelimit.Reservation) error
}

// Sender makes one HTTP attempt.
type Sender interface {
	Send(context.Context, sender.Request) sender.Result
}

// Tunables with their reasons.
const (
	// A message whose rate-limit slot is this close waits in the worker
	// instead of going back to the queue (a second receive costs more).
	maxWaitInWorker = time.Second
	// A message carrying its booked slot claims this much before it (a
	// claim write takes a few ms, tens on a loaded machine), so that the
	// POST leaves at the slot rather than a claim's latency after it.
	claimAhead = 50 * time.Millisecond
	// A message carrying a slot booked with ratelimit.Lead (ingest's, or a
	// put-back's) arrives up to this early, by design (SQS delays are whole
	// seconds): it waits for its slot in the worker. Earlier, it goes back.
	maxEarly = ratelimit.MaxEarly
	// A slot missed by more than this is given up and a new one reserved.
	// Slots are booked ahead of the pipeline (ratelimit.Lead), so a pipeline
	// within the lead misses none, and one behind it for some messages (one
	// in five 1-4 s late) still keeps a receiver's busiest second within the
	// README's 10 % + 1 (TestRateBoundAtTheReceiver). A tighter tolerance
	// (100 ms) also held it when the whole pipeline stalls, but re-booked most
	// slots when the DynamoDB emulator was saturated and made the chaos run
	// drain eight times slower: re-booking feeds the load that makes slots
	// late (docs/lifecycle.md "Rate slots").
	slotTolerance = time.Second
	// Back-off for a message that found the endpoint at its in-flight cap.
	capBackoffMin, capBackoffMax = time.Second, 30 * time.Second
	// A system error (DynamoDB or SQS unavailable) retries the message soon;
	// if it keeps failing, SQS's maxReceiveCount moves it to the DLQ.
	systemErrorBackoff = 10 * time.Second
	// A transient failure of the outcome write (a transaction conflict,
	// throttling, a timeout) is retried this many times, while the lease
	// lasts: giving up means the next claim logs the attempt as interrupted
	// and POSTs it again.
	recordTries = 5
)

// Worker handles the delivery queue's batches.
type Worker struct {
	Store        Store
	Queue        Queue
	Limiter      Limiter
	Sender       Sender
	Schedule     retry.Schedule
	MaxInFlight  int           // per endpoint; 0: no cap
	DisableAfter time.Duration // disable an endpoint failing for this long; 0: never
	SweepGrace   time.Duration // the sweeper's grace: deferrals longer than half of it move the due time
	// ParkAfter: a wait longer than this is parked in the table for the
	// scheduler instead of sent back delayed; 0 or more than SQS's delay
	// limit: queue.MaxDelay (15 min).
	ParkAfter time.Duration
	// BreakerOff turns the per-endpoint circuit breaker off (BREAKER=off).
	BreakerOff bool
	LeaseFor   time.Duration // how long a claim holds an attempt; must outlast the HTTP timeout
	// AttemptTimeout is the HTTP timeout of one attempt (DELIVERY_TIMEOUT):
	// the deadline of a delivery held by its endpoint's breaker
	// (lifecycle.Deadline) counts one per attempt.
	AttemptTimeout time.Duration
	Log            *slog.Logger
	Metrics        *obs.Metrics
	Now            func() time.Time

	local handoffs // endpoint slots handed over between this process's claims (handoff.go)
}

// Handle is the SQS event source handler: it processes the batch's messages
// concurrently and reports the ones to put back as batch item failures.
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	m := w.Metrics.Batch()
	defer m.Flush()
	var mu sync.Mutex
	var resp events.SQSEventResponse
	var wg sync.WaitGroup
	for _, rec := range ev.Records {
		wg.Add(1)
		go func(rec events.SQSMessage) {
			defer wg.Done()
			if !w.handleOne(ctx, rec, m) {
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
				mu.Unlock()
			}
		}(rec)
	}
	wg.Wait()
	return resp, nil
}

// step is what processing a message came to.
type step struct {
	later      time.Duration // > 0: put the message back for this long
	err        error         // a system error: let SQS redeliver it
	retryIn    time.Duration // with err: when SQS should redeliver it (0: systemErrorBackoff)
	quarantine string        // the message does not match its delivery: to the DLQ as it is, for a human
	// unslot: the rate slot the message carries was given back (refund);
	// the message goes back without it, so that it cannot be used twice.
	unslot bool
}

var done = step{}

func later(d time.Duration) step { return step{later: max(d, time.Second)} }

// handleOne processes one message and reports whether it is finished (and
// may be deleted).
func (w *Worker) handleOne(ctx context.Context, rec events.SQSMessage, m *obs.Batch) bool {
	msg, err := queue.Decode(rec.Body)
	if err != nil {
		// Not ours or corrupted: keep it for a human, not in the retry loop.
		w.Log.Error("malformed message moved to the DLQ", "message_id", rec.MessageId)
		if err := w.Queue.DeadLetterRaw(ctx, rec.Body, "malformed_message"); err != nil {
			w.Log.Error("dead-letter malformed message", "message_id", rec.MessageId, "error", err)
			return false
		}
		return true
	}
	var s step
	switch msg.Kind {
	case queue.KindDeadLetter:
		s = w.restartFromDeadLetter(ctx, msg)
	case queue.KindResend:
		s = w.resend(ctx, msg, receiveCount(rec), m)
	default:
		s = w.process(ctx, msg, receiveCount(rec), m)
	}
	log := w.Log.With("delivery_id", msg.DeliveryID, "message_id", rec.MessageId, "hops", msg.Hops)
	switch {
	case s.quarantine != "":
		log.Error("message refused: it does not match its delivery; moved to the DLQ for a human", "why", s.quarantine,
			"account_id", msg.AccountID, "endpoint_id", msg.EndpointID, "event_id", msg.EventID)
		if err := w.Queue.DeadLetterRaw(ctx, rec.Body, ReasonMismatch); err != nil {
			log.Error("dead-letter mismatched message", "error", err)
			return false
		}
		return true
	case s.err != nil:
		log.Error("message failed; SQS will redeliver it", "error", s.err)
		hide := systemErrorBackoff
		if s.retryIn > 0 {
			hide = s.retryIn
		}
		_ = w.Queue.Hide(ctx, rec.ReceiptHandle, hide)
		return false
	case s.later > 0:
		if s.unslot {
			msg.SlotAt, msg.SlotFor, msg.SlotIvl = 0, 0, 0
		}
		return w.putBack(ctx, rec, msg, s.later, log)
	}
	return true
}

// putBack makes the message come back after d without keeping it in
// flight (waitFor); the received copy is then finished. Only when that fails
// (SQS or DynamoDB unavailable) is the received copy hidden for the short
// system-error backoff and left to SQS.
func (w *Worker) putBack(ctx context.Context, rec events.SQSMessage, msg queue.Message, d time.Duration, log *slog.Logger) bool {
	if s := w.waitFor(ctx, msg, w.Now().Add(d)); s.err != nil {
		log.Error("could not put the message back; SQS will redeliver it", "error", s.err)
		_ = w.Queue.Hide(ctx, rec.ReceiptHandle, systemErrorBackoff)
		return false
	}
	return true
}

// waitFor makes msg come back at until and parks nothing in flight (design
// BC, docs/scale.md): a wait up to ParkAfter (at most SQS's 15-minute delay)
// is a fresh copy of the message sent with that delay; a longer wait of a
// delivery's own message is parked in the table (store.Park: its due time,
// its slot) and the scheduler sends it again, delayed to until exactly. A
// manual resend's message is not the delivery's, so a long wait of one
// hops in delayed copies instead. On success the caller finishes the
// received copy (done): if the process dies before that, the received copy
// comes back after the visibility timeout and finds the same decision (a
// second copy of one generation never makes a second attempt: the claim
// decides), and a parked delivery's due time is in the sweep index.
func (w *Worker) waitFor(ctx context.Context, msg queue.Message, until time.Time) step {
	wait := until.Sub(w.Now())
	msg.Deferred++
	msg.Hops++
	if lifecycle.HowToWait(wait, w.parkAfter(), msg.Kind == queue.KindResend) == lifecycle.WaitDelayed {
		if err := w.Queue.Send(ctx, msg, min(wait, w.parkAfter())); err != nil {
			return step{err: err}
		}
		return done
	}
	err := w.Store.ParkDelivery(ctx, msg.DeliveryID, store.Park{Until: domain.Millis(until), Gen: msg.Gen,
		SlotAt: msg.SlotAt, SlotFor: msg.SlotFor, Deferred: msg.Deferred})
	switch {
	case errors.Is(err, store.ErrConflict):
		w.Log.Debug("message superseded while parking it; dropped", "delivery_id", msg.DeliveryID, "gen", msg.Gen)
	case errors.Is(err, store.ErrOutlives):
		return w.expire(ctx, msg)
	case err != nil:
		return step{err: err}
	}
	return done
}

// expire fails a delivery whose wait would outlive its item (a rate backlog
// longer than the retention) as event_expired, and dead-letters it, rather
// than leave it to vanish with the item.
func (w *Worker) expire(ctx context.Context, msg queue.Message) step {
	d, err := w.Store.GetDelivery(ctx, msg.DeliveryID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return done
	case err != nil:
		return step{err: err}
	}
	m := w.Metrics.Batch()
	defer m.Flush()
	return w.fail(ctx, d, domain.ReasonEventExpired, m, w.Log.With("delivery_id", d.ID, "why", "its wait would outlive the item"))
}

func (w *Worker) parkAfter() time.Duration {
	if w.ParkAfter <= 0 || w.ParkAfter > queue.MaxDelay {
		return queue.MaxDelay
	}
	return w.ParkAfter
}

func receiveCount(rec events.SQSMessage) int {
	n, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	return max(n, 1)
}

// ReasonMismatch is the DLQ reason of a message refused because the ids it
// carries do not match its delivery's.
const ReasonMismatch = "message_mismatch"

func lifecycleMessage(msg queue.Message) lifecycle.Message {
	return lifecycle.Message{DeliveryID: msg.DeliveryID, AccountID: msg.AccountID, EndpointID: msg.EndpointID, EventID: msg.EventID, Gen: msg.Gen}
}

// process runs one message of kind deliver: lifecycle.Decide decides, this
// carries it out.
func (w *Worker) process(ctx context.Context, msg queue.Message, received int, m *obs.Batch) step {
	now := w.Now()
	if s, early := tooEarly(msg, now); early {
		return s
	}
	snap, err := w.Store.LoadForAttempt(ctx, store.Ref{DeliveryID: msg.DeliveryID, AccountID: msg.AccountID, EndpointID: msg.EndpointID, EventID: msg.EventID})
	if err != nil {
		return step{err: err}
	}
	d := snap.Delivery
	log := w.Log.With("delivery_id", msg.DeliveryID, "event_id", msg.EventID, "endpoint_id", msg.EndpointID, "account_id", msg.AccountID)
	act := lifecycle.Decide(lifecycle.Input{Msg: lifecycleMessage(msg), Delivery: d, Endpoint: snap.Endpoint, Event: snap.Event,
		Now: now, MaxAttempts: w.Schedule.MaxAttempts(), Deadline: w.deadline(d)})
	switch act.Verb {
	case lifecycle.Quarantine:
		return step{quarantine: act.Why}
	case lifecycle.Drop:
		log.Debug("message dropped", "why", act.Why)
		return done
	case lifecycle.DeadLetter:
		// Its DLQ message was never sent (the sender died): send it, unless
		// someone else is doing so right now.
		return w.deadLetter(ctx, *d, false, m, log)
	case lifecycle.Wait:
		if act.Deferral {
			m.Count(obs.MetricEndpointDeferrals, 1)
			w.keepDue(ctx, *d, act.Until, log)
			if _, booked := bookedSlot(msg, *d, now); booked {
				w.refund(ctx, d.AccountID, carried(msg), log) // the endpoint's wait costs the account no rate
				return unslotted(later(act.Until.Sub(now)))
			}
		}
		return later(act.Until.Sub(now))
	case lifecycle.Fail:
		return w.fail(ctx, *d, act.Reason, m, log)
	}
	if s, ok := w.takeProbe(ctx, act, snap.Endpoint, now, log); !ok {
		return s
	}
	deferrals := received + msg.Deferred
	// The booked slot is checked against the clock as the claim is made,
	// not as the message arrived: a slow snapshot read (a loaded DynamoDB)
	// must not make a slot late past slotTolerance and still be used.
	_, booked := bookedSlot(msg, *d, w.Now())
	slot := ratelimit.Reservation{}
	if booked {
		slot = carried(msg)
	}
	if _, free := w.freeSlot(snap.Endpoint, now); !free && !w.local.holds(endpointKey(snap.Endpoint)) {
		// Every slot held elsewhere: nothing to wait for here.
		return w.capDeferral(ctx, *d, deferrals, now, slot, m, log)
	}
	if !booked {
		// A new slot is needed (a retry, or the booked one was missed): it
		// is booked before the claim, so that a far slot sends the message
		// back carrying it with no claim to give back (a claim given back
		// whose write failed would have counted an attempt that never left).
		var s step
		var ok bool
		if slot, s, ok = w.rateSlot(ctx, msg, false, *d, true, m); !ok {
			return s
		}
	}
	// An endpoint with a rate of its own books a slot of it too (endpointrate.go).
	sendAt, s, ok := w.endpointSlot(ctx, msg, *d, snap.Endpoint, slot, m, log)
	if !ok {
		return s
	}
	// Wait for the slot before the claim, which holds one of the endpoint's
	// in-flight slots that must not sit idle meanwhile. (Claiming ahead of
	// the slot was tried: at 20/s with the cap of 5 the held slots ran out
	// and the burst drained at half the rate.)
	if err := sleepUntil(ctx, sendAt.Add(-claimAhead)); err != nil {
		w.refund(ctx, d.AccountID, slot, log)
		return step{err: err}
	}
	claimed, claim, s := w.claim(ctx, snap, deferrals, slot, m, log)
	if claim == nil {
		return s
	}
	defer w.unhold(snap.Endpoint, *claim)
	return w.onSlot(ctx, snap, claimed, *claim, sendAt, m, log)
}

// carried is the rate slot a message carries.
func carried(msg queue.Message) ratelimit.Reservation {
	return ratelimit.Reservation{First: time.UnixMilli(msg.SlotAt), Interval: time.Duration(msg.SlotIvl) * time.Millisecond}
}

// refund gives a rate slot booked for an attempt that will not go at it
// back to the account (Limiter.Refund: only while it is the last one
// booked); a failed refund costs only rate.
func (w *Worker) refund(ctx context.Context, account string, slot ratelimit.Reservation, log *slog.Logger) {
	if err := w.Limiter.Refund(context.WithoutCancel(ctx), account, slot); err != nil {
		log.Warn("could not give an unused rate slot back", "error", err)
	}
}

// onSlot makes the claimed attempt at its rate slot sendAt: the POST never
// leaves before it. (It is not booked again when the claim itself made it
// late: on a loaded machine that turned a slow claim write into a storm of
// re-reservations and cap deferrals, and a burst drained at a fifth of the
// rate; see docs/lifecycle.md "Rate slots".)
func (w *Worker) onSlot(ctx context.Context, snap store.Snapshot, claimed domain.Delivery, claim store.Claim, sendAt time.Time, m *obs.Batch, log *slog.Logger) step {
	if err := w.stayOnSlot(ctx, sendAt); err != nil {
		return step{err: err} // the lease runs out and the next claim logs this one as interrupted
	}
	return w.post(ctx, snap, claimed, claim, m, log)
}

// tooEarly: the message came back more than maxEarly before the slot it
// carries (booked with the lead, by ingest, a resend or a put-back): it goes
// back again, delayed by the same rule to reach a worker before the slot.
func tooEarly(msg queue.Message, now time.Time) (step, bool) {
	slotAt := time.UnixMilli(msg.SlotAt)
	if msg.SlotAt == 0 || slotAt.Sub(now) <= maxEarly {
		return done, false
	}
	return later(ratelimit.Delay(slotAt, now, ratelimit.Lead)), true
}

// bookedSlot is the rate slot the message carries, when it was booked for
// this attempt and is not missed by more than slotTolerance (a slot later
// than that would leave bunched with the slots after it: a new one is
// reserved instead).
func bookedSlot(msg queue.Message, d domain.Delivery, now time.Time) (time.Time, bool) {
	slotAt := time.UnixMilli(msg.SlotAt)
	return slotAt, msg.SlotAt != 0 && msg.SlotFor == d.Attempts && usableSlot(slotAt, now)
}

// usableSlot is the rule for a slot booked earlier: one missed by up to
// slotTolerance is still used.
func usableSlot(slotAt, now time.Time) bool { return now.Sub(slotAt) <= slotTolerance }

// capDeferral puts a message back that found the endpoint at its in-flight
// cap. The rate slot booked for this attempt (if any) is given back when it
// can be: a deferral costs its account no rate.
func (w *Worker) capDeferral(ctx context.Context, d domain.Delivery, deferrals int, now time.Time, slot ratelimit.Reservation, m *obs.Batch, log *slog.Logger) step {
	w.refund(ctx, d.AccountID, slot, log)
	wait := capBackoff(deferrals)
	m.Count(obs.MetricEndpointDeferrals, 1)
	w.keepDue(ctx, d, now.Add(wait), log)
	return unslotted(later(wait))
}

// unslotted is s, for a message whose rate slot was given back.
func unslotted(s step) step {
	s.unslot = true
	return s
}

// deadline is when d's series must have ended (lifecycle.Deadline).
func (w *Worker) deadline(d *domain.Delivery) time.Time {
	if d == nil {
		return time.Time{}
	}
	return lifecycle.Deadline(*d, w.Schedule, w.AttemptTimeout)
}

// takeProbe carries out a Probe decision: the endpoint's breaker is
// half-open, and one worker may send the probe. The conditional write on
// the endpoint decides who; the others wait for the probe's answer (held no
// longer than a lease). ok is false when the message must not go on now.
func (w *Worker) takeProbe(ctx context.Context, act lifecycle.Action, ep *domain.Endpoint, now time.Time, log *slog.Logger) (step, bool) {
	if !act.Probe || w.BreakerOff {
		return done, true
	}
	switch err := w.Store.TakeProbe(ctx, ep.AccountID, ep.ID, domain.Millis(now.Add(w.LeaseFor))); {
	case errors.Is(err, store.ErrConflict):
		return later(time.Second), false // another worker probes: look again shortly (then Decide waits for it)
	case err != nil:
		return step{err: err}, false
	}
	log.Info("breaker half-open: this attempt is the probe")
	return done, true
}

// breakerAfter is what an automatic attempt's answer does to its
// endpoint's breaker (ep as read before the attempt).
func (w *Worker) breakerAfter(ep domain.Endpoint, r retry.Result, at time.Time, log *slog.Logger) lifecycle.BreakerChange {
	if w.BreakerOff {
		return lifecycle.BreakerChange{}
	}
	probe := lifecycle.BreakerOf(ep, at) == lifecycle.BreakerHalfOpen
	c := lifecycle.BreakerAfterAttempt(ep, r, probe, w.Now(), nil)
	switch c.On {
	case lifecycle.BreakerTripped, lifecycle.BreakerProbeBad:
		log.Warn("endpoint breaker open: no attempts until its probe", "breaker", c.On, "open_until", time.UnixMilli(c.OpenUntil).UTC())
	case lifecycle.BreakerProbeOK:
		log.Info("endpoint breaker closed: the probe was answered")
	}
	return c
}

// endpointChanged reports whether the endpoint was disabled, deleted or
// given a new URL since it was read; the message then looks again shortly.
// It runs alongside every claim (claim): the claim writes only the delivery (and,
// with the cap, the endpoint's slot item), so this strongly consistent read
// is what sees a PATCH (disabled, new URL) answered before this point.
func (w *Worker) endpointChanged(ctx context.Context, seen *domain.Endpoint, log *slog.Logger) (step, bool) {
	now, err := w.Store.GetEndpoint(ctx, seen.AccountID, seen.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return step{err: err}, true
	case !now.Disabled && now.URL == seen.URL:
		return done, false
	}
	log.Info("endpoint changed before the claim; looking again")
	return later(time.Second), true
}

// rateSlot finds when this attempt may go under the account's rate: the
// slot the message carries, if it was reserved for this attempt (forThis)
// and has not been missed, or a new one, booked before any claim. A slot
// more than maxWaitInWorker away sends the message back carrying it (one
// more receive, no further reservation); a nearer one is returned for the
// worker to wait for. ok is false when the message must not go on now. auto: the message is the delivery's own, so a far slot moves its
// due time (a resend's slot must not move the automatic series').
func (w *Worker) rateSlot(ctx context.Context, msg queue.Message, forThis bool, d domain.Delivery, auto bool, m *obs.Batch) (ratelimit.Reservation, step, bool) {
	now := w.Now()
	if msg.SlotAt != 0 && forThis && usableSlot(time.UnixMilli(msg.SlotAt), now) {
		return carried(msg), done, true
	}
	res, err := w.Limiter.Reserve(ctx, d.AccountID, 1, 0)
	if err != nil {
		return res, step{err: err}, false
	}
	if wait := res.First.Sub(now); wait > maxWaitInWorker {
		m.Count(obs.MetricRateLimitDeferrals, 1)
		if auto {
			w.keepDue(ctx, d, res.First, w.Log.With("delivery_id", d.ID))
		}
		next := msg
		next.SlotAt, next.SlotFor, next.SlotIvl = domain.Millis(res.First), d.Attempts, res.Interval.Milliseconds()
		next.Deferred-- // waitFor counts put-backs; a far slot is not one
		// Back a lead before the slot (SQS delays are whole seconds), to wait
		// for it in the worker.
		if s := w.waitFor(ctx, next, now.Add(ratelimit.Delay(res.First, now, ratelimit.Lead))); s.err != nil {
			return res, s, false
		}
		return res, done, false
	}
	return res, done, true
}

// yield gives a claim that made no request back (store.YieldClaim), trying
// a transient failure again while the lease lasts: a claim left held would
// make the next one log an attempt that never left as interrupted. A claim
// lost meanwhile is the new owner's. Its endpoint slot goes to the oldest
// message here waiting for one (handoff.go), or is freed.
func (w *Worker) yield(ctx context.Context, ep *domain.Endpoint, seen, claimed domain.Delivery, c store.Claim, log *slog.Logger) error {
	if c.Slot != "" && w.local.handOff(endpointKey(ep), c.Slot, c.ID) {
		c.Slot = "" // a message here waiting for a slot takes it over from this claim: not ours to free
	}
	return w.whileLeased(ctx, c.LeaseUntil, log, func(ctx context.Context, _ int) (bool, error) {
		switch err := w.Store.YieldClaim(ctx, seen, claimed, c); {
		case err == nil, errors.Is(err, store.ErrConflict):
			return true, nil
		default:
			return false, err
		}
	})
}

// keepDue tells the sweeper that a deferred delivery is not stuck: when it
// will come back more than half the sweep grace after its due time, the due
// time moves to then (one conditional write). Otherwise the sweeper would
// re-queue it and so supersede the very message that is waiting, and a
// long rate-limit backlog would keep being re-queued.
func (w *Worker) keepDue(ctx context.Context, d domain.Delivery, until time.Time, log *slog.Logger) {
	if w.SweepGrace <= 0 || until.Sub(time.UnixMilli(d.DueAt)) <= w.SweepGrace/2 {
		return
	}
	if err := w.Store.PushDue(ctx, d.ID, d.Gen, domain.Millis(until)); err != nil && !errors.Is(err, store.ErrConflict) {
		log.Warn("could not move the due time; the sweeper may re-queue this delivery", "error", err)
	}
}

func sleepUntil(ctx context.Context, t time.Time) error {
	wait := time.Until(t)
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// freeSlot is one of the endpoint's in-flight slots that nobody held as read
// (the claim's conditional write decides). "" with ok when there is no cap.
func (w *Worker) freeSlot(ep *domain.Endpoint, now time.Time) (string, bool) {
	if w.MaxInFlight <= 0 {
		return "", true
	}
	if free := w.freeSlots(ep, now, nil); len(free) > 0 {
		return free[0], true
	}
	return "", false
}

// freeSlots lists the endpoint's in-flight slots that nobody held as read,
// except skip, from a random one on (spreading concurrent workers over the
// slots). None when there is no cap.
func (w *Worker) freeSlots(ep *domain.Endpoint, now time.Time, skip map[string]bool) []string {
	var free []string
	start := rand.IntN(max(w.MaxInFlight, 1))
	for i := 0; i < w.MaxInFlight; i++ {
		k := strconv.Itoa((start + i) % w.MaxInFlight)
		if l, held := ep.Leases[k]; !skip[k] && (!held || l.Until < domain.Millis(now)) {
			free = append(free, k)
		}
	}
	return free
}

func capBackoff(deferrals int) time.Duration {
	d := capBackoffMin << min(max(deferrals-1, 0), 5)
	d = min(d, capBackoffMax)
	return d + time.Duration(rand.Int64N(int64(d/4)+1))
}

// claim takes the delivery's next attempt (store.ClaimAttempt) on an
// endpoint slot seen free, or one handed over by a claim of this process
// (handoff.go) when every slot is held. The endpoint is read again as the
// claim is made, and again after a wait for a handoff (endpointChanged),
// the read and the claim at the same time, so that it costs no round trip
// of its own: if the endpoint changed, the claim is given back and no POST
// follows. The claim is nil when it was not taken, with the step to take then.
func (w *Worker) claim(ctx context.Context, snap store.Snapshot, deferrals int, rate ratelimit.Reservation, m *obs.Batch, log *slog.Logger) (domain.Delivery, *store.Claim, step) {
	d, ep := *snap.Delivery, snap.Endpoint
	claim := store.Claim{ID: domain.NewID("clm"), AttemptID: domain.NewID("att"), URL: ep.URL}
	// The previous attempt's worker died after claiming it: log it, under
	// the id it would have sent (the receiver may have seen it).
	claim.Interrupted = lifecycle.Interrupted(d, domain.NewID("att"))
	waitUntil := w.Now().Add(capWait)
	checked := false
	for tried := map[string]bool{}; ; {
		now := w.Now()
		var slot, from string
		free := w.MaxInFlight <= 0
		if !free {
			// A slot seen free that no claim here holds or is taking (the
			// messages of a batch read the same slots free at once).
			slot, free = w.local.takeFree(endpointKey(ep), w.freeSlots(ep, now, tried))
		}
		if !free {
			got, ok := w.local.await(ctx, endpointKey(ep), 2*w.MaxInFlight, waitUntil)
			if !ok {
				// Like any put-back, keep the due time ahead of the sweeper
				// (many such short waits in a row add up to its grace).
				return d, nil, w.capDeferral(ctx, d, deferrals, now, rate, m, log)
			}
			slot, from, checked = got.slot, got.from, false
			w.local.hold(endpointKey(ep), slot)
		}
		claim.From = from
		var check chan step // the endpoint read again, alongside the claim: nil when done already
		if !checked {
			check, checked = w.endpointCheck(ctx, ep, log), true
		}
		claim.Slot, claim.LeaseUntil = slot, domain.Millis(w.Now().Add(w.LeaseFor))
		claimed, err := w.takeClaim(ctx, d, ep, claim)
		if check != nil {
			if s, changed := <-check; changed {
				w.unclaim(ctx, ep, d, claimed, claim, err, log)
				w.refund(ctx, d.AccountID, rate, log) // no POST goes at its rate slot
				return d, nil, unslotted(s)
			}
		}
		switch {
		case errors.Is(err, store.ErrSlotTaken):
			tried[slot] = true // another worker took it a moment ago: try the others seen free
			continue
		case errors.Is(err, store.ErrConflict):
			// Changed under us: look again shortly, the due time kept ahead.
			w.keepDue(ctx, d, w.Now().Add(time.Second), log)
			return d, nil, later(time.Second)
		case err != nil:
			return d, nil, step{err: err}
		}
		return claimed, &claim, done
	}
}

// unhold ends the local hold a claim with a slot took (claim).
func (w *Worker) unhold(ep *domain.Endpoint, c store.Claim) {
	if c.Slot != "" {
		w.local.release(endpointKey(ep), c.Slot)
	}
}

// endpointCheck reads the endpoint again (endpointChanged) while the claim
// is written; the channel gives the step to take if it changed, and is
// closed when it did not.
func (w *Worker) endpointCheck(ctx context.Context, ep *domain.Endpoint, log *slog.Logger) chan step {
	check := make(chan step, 1)
	go func() {
		if s, changed := w.endpointChanged(ctx, ep, log); changed {
			check <- s
		}
		close(check)
	}()
	return check
}

// takeClaim writes the claim. A claim with a slot is counted as a local
// hold of the slot from before the write (claim: takeFree, or hold for a
// slot handed over), so that a message here losing the race for that slot
// finds a holder to wait for, and another message here picks another slot;
// unhold ends it (here, when the claim was not taken).
func (w *Worker) takeClaim(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, c store.Claim) (domain.Delivery, error) {
	claimed, err := w.Store.ClaimAttempt(ctx, d, c)
	if err != nil {
		w.unhold(ep, c)
	}
	return claimed, err
}

// unclaim undoes a claim whose endpoint changed while it was made (err:
// the claim's own outcome): a claim taken is given back (YieldClaim, its
// slot freed, its local hold ended), a slot handed over and not taken is
// passed on; a claim that failed otherwise left nothing behind.
func (w *Worker) unclaim(ctx context.Context, ep *domain.Endpoint, seen, claimed domain.Delivery, c store.Claim, err error, log *slog.Logger) {
	switch {
	case err == nil:
		w.unhold(ep, c)
		if yerr := w.yield(ctx, ep, seen, claimed, c, log); yerr != nil {
			log.Warn("could not give the claim back; the next claim logs it as interrupted", "error", yerr)
		}
	case errors.Is(err, store.ErrSlotTaken):
		w.passOn(ctx, ep, c.Slot, c.From)
	}
}

// passOn gives a slot handed over but not used to the next waiter, or frees it.
func (w *Worker) passOn(ctx context.Context, ep *domain.Endpoint, slot, from string) {
	if from != "" && !w.local.handOff(endpointKey(ep), slot, from) {
		w.Store.FreeSlot(ctx, ep.ID, slot, from)
	}
}

// settings are the endpoint's effective settings (endpointcfg.Resolve). The
// account's rate is not needed here: its slot is booked by its stored rate.
func (w *Worker) settings(ep *domain.Endpoint) endpointcfg.Effective {
	return endpointcfg.Resolve(*ep, domain.Account{}, endpointcfg.Defaults{Timeout: w.AttemptTimeout})
}

func endpointKey(ep *domain.Endpoint) string { return ep.AccountID + "/" + ep.ID }

// post makes the claimed attempt (now: its rate slot has come), records
// it and settles the delivery.
func (w *Worker) post(ctx context.Context, snap store.Snapshot, claimed domain.Delivery, claim store.Claim, m *obs.Batch, log *slog.Logger) step {
	d, ep, ev := *snap.Delivery, snap.Endpoint, snap.Event
	now := w.Now()
	a := domain.Attempt{ID: claim.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptAuto, Series: d.Series, Number: claimed.Attempts, ExpiresAt: d.ExpiresAt}
	cfg := w.settings(ep)
	res := w.Sender.Send(ctx, sender.Request{
		URL: ep.URL, Body: ev.Body, Secrets: ep.SigningSecrets(domain.Millis(w.Now())), V1aKeys: ep.V1aKeys(domain.Millis(w.Now())), OmitV1: !ep.SignsV1(),
		EventType: ev.Type, EventID: ev.ID, DeliveryID: d.ID, AttemptID: a.ID, AttemptNum: claimed.Attempts,
		Timeout: cfg.Timeout, Headers: cfg.Headers,
	})
	if claim.Slot != "" && w.local.handOff(endpointKey(ep), claim.Slot, claim.ID) {
		claim.Slot = "" // answered: the slot is a waiter's now, not ours to free
		m.Count(obs.MetricSlotHandoffs, 1)
	}
	fillAttempt(&a, res)
	verdict := retry.Classify(res.Result)
	o := lifecycle.Settle(claimed, lifecycle.Answer{Result: res.Result, Verdict: verdict}, w.Now(), w.Schedule, nil)
	o.Breaker = w.breakerAfter(*ep, res.Result, now, log)
	if !o.Healthy && !o.GiveBack && o.DisableEndpoint == "" && w.DisableAfter > 0 && ep.FailingSince != 0 && now.Sub(time.UnixMilli(ep.FailingSince)) >= w.DisableAfter {
		o.DisableEndpoint = "failing without a success since " + time.UnixMilli(ep.FailingSince).UTC().Format(time.RFC3339)
		log.Warn("endpoint disabled: failing for too long", "failing_since", time.UnixMilli(ep.FailingSince).UTC())
	}
	a.Outcome = lifecycle.LogOutcome(verdict, o)

	log = log.With("attempt", claimed.Attempts, "status", res.StatusCode, "error_class", res.ErrorClass,
		"duration_ms", res.Duration.Milliseconds(), "outcome", o.Status, "verdict", verdict.String())
	m.Count(obs.MetricAttempts, 1)
	m.Observe(obs.MetricAttemptDuration, res.Duration)
	if err := w.record(ctx, claimed, ep, claim, a, o, log); err != nil {
		if errors.Is(err, store.ErrConflict) {
			log.Warn("attempt made but its claim was lost (lease expired); the new owner carries on")
			return done
		}
		return step{err: err}
	}
	switch o.Status {
	case domain.StatusDelivered:
		log.Info("delivered")
		m.Count(obs.MetricDelivered, 1)
		m.Observe(obs.MetricTimeToDeliver, w.Now().Sub(time.UnixMilli(d.CreatedAt)))
		return done
	case domain.StatusPending:
		log.Info("attempt failed; retry scheduled", "next_attempt_at", time.UnixMilli(o.NextAttemptAt).UTC())
		m.Count(obs.MetricAttemptsFailed, 1)
		return later(time.UnixMilli(o.NextAttemptAt).Sub(w.Now()))
	}
	log.Warn("delivery failed for good", "reason", o.FailReason)
	failed := claimed
	failed.Status, failed.FailReason, failed.FailedAt = domain.StatusFailed, o.FailReason, domain.Millis(w.Now())
	failed.LastStatus, failed.LastError = a.StatusCode, a.ErrorClass
	return w.deadLetter(ctx, failed, true, m, log)
}

// stayOnSlot runs after the claim, right before the POST: a POST never
// leaves before its rate-limit slot.
func (w *Worker) stayOnSlot(ctx context.Context, sendAt time.Time) error {
	return sleepUntil(ctx, sendAt)
}

// record writes an attempt's outcome, retrying a transient failure: the
// POST is made, so giving up would make the next claim send it again. A
// failed write may still have been applied (a timeout), so before each retry
// the delivery is read: lifecycle.RecordCheck says whether our write is
// there, still ours to make, or lost to a new owner.
func (w *Worker) record(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, c store.Claim, a domain.Attempt, o store.Outcome, log *slog.Logger) error {
	return w.whileLeased(ctx, c.LeaseUntil, log, func(ctx context.Context, try int) (bool, error) {
		if try > 1 {
			cur, gerr := w.Store.GetDelivery(ctx, d.ID)
			if gerr == nil || errors.Is(gerr, store.ErrNotFound) {
				var seen *domain.Delivery
				if gerr == nil {
					seen = &cur
				}
				switch lifecycle.CheckRecord(seen, c.ID, a.ID) {
				case lifecycle.RecordDone:
					return true, nil
				case lifecycle.RecordLost:
					return true, store.ErrConflict
				}
			}
		}
		err := w.Store.RecordAttempt(ctx, d, ep, c, a, o)
		return err == nil || errors.Is(err, store.ErrConflict), err
	})
}

// whileLeased makes a write of a claim's end (write's try-th; stop: its
// result is final) again after a transient failure, up to recordTries times
// and while the claim's lease lasts: giving up means the next receive takes
// the claim over (and, after a POST, sends it again). It runs without the
// invocation's cancellation: the claim's end is written even as it ends.
func (w *Worker) whileLeased(ctx context.Context, leaseUntil int64, log *slog.Logger, write func(ctx context.Context, try int) (stop bool, err error)) error {
	ctx = context.WithoutCancel(ctx)
	for try := 1; ; try++ {
		stop, err := write(ctx, try)
		if stop || try == recordTries || w.Now().Add(recordBackoff(try)).UnixMilli() >= leaseUntil {
			return err
		}
		log.Warn("ending the claim failed; trying again", "error", err, "try", try)
		_ = sleepUntil(ctx, time.Now().Add(recordBackoff(try)))
	}
}

func recordBackoff(try int) time.Duration { return 100 * time.Millisecond << min(try, 4) }

func fillAttempt(a *domain.Attempt, res sender.Result) {
	a.StartedAt = domain.Millis(res.StartedAt)
	a.DurationMs = res.Duration.Milliseconds()
	a.StatusCode, a.ErrorClass, a.Error = res.StatusCode, res.ErrorClass, res.Error
	a.ResponseBody, a.ResponseTruncated = res.ResponseBody, res.ResponseTruncated
}

// fail ends a delivery that cannot be attempted, and dead-letters it.
func (w *Worker) fail(ctx context.Context, d domain.Delivery, reason domain.FailReason, m *obs.Batch, log *slog.Logger) step {
	failed, err := w.Store.FailWithoutAttempt(ctx, d, reason, true)
	if errors.Is(err, store.ErrConflict) {
		return later(time.Second)
	}
	if err != nil {
		return step{err: err}
	}
	log.Warn("delivery failed for good", "reason", reason)
	return w.deadLetter(ctx, failed, true, m, log)
}

// deadLetter carries out SendDeadLetter; claimHeld when the caller wrote the
// failure (and so holds the DLQ claim).
func (w *Worker) deadLetter(ctx context.Context, d domain.Delivery, claimHeld bool, m *obs.Batch, log *slog.Logger) step {
	switch err := SendDeadLetter(ctx, w.Store, w.Queue, d, claimHeld); {
	case errors.Is(err, store.ErrConflict):
		return done // someone else is sending it, or it was sent
	case errors.Is(err, ErrNotMarked):
		m.Count(obs.MetricDeadLettered, 1)
		log.Error("DLQ message sent but not marked; it may be sent again", "error", err)
		return done
	case err != nil:
		return step{err: err}
	}
	m.Count(obs.MetricDeadLettered, 1)
	return done
}

// restartFromDeadLetter handles a DLQ message moved back to the delivery
// queue by the SQS console's "Start DLQ redrive": the delivery it reports
// gets a fresh series of attempts. A second copy finds it already restarted.
func (w *Worker) restartFromDeadLetter(ctx context.Context, msg queue.Message) step {
	d, err := Restart(ctx, w.Store, w.Queue, msg.DeliveryID, msg.EndpointID, msg.Gen)
	switch {
	case errors.Is(err, store.ErrConflict):
		w.Log.Info("redriven DLQ message for a delivery no longer failed in that generation; dropped", "delivery_id", msg.DeliveryID)
	case errors.Is(err, ErrNotQueued):
		w.Log.Warn("restarted, but queueing failed; the sweeper will queue it", "delivery_id", d.ID, "error", err)
	case err != nil:
		return step{err: err}
	default:
		w.Log.Info("delivery restarted from a redriven DLQ message", "delivery_id", d.ID, "series", d.Series)
	}
	return done
}
