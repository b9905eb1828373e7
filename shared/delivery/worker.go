// Package delivery is the deliver function's executor: for each queue
// message it asks lifecycle.Step what to do, does that one thing (a read, a
// conditional write, a sleep, the attempt, a send to the queue), writes what
// came of it into lifecycle.Known, and asks again. It decides nothing: every
// rule is in shared/lifecycle (step.go).
package delivery

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/deadletter"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/inflight"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/putback"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// Store is what the worker needs of the table.
type Store interface {
	inflight.Writes      // an attempt's claim, give-back and record
	opevents.Warner      // the endpoint warned of its disable
	deadletter.Store     // the DLQ claim and mark
	deadletter.Restarter // a redriven delivery
	putback.Store        // a wait: the due time moved, a delivery parked
	LoadForAttempt(context.Context, store.Ref) (store.Snapshot, error)
	FailWithoutAttempt(ctx context.Context, d domain.Delivery, reason domain.FailReason, sendDLQ bool) (domain.Delivery, error)
	TakeProbe(ctx context.Context, accountID, endpointID string, until int64) error
	MarkSlow(ctx context.Context, endpointID string, until int64) error
	GetDelivery(ctx context.Context, id string) (domain.Delivery, error)
}

// Queue is what the worker needs of SQS.
type Queue interface {
	deadletter.Queue
	putback.Queue
	Hide(ctx context.Context, sourceARN, receipt string, d time.Duration) error
	DeadLetterRaw(ctx context.Context, body, reason string) error
}

// Limiter books rate slots on a line (an account, or account/endpoint for
// an endpoint's own rate) and takes back one that will not be used.
type Limiter interface {
	Reserve(ctx context.Context, line string, n int, perSecond float64) (ratelimit.Reservation, error)
	Refund(ctx context.Context, line string, r ratelimit.Reservation) error
}

// Sender makes one attempt.
type Sender interface {
	Send(context.Context, destination.Request) destination.Outcome
}

// Worker handles the delivery queue's batches under its policy (the
// deployment's settings, resolved once).
type Worker struct {
	lifecycle.Policy
	Store   Store
	Queue   Queue
	Limiter Limiter
	Sender  Sender
	Events  opevents.Publisher // operational events: a breaker opened or closed, an endpoint disabled, a dead letter
	Log     *slog.Logger
	Metrics *obs.Metrics
	Now     func() time.Time
	// After is the timer a wait uses, measured on Now's clock (nil:
	// time.After); a simulation whose clock stands still during an
	// invocation passes one that fires at once.
	After func(time.Duration) <-chan time.Time

	pools  inflight.Pools // the endpoints' in-flight slots held here, shared by their messages
	waited atomic.Int64   // ns slept for rate slots (SlotWaits)
}

// SlotWaits is how long this worker's messages have slept for their rate
// slots (lifecycle.DoSleep before an attempt; not the waits between tries
// of a write): billed Lambda time, one message per invocation as AWS's
// pollers split a paced lane at the default rate.
func (w *Worker) SlotWaits() time.Duration { return time.Duration(w.waited.Load()) }

// maxSteps bounds one message's steps: a step that never ends is a bug, and
// the message is left to SQS rather than spin.
const maxSteps = 64

// Handle is the SQS event source handler: it processes the batch's messages
// concurrently and reports the ones to put back as batch item failures.
func (w *Worker) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	m := w.Metrics.Batch()
	defer m.Flush()
	// Each message joins its endpoint's slot pool before any starts, so
	// that the batch's messages to one endpoint share its slots.
	msgs := make(map[string]queue.Message, len(ev.Records))
	for _, rec := range ev.Records {
		if msg, err := queue.Decode(rec.Body); err == nil {
			msgs[rec.MessageId] = msg
			w.pools.Join(inflight.Key(msg.AccountID, msg.EndpointID), msg.EndpointID)
		}
	}
	return queue.EachMessage(ctx, ev, func(ctx context.Context, rec events.SQSMessage) bool {
		msg, ok := msgs[rec.MessageId]
		if ok {
			defer w.pools.Leave(ctx, w.Store, inflight.Key(msg.AccountID, msg.EndpointID))
		}
		return w.handleOne(ctx, rec, msg, ok, m)
	}), nil
}

