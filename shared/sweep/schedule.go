package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// ScheduleStore is what the scheduler needs of the table.
type ScheduleStore interface {
	ParkedBefore(ctx context.Context, shard int, before int64, limit int32, start store.Cursor) (store.ParkedPage, error)
	Unpark(ctx context.Context, id string, before int64) (domain.Delivery, store.Park, error)
}

// Scheduler is the every-minute half of design BC (docs/scale.md): the
// worker parks waits longer than SQS's 15-minute delay in the table
// (store.Park); each run sends the parks that fall due within Ahead as new
// messages, each delayed to its exact time. Unpark's conditional write (a gen
// bump) picks one run per park, so concurrent or repeated runs never make two
// live messages; a run that dies between that write and the send leaves the
// delivery due in the sweep index, where the sweeper finds it.
type Scheduler struct {
	Store ScheduleStore
	Queue Queue
	// Ahead is how far ahead a run looks: more than the period between runs,
	// so that a late run still sends every park before it is due; at most
	// SQS's 15-minute delay.
	Ahead time.Duration
	Log   *slog.Logger
	Now   func() time.Time
}

// ScheduleResult counts what a run did.
type ScheduleResult struct {
	Found    int  `json:"found"`
	Sent     int  `json:"sent"`
	Skipped  int  `json:"skipped"`  // unparked by another run, or stale
	Unsent   int  `json:"unsent"`   // unparked but the send failed: the sweeper takes them
	Complete bool `json:"complete"` // false when the run stopped at its time budget or an error
}

// Run sends the parks due before now + Ahead.
func (s *Scheduler) Run(ctx context.Context) (ScheduleResult, error) {
	before := domain.Millis(s.Now().Add(min(s.Ahead, queue.MaxDelay)))
	var mu sync.Mutex
	var total ScheduleResult
	complete, err := overShards(ctx, 2*time.Second, func(ctx context.Context, shard int) error {
		r, err := s.shard(ctx, shard, before)
		mu.Lock()
		defer mu.Unlock()
		total.Found += r.Found
		total.Sent += r.Sent
		total.Skipped += r.Skipped
		total.Unsent += r.Unsent
		return err
	})
	total.Complete = complete
	lvl := slog.LevelDebug
	if total.Unsent > 0 || !total.Complete {
		lvl = slog.LevelWarn
	}
	s.Log.Log(ctx, lvl, "schedule run finished", "found", total.Found, "sent", total.Sent, "skipped", total.Skipped,
		"unsent", total.Unsent, "complete", total.Complete)
	return total, err
}

func (s *Scheduler) shard(ctx context.Context, shard int, before int64) (ScheduleResult, error) {
	var r ScheduleResult
	err := eachID(ctx, func(start store.Cursor) ([]string, store.Cursor, error) {
		page, err := s.Store.ParkedBefore(ctx, shard, before, pageSize, start)
		return page.IDs, page.Next, err
	}, func(id string) error {
		r.Found++
		return s.one(ctx, id, before, &r)
	})
	return r, err
}

func (s *Scheduler) one(ctx context.Context, id string, before int64, r *ScheduleResult) error {
	d, p, err := s.Store.Unpark(ctx, id, before)
	if errors.Is(err, store.ErrConflict) {
		r.Skipped++
		return nil
	}
	if err != nil {
		return err
	}
	msg := queue.For(d)
	msg.SlotAt, msg.SlotFor, msg.Deferred = p.SlotAt, p.SlotFor, p.Deferred
	// Sent again once when refused, as the sweeper's re-queue is: one
	// refused send left the delivery to the sweeper, 5 to 20 minutes
	// later (the latest of every simulated month, 14 min past its deadline).
	if err := again(ctx, oneTries, func() error { return s.Queue.Send(ctx, msg, time.UnixMilli(p.Until).Sub(s.Now())) }); err != nil {
		r.Unsent++
		s.Log.Warn("parked delivery unparked but not sent; the sweeper re-queues it after its grace", "delivery_id", id, "error", err)
		return nil
	}
	r.Sent++
	return nil
}

// Invocation is the sweeper function's input: EventBridge's scheduled event
// for the 15-minute sweep (no mode), or the scheduler rule's constant input
// {"mode":"schedule"} every minute (events/scheduler.json).
type Invocation struct {
	Mode string `json:"mode"`
}

// ModeSchedule selects the scheduler.
const ModeSchedule = "schedule"

// Function is the sweeper function: the sweep or the scheduler, as the
// invocation asks.
type Function struct {
	Sweeper   *Sweeper
	Scheduler *Scheduler
	// Metrics receives each mode's heartbeat (obs.MetricSweeperRuns,
	// obs.MetricSchedulerRuns) after a run without error; nil: none.
	Metrics *obs.Metrics
}

// Handle runs the mode the invocation names.
func (f Function) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var in Invocation
	_ = json.Unmarshal(raw, &in) // a scheduled event has no mode: the sweep
	if in.Mode == ModeSchedule {
		r, err := f.Scheduler.Run(ctx)
		f.heartbeat(obs.MetricSchedulerRuns, err)
		return r, err
	}
	r, err := f.Sweeper.Run(ctx)
	f.heartbeat(obs.MetricSweeperRuns, err)
	return r, err
}

// heartbeat counts one finished run. A run that stopped at its time budget
// (Complete false) still counts: it worked, and the next run goes on. A run
// that failed does not, so the heartbeat alarm (missing data breaching)
// fires when runs stop happening or keep failing.
func (f Function) heartbeat(metric string, err error) {
	if f.Metrics == nil || err != nil {
		return
	}
	b := f.Metrics.Batch()
	b.Count(metric, 1)
	b.Flush()
}
