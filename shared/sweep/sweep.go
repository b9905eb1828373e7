// Package sweep is the 15-minute safety net: it finds deliveries that are
// due but that no queue message is moving on (the send after the durable
// write was lost, the worker died mid-attempt, the DLQ send was cut short)
// and hands each to a new message, or, when its attempts are used up,
// fails and dead-letters it.
//
// It reads the sweep index (keys only, sharded 16 ways), where a delivery's
// entry stays once it is final (removing it would cost every delivery a
// write unit), in a moving window of due times: each shard from its mark
// (where the last run stopped, less an overlap for clocks that disagree) to
// now less the grace, so each entry is read about once, and then its
// delivery, to skip a final one. A run costs a read and a write of the
// marks, 16 queries, half a read unit per delivery that came due since the
// last run, and one conditional write and one SQS send per delivery it
// moves: it grows with the traffic since the last run and the stuck
// backlog, not with the table.
package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/deadletter"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

// Store is what the sweeper needs of the table.
type Store interface {
	DueForSweep(ctx context.Context, shard int, from, before int64, limit int32, start store.Cursor) (store.SweepPage, error)
	GetDeliveriesEventually(ctx context.Context, ids []string) ([]domain.Delivery, error)
	SweepMarks(ctx context.Context) (map[int]int64, error)
	SetSweepMarks(ctx context.Context, marks map[int]int64) error
	Requeue(ctx context.Context, id string, before, at int64, maxAttempts int) (domain.Delivery, error)
	Revisit(ctx context.Context, id string, at int64) error
	FailWithoutAttempt(ctx context.Context, d domain.Delivery, reason domain.FailReason, sendDLQ bool) (domain.Delivery, error)
	deadletter.Store
}

// Queue sends the sweeper's messages.
type Queue interface {
	Send(context.Context, queue.Message, time.Duration) error
	DeadLetter(context.Context, queue.Message) error
}

// Sweeper re-queues stuck deliveries.
type Sweeper struct {
	Store       Store
	Queue       Queue
	MaxAttempts int
	Grace       time.Duration // a delivery must be this overdue to count as stuck
	// OpEvents hears of each delivery the sweeper dead-letters
	// (delivery.dead_lettered); nil publishes nothing.
	OpEvents opevents.Publisher
	Log      *slog.Logger
	Metrics  *obs.Metrics
	Now      func() time.Time
}

// Result counts what a run did.
type Result struct {
	Found        int `json:"found"`
	Requeued     int `json:"requeued"`
	DeadLettered int `json:"dead_lettered"`
	Skipped      int `json:"skipped"` // moving again by the time we looked
	// Waiting: overdue, but re-queued less than a grace ago; that message
	// is given its grace before it is taken for lost too.
	Waiting int `json:"waiting"`
	// OldestOverdue is how long the oldest delivery found has been due
	// (seconds; 0 when none was found): a re-queue does not reset it, an
	// attempt does.
	OldestOverdue float64 `json:"oldest_overdue_seconds"`
	Complete      bool    `json:"complete"` // false when the run stopped at its time budget
}

// Handle is the EventBridge scheduled-event handler.
func (s *Sweeper) Handle(ctx context.Context, _ events.EventBridgeEvent) (Result, error) {
	return s.Run(ctx)
}