// run is one message being carried out: what the step knows, and what only
// the executor holds (its attempt's claim and slot, the attempt's full result).
type run struct {
	*Worker
	rec   events.SQSMessage
	msg   queue.Message
	k     lifecycle.Known
	att   inflight.Attempt
	entry domain.Attempt // the attempt log's entry of the attempt made
	m     *obs.Batch
	log   *slog.Logger
}

// handleOne carries out one message and reports whether it is finished (and
// may be deleted).
func (w *Worker) handleOne(ctx context.Context, rec events.SQSMessage, msg queue.Message, decoded bool, m *obs.Batch) bool {
	if !decoded { // not ours or corrupted: for a human, not the retry loop
		w.Log.Error("malformed message moved to the DLQ", "message_id", rec.MessageId)
		return w.Queue.DeadLetterRaw(ctx, rec.Body, queue.ReasonMalformed) == nil
	}
	// Its attempt's log lines, spans and put-backs join its event's trace.
	ctx = obs.WithTraceHeader(ctx, msg.Trace)
	r := &run{Worker: w, rec: rec, msg: msg, m: m, k: lifecycle.Known{Seed: rand.Uint64(), Msg: msg.ForStep(rec)}, log: w.Log.With(
		"delivery_id", msg.DeliveryID, "hops", msg.Hops, "event_id", msg.EventID, "endpoint_id", msg.EndpointID, "account_id", msg.AccountID)}
	// A resend's message, and only one, carries its attempt id (queue.Decode checks).
	r.att = inflight.Attempt{Pools: &w.pools, Store: w.Store, Max: w.MaxInFlight, LeaseFor: w.LeaseFor, Now: w.Now, Resend: msg.AttemptID}
	defer r.att.Release()
	for range maxSteps {
		r.k.Now = w.Now()
		e := lifecycle.Step(r.k, w.Policy)
		r.note(ctx, e)
		if e.Resolved != nil {
			r.k.Settings = e.Resolved
		}
		switch e.Do {
		case lifecycle.DoFinish:
			return true
		case lifecycle.DoRetry:
			_ = w.Queue.Hide(ctx, rec.EventSourceARN, rec.ReceiptHandle, e.Delay)
			return false
		}
		r.k.Err, r.k.ErrOn = r.do(ctx, e), e.Do
	}
	r.log.Error("the step did not end; SQS will redeliver the message", "message_id", rec.MessageId)
	_ = w.Queue.Hide(ctx, rec.EventSourceARN, rec.ReceiptHandle, lifecycle.SystemErrorBackoff)
	return false
}

