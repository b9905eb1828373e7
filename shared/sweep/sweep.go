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

	"github.com/gifq/webhooks/shared/delivery"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/store"
)

// Store is what the sweeper needs of the table.
type Store interface {
	DueForSweep(ctx context.Context, shard int, before int64, limit int32, start store.Cursor) (store.SweepPage, error)
	Requeue(ctx context.Context, id string, before int64, maxAttempts int) (domain.Delivery, error)
	FailWithoutAttempt(ctx context.Context, d domain.Delivery, reason domain.FailReason, sendDLQ bool) (domain.Delivery, error)
	delivery.DeadLetterStore
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
	Log         *slog.Logger
	Metrics     *obs.Metrics
	Now         func() time.Time
}

// Result counts what a run did.
type Result struct {
	Found        int  `json:"found"`
	Requeued     int  `json:"requeued"`
	DeadLettered int  `json:"dead_lettered"`
	Skipped      int  `json:"skipped"`  // moving again by the time we looked
	Complete     bool `json:"complete"` // false when the run stopped at its time budget
}

// Handle is the EventBridge scheduled-event handler.
func (s *Sweeper) Handle(ctx context.Context, _ events.EventBridgeEvent) (Result, error) {
	return s.Run(ctx)
}

// Run sweeps every shard once. It stops early, leaving the rest for the next
// run, when the context is about to run out.
func (s *Sweeper) Run(ctx context.Context) (Result, error) {
	before := domain.Millis(s.Now().Add(-s.Grace))
	var mu sync.Mutex
	var total Result
	complete, err := overShards(ctx, 5*time.Second, func(ctx context.Context, shard int) error {
		r, err := s.sweepShard(ctx, shard, before)
		mu.Lock()
		defer mu.Unlock()
		total.Found += r.Found
		total.Requeued += r.Requeued
		total.DeadLettered += r.DeadLettered
		total.Skipped += r.Skipped
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
		"dead_lettered", total.DeadLettered, "skipped", total.Skipped, "complete", total.Complete)
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

func (s *Sweeper) sweepShard(ctx context.Context, shard int, before int64) (Result, error) {
	var r Result
	var start store.Cursor
	for {
		page, err := s.Store.DueForSweep(ctx, shard, before, 100, start)
		if err != nil {
			return r, err
		}
		for _, id := range page.IDs {
			r.Found++
			if err := s.sweepOne(ctx, id, before, &r); err != nil {
				return r, err
			}
		}
		if page.Next == nil {
			return r, nil
		}
		start = page.Next
	}
}

func (s *Sweeper) sweepOne(ctx context.Context, id string, before int64, r *Result) error {
	d, err := s.Store.Requeue(ctx, id, before, s.MaxAttempts)
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
	r.Skipped++
	return nil
}

func (s *Sweeper) deadLetter(ctx context.Context, d domain.Delivery, claimHeld bool, r *Result) error {
	switch err := delivery.SendDeadLetter(ctx, s.Store, s.Queue, d, claimHeld); {
	case errors.Is(err, store.ErrConflict):
		r.Skipped++ // being sent right now
		return nil
	case err != nil && !errors.Is(err, delivery.ErrNotMarked):
		return err
	}
	r.DeadLettered++
	s.Log.Warn("delivery dead-lettered by the sweeper", "delivery_id", d.ID, "reason", d.FailReason)
	return nil
}