// Run sweeps every shard once. It stops early, leaving the rest for the next
// run, when the context is about to run out.
//
// The rule is per delivery, never from a queue's backlog: a pending
// delivery overdue by the grace (due_at, which an attempt, a deferral or a
// re-queue moves) is handed to a new message of a new generation
// (store.Requeue), and its entry moves to now, so that a later run reads it
// again if that message is lost too. Its older message, if it was only
// waiting in a queue, is then dropped as a duplicate when it arrives
// (lifecycle.Decide: superseded), so a delivery has one live message and
// gets at most one extra message a sweep. A delivery that cannot be
// re-queued goes to lifecycle.DecideSweep (fail, or send its DLQ message);
// one that still needs work but that the run could not move (a live lease
// or DLQ claim) has its entry moved on too (store.Revisit). A final
// delivery is nothing to do.
func (s *Sweeper) Run(ctx context.Context) (Result, error) {
	now := s.Now()
	before := domain.Millis(now.Add(-s.Grace))
	marks, err := s.Store.SweepMarks(ctx)
	if err != nil {
		return Result{}, err
	}
	var mu sync.Mutex
	var total Result
	oldest := int64(0)
	moved := map[int]int64{}
	complete, err := overShards(ctx, 5*time.Second, func(ctx context.Context, shard int) error {
		from := int64(0)
		if m, ok := marks[shard]; ok {
			from = max(min(m, before)-MarkOverlap(s.Grace).Milliseconds(), 0)
		}
		r, first, through, err := s.sweepShard(ctx, shard, from, before)
		mu.Lock()
		defer mu.Unlock()
		total.Found += r.Found
		total.Requeued += r.Requeued
		total.DeadLettered += r.DeadLettered
		total.Skipped += r.Skipped
		total.Waiting += r.Waiting
		if first != 0 && (oldest == 0 || first < oldest) {
			oldest = first
		}
		if m, ok := marks[shard]; through > 0 && (!ok || through != m) {
			moved[shard] = through
		}
		return err
	})
	if merr := s.Store.SetSweepMarks(ctx, moved); merr != nil {
		err = errors.Join(err, merr) // this window is read again next run
	}
	total.Complete = complete
	if oldest != 0 {
		total.OldestOverdue = max(now.Sub(time.UnixMilli(oldest)), 0).Seconds()
	}
	m := s.Metrics.Batch()
	m.Count(obs.MetricSweeperRequeued, float64(total.Requeued))
	m.Count(obs.MetricSweeperDeadLettered, float64(total.DeadLettered))
	m.Observe(obs.MetricSweeperOldestOverdue, time.Duration(total.OldestOverdue*float64(time.Second)))
	m.Flush()
	lvl := slog.LevelInfo
	if total.Found > 0 {
		lvl = slog.LevelWarn // stuck deliveries mean something was lost or crashed
	}
	s.Log.Log(ctx, lvl, "sweep finished", "found", total.Found, "requeued", total.Requeued,
		"dead_lettered", total.DeadLettered, "skipped", total.Skipped, "waiting", total.Waiting,
		"oldest_overdue_seconds", total.OldestOverdue, "complete", total.Complete)
	return total, err
}

// MarkOverlap is how far before its mark a shard's next window starts: an
// entry is written at or before its due time, but by a clock that may be
// behind the sweeper's, and reaches the index a moment after its write; the
// entries in the overlap are read twice (at 10 s of a 15-minute interval,
// 1 % more reads). An entry is missed only if the writer's clock is behind
// the sweeper's by more than the grace and the overlap together (5 min 10 s
// by default; the soak's jumps of up to 3 s each way stay within its 5 s
// grace and 2.5 s overlap).
func MarkOverlap(grace time.Duration) time.Duration { return min(grace/2, 10*time.Second) }

// overShards runs fn for every shard of the sweep and park indexes, four at
// a time, with ctx's deadline brought margin closer so that a run ends
// cleanly before its Lambda does. complete is false when a shard stopped
// early (its error, or the deadline); the next run picks up the rest.
func overShards(ctx context.Context, margin time.Duration, fn func(ctx context.Context, shard int) error) (complete bool, err error) {
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-margin))
		defer cancel()
	}
	var mu sync.Mutex
	var errs []error
	complete = true
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for shard := 0; shard < schema.SweepShards; shard++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(shard int) {
			defer func() { <-sem; wg.Done() }()
			if err := fn(ctx, shard); err != nil {
				mu.Lock()
				defer mu.Unlock()
				complete = false
				if !errors.Is(err, context.DeadlineExceeded) {
					errs = append(errs, err)
				}
			}
		}(shard)
	}
	wg.Wait()
	return complete, errors.Join(errs...)
}