// do carries out one effect and writes its result into r.k; the error is a
// system error, for the step to decide on.
func (r *run) do(ctx context.Context, e lifecycle.Effect) error {
	k, d := &r.k, r.k.Delivery
	if e.Detach {
		ctx = context.WithoutCancel(ctx)
	}
	switch e.Do {
	case lifecycle.DoLoad:
		snap, err := r.Store.LoadForAttempt(ctx, store.Ref{DeliveryID: r.msg.DeliveryID, AccountID: r.msg.AccountID, EndpointID: r.msg.EndpointID,
			EventID: r.msg.EventID, Event: r.msg.Event(), Delivery: r.msg.Delivery(), Eventual: e.Eventual})
		k.LoadTries++
		k.Loaded, k.Stale, k.Delivery, k.Endpoint, k.Event = err == nil, e.Eventual, snap.Delivery, snap.Endpoint, snap.Event
		k.HeldHere = snap.Endpoint != nil && r.pools.Holds(inflight.Key(r.msg.AccountID, r.msg.EndpointID))
		return err
	case lifecycle.DoProbe:
		err := r.Store.TakeProbe(ctx, r.msg.AccountID, r.msg.EndpointID, domain.Millis(e.Until))
		k.ProbeTaken, k.ProbeLost = err == nil, errors.Is(err, store.ErrConflict)
		return ignore(err, store.ErrConflict)
	case lifecycle.DoReserve:
		res, err := r.Limiter.Reserve(ctx, e.Line.Key(r.msg.AccountID, r.msg.EndpointID), 1, e.Rate)
		*k.RateOn(e.Line) = lifecycle.Slot{At: res.First, Interval: res.Interval}
		return err
	case lifecycle.DoSleep:
		k.Slept = e.Until
		if !e.Detach {
			from := time.Now()
			defer func() { r.waited.Add(int64(time.Since(from))) }()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.after(e.Until.Sub(r.Now())):
		}
	case lifecycle.DoClaim:
		t, err := r.att.Take(ctx, *d, k.Endpoint, e.Uncapped)
		k.Claim, k.ClaimHeld, k.Claimed, k.LeaseUntil = t.Result, t.Held, t.Claimed, domain.Time(t.Claim.LeaseUntil)
		return err
	case lifecycle.DoYield:
		k.YieldTries++
		err := r.att.Yield(ctx, *d, k.Claimed)
		k.Yielded = err == nil || errors.Is(err, store.ErrConflict)
		return ignore(err, store.ErrConflict)
	case lifecycle.DoSend:
		r.send(ctx, e)
	case lifecycle.DoRecord:
		k.RecordTries++
		a := r.entry
		a.Outcome = e.Logged
		err := r.att.Record(ctx, *d, k.Claimed, k.Endpoint, a, e.Outcome)
		k.Recorded, k.RecordLost = err == nil, errors.Is(err, store.ErrConflict)
		if k.Recorded {
			opevents.Recorded{Publisher: r.Events, Warner: r.Store, Log: r.log, DisableAfter: r.DisableAfter}.Publish(ctx, *k.Endpoint, a, e.Outcome, r.Now())
		}
		return ignore(err, store.ErrConflict)
	case lifecycle.DoReread:
		cur, err := r.Store.GetDelivery(ctx, r.msg.DeliveryID)
		k.Reread, k.RereadAt = lifecycle.CheckRecord(cur, err == nil, r.att.Claim.ID, r.att.Claim.AttemptID), k.RecordTries
		return ignore(err, store.ErrNotFound)
	case lifecycle.DoFail:
		k.FailTries++
		failed, err := r.Store.FailWithoutAttempt(ctx, *d, e.Reason, true)
		if err == nil {
			k.Failed = &failed
		}
		k.FailLost = errors.Is(err, store.ErrConflict)
		return ignore(err, store.ErrConflict)
	case lifecycle.DoDeadLetter:
		var err error
		if k.DeadLetter, err = deadletter.SendForStep(ctx, r.Store, r.Queue, e.Delivery, e.Held); k.DeadLetter.Sent() {
			r.Events.Publish(ctx, opevents.DeadLettered(e.Delivery, r.Now()))
		}
		return err
	case lifecycle.DoRestart:
		var err error
		k.NotRestarted, err = deadletter.RestartForStep(ctx, r.Store, r.Queue, r.msg.DeliveryID, r.msg.EndpointID, r.msg.Gen)
		k.Restarted = err == nil
		return err
	case lifecycle.DoPutBack:
		var err error
		k.PutBack, err = putback.Do(ctx, r.Store, r.Queue, r.log, r.msg, d, e)
		return err
	case lifecycle.DoPrev:
		prev, err := r.Store.GetDelivery(ctx, d.PrevDelivery)
		k.PrevRead = err == nil || errors.Is(err, store.ErrNotFound)
		if err == nil {
			k.Prev = &prev
		}
		return ignore(err, store.ErrNotFound)
	case lifecycle.DoQuarantine:
		// As it came, but for the event's body it may carry: the ids are
		// what a human needs, and a dead letter holds no customer's payload
		// (that body may be another account's).
		m := r.msg
		m.Body = nil
		err := r.Queue.DeadLetterRaw(ctx, m.Encode(), queue.ReasonMismatch)
		k.Quarantined = err == nil
		return err
	}
	return nil
}

func (r *run) after(d time.Duration) <-chan time.Time {
	if r.After != nil {
		return r.After(d)
	}
	return time.After(d)
}

// ignore is err, unless it is one of the results the step reads from Known.
func ignore(err error, results ...error) error {
	for _, r := range results {
		if errors.Is(err, r) {
			return nil
		}
	}
	return err
}
