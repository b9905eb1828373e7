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
	Requeue(ctx context.Context, id string, before int64, maxAttempts int) (domain.Delivery, error)
	GetDelivery(ctx context.Context, id string) (domain.Delivery, error)
	EndpointState(ctx context.Context, accountID, id string) (domain.Endpoint, error)
	FailWithoutAttempt(ctx context.Context, d domain.Delivery, reason domain.FailReason, sendDLQ bool) (domain.Delivery, error)
	deadletter.Store
}

// Queue sends the sweeper's messages, and tells whether the delivery queue
// (with its paced lane) and its slow lane have a backlog.
type Queue interface {
	Send(context.Context, queue.Message, time.Duration) error
	DeadLetter(context.Context, queue.Message) error
	Backlog(context.Context) (int, error)
	SlowBacklog(context.Context) (int, error)
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
	// Backlog is the delivery queue's visible messages when the run began;
	// while there are any, overdue deliveries are not re-queued (Run).
	// SlowBacklog is the slow lane's: while there are any, the overdue
	// deliveries of failing endpoints are not.
	Backlog     int  `json:"backlog"`
	SlowBacklog int  `json:"slow_backlog"`
	Deferred    int  `json:"deferred"` // overdue, left to the backlog
	Complete    bool `json:"complete"` // false when the run stopped at its time budget
}

// Handle is the EventBridge scheduled-event handler.
func (s *Sweeper) Handle(ctx context.Context, _ events.EventBridgeEvent) (Result, error) {
	return s.Run(ctx)
}

// Run sweeps every shard once. It stops early, leaving the rest for the next
// run, when the context is about to run out.
//
// A delivery overdue by the grace may have no message (a send lost after
// its write, a crash), or its message may be waiting in a queue whose
// consumers are behind. Only SQS knows which, so a run re-queues overdue
// deliveries only when the delivery queue has no visible backlog: then
// every message due minutes ago has been received, and a delivery still
// overdue has none. With a backlog it re-queues nothing (a re-queue would
// add a message per overdue delivery at every run, and a backlog of N
// deliveries grew by N messages a sweep); lost messages are re-queued by
// the first run after the consumers catch up. Failed deliveries whose DLQ
// message was not sent are handled either way. The slow lane (failing
// endpoints: lifecycle.Lane) is looked at apart: its backlog holds back only
// the deliveries of endpoints on it, so that an outage's standing backlog
// there neither stalls the recovery of healthy endpoints' lost messages
// nor is multiplied by the sweeps.
func (s *Sweeper) Run(ctx context.Context) (Result, error) {
	before := domain.Millis(s.Now().Add(-s.Grace))
	backlog, err := s.Queue.Backlog(ctx)
	if err != nil {
		return Result{}, err
	}
	slow, err := s.Queue.SlowBacklog(ctx)
	if err != nil {
		return Result{}, err
	}
	var mu sync.Mutex
	total := Result{Backlog: backlog, SlowBacklog: slow}
	complete, err := overShards(ctx, 5*time.Second, func(ctx context.Context, shard int) error {
		r, err := s.sweepShard(ctx, shard, before, backlog == 0, slow > 0)
		mu.Lock()
		defer mu.Unlock()
		total.Found += r.Found
		total.Requeued += r.Requeued
		total.DeadLettered += r.DeadLettered
		total.Skipped += r.Skipped
		total.Deferred += r.Deferred
		return err
	})
	total.Complete = complete
	m := s.Metrics.Batch()
	m.Count(obs.MetricSweeperRequeued, float64(total.Requeued))
	m.Count(obs.MetricSweeperDeadLettered, float64(total.DeadLettered))
	m.Flush()
	lvl := slog.LevelInfo
	if total.Found > 0 {
		lvl = slog.LevelWarn // stuck deliveries mean something was lost or crashed
	}
	s.Log.Log(ctx, lvl, "sweep finished", "found", total.Found, "requeued", total.Requeued,
		"dead_lettered", total.DeadLettered, "skipped", total.Skipped, "backlog", total.Backlog, "slow_backlog", total.SlowBacklog, "deferred", total.Deferred,
		"complete", total.Complete)
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

func (s *Sweeper) sweepShard(ctx context.Context, shard int, before int64, requeue, slowBacklog bool) (Result, error) {
	var r Result
	err := eachID(ctx, func(start store.Cursor) ([]string, store.Cursor, error) {
		page, err := s.Store.DueForSweep(ctx, shard, before, pageSize, start)
		return page.IDs, page.Next, err
	}, func(id string) error {
		r.Found++
		return s.sweepOne(ctx, id, before, requeue, slowBacklog, &r)
	})
	return r, err
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

// sweepOne re-queues an overdue delivery when requeue is set (no backlog:
// see Run) and, over a slow lane backlog, its endpoint is not on the slow
// lane (lifecycle.SweepWaitsForSlowLane), or only reads it; a delivery that
// cannot be re-queued goes to lifecycle.DecideSweep.
func (s *Sweeper) sweepOne(ctx context.Context, id string, before int64, requeue, slowBacklog bool, r *Result) error {
	var d domain.Delivery
	var err error
	if !requeue || slowBacklog {
		if d, err = s.Store.GetDelivery(ctx, id); errors.Is(err, store.ErrNotFound) {
			r.Skipped++
			return nil
		} else if err != nil {
			return err
		}
		if requeue {
			if requeue, err = s.requeues(ctx, d); err != nil {
				return err
			}
		}
	}
	if requeue {
		d, err = s.Store.Requeue(ctx, id, before, s.MaxAttempts)
	} else {
		err = store.ErrConflict // as a refused re-queue: decide without one
	}
	if err == nil {
		if err := s.Queue.Send(ctx, queue.For(d), 0); err != nil {
			return err // due_at moved to now: the next run tries again
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
	if !requeue && d.Status == domain.StatusPending {
		r.Deferred++
		return nil
	}
	r.Skipped++
	return nil
}

// requeues reports whether the overdue delivery d may be re-queued over a
// slow lane backlog: not while its endpoint is on the slow lane, where its
// message most likely waits (an endpoint gone: the re-queue, whose worker
// finds it gone).
func (s *Sweeper) requeues(ctx context.Context, d domain.Delivery) (bool, error) {
	if d.Status != domain.StatusPending {
		return true, nil // the re-queue's condition refuses it, and DecideSweep decides
	}
	ep, err := s.Store.EndpointState(ctx, d.AccountID, d.EndpointID)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !lifecycle.SweepWaitsForSlowLane(ep, s.Now()), nil
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