// sweepShard sweeps one shard's entries due in [from, before): first is
// when the oldest delivery it found to need work was overdue from (0:
// none); through is the mark to keep (before when the shard was read to
// the end, else the due time of the last page handled, 0 if none was).
//
// A delivery whose sweep fails (its re-queue's send refused, a throttled
// write) does not stop the shard: the rest of it is swept all the same, the
// mark stays at the first failed one's due time (the next run reads it
// again), and the errors are returned at the end. Stopped at the first, one
// SQS error left every later overdue delivery of the shard a whole interval
// more.
func (s *Sweeper) sweepShard(ctx context.Context, shard int, from, before int64) (r Result, first, through int64, err error) {
	var failed []error
	held := int64(0) // the due time of the first delivery whose sweep failed
	end := func(through int64, err error) (Result, int64, int64, error) {
		if held != 0 && through > held {
			through = held
		}
		return r, first, through, errors.Join(append(failed, err)...)
	}
	var start store.Cursor
	for {
		var page store.SweepPage
		var ds []domain.Delivery
		err := again(ctx, pageTries, func() (err error) {
			if page, err = s.Store.DueForSweep(ctx, shard, from, before, pageSize, start); err == nil {
				ds, err = s.Store.GetDeliveriesEventually(ctx, page.IDs)
			}
			return err
		})
		if err != nil {
			return end(through, err)
		}
		for _, d := range ds {
			if final(d) || d.DueAt >= before {
				continue // nothing to do, or moved on since the index was read
			}
			r.Found++
			if f := cmp.Or(d.OverdueFrom, d.DueAt); first == 0 || f < first {
				first = f
			}
			if err := s.sweepOne(ctx, d, before, &r); err != nil {
				failed = append(failed, fmt.Errorf("delivery %s: %w", d.ID, err))
				if held == 0 || d.DueAt < held {
					held = d.DueAt
				}
				if ctx.Err() != nil {
					return end(through, ctx.Err())
				}
			}
		}
		if len(page.DueAt) > 0 {
			through = page.DueAt[len(page.DueAt)-1]
		}
		if page.Next == nil {
			return end(before, nil)
		}
		if err := ctx.Err(); err != nil {
			return end(through, err)
		}
		start = page.Next
	}
}

// pageTries are the waits before each read of a page of a shard before
// the shard stops for this run: a read refused once (a throttle, a 500
// past the SDK's own retries) left the rest of the shard, lost sends among
// it, to the next run, an interval later (in the soak, 55 of 147 runs).
// oneTries are a re-queue's write and its send: a delivery's, so fewer
// (DynamoDB or SQS down for good must not hold the run a second a
// delivery).
var (
	pageTries = []time.Duration{0, 250 * time.Millisecond, time.Second}
	oneTries  = []time.Duration{0, 250 * time.Millisecond}
)

// again calls read until it succeeds or answers (one of answers: a
// result, not a failure), at most len(tries) times, waiting tries[i]
// before try i; the last error when none did.
func again(ctx context.Context, tries []time.Duration, read func() error, answers ...error) (err error) {
	for _, wait := range tries {
		select {
		case <-ctx.Done():
			return cmp.Or(err, ctx.Err())
		case <-time.After(wait):
		}
		if err = read(); err == nil {
			return nil
		}
		for _, a := range answers {
			if errors.Is(err, a) {
				return err
			}
		}
	}
	return err
}

// final: a delivery that needs nothing more of the sweeper.
func final(d domain.Delivery) bool {
	return d.Status == domain.StatusDelivered || d.Status == domain.StatusFailed && !d.DLQPending
}

// pageSize is how many ids one index query of a shard returns.
const pageSize = 100

