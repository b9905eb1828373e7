// Package sweep is the 15-minute safety net: it finds deliveries that are
// due but that no queue message is moving on (the send after the durable
// write was lost, the worker died mid-attempt, the DLQ send was cut short)
// and hands each to a new message, or, when its attempts are used up,
// fails and dead-letters it.
//
// It reads only the sparse sweep index, which holds just the deliveries that
// still need work, sharded 16 ways. A run costs 16 queries plus about one
// read unit per 4 KB of index entries for the due ones, and one conditional
// write and one SQS send per delivery it moves: it grows with the stuck
// backlog, not with the table.
package sweep

import (
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
	DueForSweep(ctx context.Context, shard int, before int64, limit int32, start store.Cursor) (store.SweepPage, error)
	Requeue(ctx context.Context, id string, before, at int64, maxAttempts int) (domain.Delivery, error)
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
// delivery overdue by the grace (due_at, which only an attempt or a
// deferral moves) whose last re-queue, if any, is a grace old too, is
// handed to a new message of a new generation (store.Requeue). Its older
// message, if it was only waiting in a queue, is then dropped as a
// duplicate when it arrives (lifecycle.Decide: superseded), so a delivery
// has one live message and gets at most one extra message a sweep. A
// delivery that cannot be re-queued goes to lifecycle.DecideSweep (fail,
// or send its DLQ message).
func (s *Sweeper) Run(ctx context.Context) (Result, error) {
	now := s.Now()
	before := domain.Millis(now.Add(-s.Grace))
	var mu sync.Mutex
	var total Result
	oldest := int64(0)
	complete, err := overShards(ctx, 5*time.Second, func(ctx context.Context, shard int) error {
		r, first, err := s.sweepShard(ctx, shard, before)
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
		return err
	})
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

// sweepShard sweeps one shard; first is the due time of its oldest entry
// (0: none).
//
// A delivery whose sweep fails (its re-queue's send refused, a throttled
// write) does not stop the shard: the rest of it is swept all the same, and
// the errors are returned at the end. Stopped at the first, one SQS error
// left every later overdue delivery of the shard a whole interval more.
func (s *Sweeper) sweepShard(ctx context.Context, shard int, before int64) (r Result, first int64, err error) {
	var failed []error
	err = eachID(ctx, func(start store.Cursor) ([]string, store.Cursor, error) {
		page, err := s.Store.DueForSweep(ctx, shard, before, pageSize, start)
		if start == nil && len(page.DueAt) > 0 {
			first = page.DueAt[0] // the index is in due order
		}
		return page.IDs, page.Next, err
	}, func(id string) error {
		if ctx.Err() != nil {
			return ctx.Err() // the run's time budget is spent
		}
		r.Found++
		if err := s.sweepOne(ctx, id, before, &r); err != nil {
			failed = append(failed, fmt.Errorf("delivery %s: %w", id, err))
		}
		return nil
	})
	return r, first, errors.Join(append(failed, err)...)
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
// re-queued goes to lifecycle.DecideSweep.
func (s *Sweeper) sweepOne(ctx context.Context, id string, before int64, r *Result) error {
	d, err := s.Store.Requeue(ctx, id, before, domain.Millis(s.Now()), s.MaxAttempts)
	if errors.Is(err, store.ErrNotFound) {
		r.Skipped++ // gone (its TTL)
		return nil
	}
	if err == nil {
		if err := s.Queue.Send(ctx, queue.For(d), 0); err != nil {
			return err // its older message is superseded: the next run re-queues it again
		}
		r.Requeued++
		s.Log.Warn("stuck delivery re-queued", "delivery_id", id, "attempts", d.Attempts, "gen", d.Gen)
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
			return nil
		}
		if err != nil {
			return err
		}
		return s.deadLetter(ctx, failed, true, r)
	case lifecycle.SweepDLQ:
		return s.deadLetter(ctx, d, false, r)
	}
	if d.Status == domain.StatusPending && d.DueAt < before && d.RequeuedAt >= before {
		r.Waiting++
		return nil
	}
	r.Skipped++
	return nil
}

func (s *Sweeper) deadLetter(ctx context.Context, d domain.Delivery, claimHeld bool, r *Result) error {
	switch err := deadletter.Send(ctx, s.Store, s.Queue, d, claimHeld); {
	case errors.Is(err, store.ErrConflict):
		r.Skipped++ // being sent right now
		return nil
	case err != nil && !errors.Is(err, deadletter.ErrNotMarked):
		return err
	}
	r.DeadLettered++
	s.Log.Warn("delivery dead-lettered by the sweeper", "delivery_id", d.ID, "reason", d.FailReason)
	if s.OpEvents != nil {
		s.OpEvents.Publish(ctx, opevents.DeadLettered(d, s.Now()))
	}
	return nil
}