// eachID pages through one shard of a sparse index (query: one page from
// start; a nil next cursor ends it) and calls one for every id, in order,
// stopping at the first error. The sweeper and the scheduler both walk
// their index this way.
func eachID(ctx context.Context, query func(start store.Cursor) (ids []string, next store.Cursor, err error), one func(id string) error) error {
	var start store.Cursor
	for {
		ids, next, err := query(start)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := one(id); err != nil {
				return err
			}
		}
		if next == nil || ctx.Err() != nil {
			return ctx.Err()
		}
		start = next
	}
}

// sweepOne re-queues an overdue delivery (see Run); one that cannot be
// re-queued goes to lifecycle.DecideSweep; one left still needing work is
// revisited.
func (s *Sweeper) sweepOne(ctx context.Context, seen domain.Delivery, before int64, r *Result) error {
	now := domain.Millis(s.Now())
	var d domain.Delivery
	err := again(ctx, oneTries, func() (err error) { // a throttled write is tried again within the run
		d, err = s.Store.Requeue(ctx, seen.ID, before, now, s.MaxAttempts)
		return err
	}, store.ErrNotFound, store.ErrConflict)
	if errors.Is(err, store.ErrNotFound) {
		r.Skipped++ // gone (its TTL)
		return nil
	}
	if err == nil {
		// Sent again once when refused: a re-queue lost here waits a whole
		// interval (in the soak, a send refused after a write race left a
		// delivery three sweeps past its deadline).
		if err := again(ctx, oneTries, func() error { return s.Queue.Send(ctx, queue.For(d), 0) }); err != nil {
			return err // its older message is superseded; its entry moved to now: a later run re-queues it again
		}
		r.Requeued++
		s.Log.Warn("stuck delivery re-queued", "delivery_id", d.ID, "attempts", d.Attempts, "gen", d.Gen)
		return nil
	}
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	act := lifecycle.DecideSweep(d, s.Now(), s.MaxAttempts)
	switch act.Verb {
	case lifecycle.SweepFail:
		failed, err := s.Store.FailWithoutAttempt(ctx, d, act.Reason, true)
		if errors.Is(err, store.ErrConflict) {
			r.Skipped++
			return s.Store.Revisit(ctx, d.ID, before)
		}
		if err != nil {
			return err
		}
		return s.deadLetter(ctx, failed, true, before, r)
	case lifecycle.SweepDLQ:
		return s.deadLetter(ctx, d, false, before, r)
	}
	if d.Status == domain.StatusPending && d.DueAt < before && d.RequeuedAt >= before {
		r.Waiting++
	} else {
		r.Skipped++
	}
	if d.Status == domain.StatusPending && d.DueAt < before {
		// Held by a live lease, or re-queued within the grace: looked at
		// again by the first run after that is over.
		return s.Store.Revisit(ctx, d.ID, max(before, d.LeaseUntil-s.Grace.Milliseconds(), d.RequeuedAt))
	}
	return nil
}

// deadLetter sends a failed delivery's DLQ message; one it could not send
// or mark is revisited (due at before: read by the next run).
func (s *Sweeper) deadLetter(ctx context.Context, d domain.Delivery, claimHeld bool, before int64, r *Result) error {
	switch err := deadletter.Send(ctx, s.Store, s.Queue, d, claimHeld); {
	case errors.Is(err, store.ErrConflict):
		r.Skipped++ // being sent right now: looked at again, in case its sender dies
		return s.Store.Revisit(ctx, d.ID, before)
	case errors.Is(err, deadletter.ErrNotMarked):
		if err := s.Store.Revisit(ctx, d.ID, before); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	r.DeadLettered++
	s.Log.Warn("delivery dead-lettered by the sweeper", "delivery_id", d.ID, "reason", d.FailReason)
	if s.OpEvents != nil {
		s.OpEvents.Publish(ctx, opevents.DeadLettered(d, s.Now()))
	}
	return nil
}
