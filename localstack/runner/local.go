package runner

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/delivery"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/stats"
)

// Options shape a local run.
type Options struct {
	APIAddr string // where the API listens; "127.0.0.1:0" picks a port
	Pollers int    // concurrent deliver invocations, like the mapping's maximum concurrency (default 32)
	// SlowPollers are the slow lane's (lifecycle.Lane), when the app has
	// one: its own mapping's maximum concurrency (default a quarter of
	// Pollers, at least 1).
	SlowPollers int
	// PacedPollers are the paced lane's (lifecycle.LanePaced), when the app
	// has one: its mapping's maximum concurrency (default a quarter of
	// Pollers, at least 1), with its batches (schema.PacedBatch).
	PacedPollers int
	SweepEvery   time.Duration // the sweeper's timer; 0 turns it off
	// ScheduleEvery is the scheduler's timer (the sweeper function invoked
	// with {"mode":"schedule"}, as the stack's 1-minute rule does): 0 is
	// the stack's minute, < 0 turns it off.
	ScheduleEvery time.Duration
	// Streams, with StreamARN (the table's latest stream), runs the stats
	// function's stream mapping (StreamPoller); nil: no stats.
	Streams   Streams
	StreamARN string
	// StatsStore is where the stats poller writes (default the app's store;
	// the e2e cost test gives an uncounted one: the stats function is priced
	// apart, shared/cost's StatsWriteUnitsPerDelivery).
	StatsStore stats.Writer
}

// Local is every function running in this process.
type Local struct {
	URL    string // the API's base URL
	app    *app.App
	srv    *http.Server
	lanes  []*Poller // the delivery queue's, and its slow and paced lanes'
	worker *delivery.Worker
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start runs the API, the delivery poller and the sweeper timer for a.
func Start(ctx context.Context, a *app.App, o Options) (*Local, error) {
	if o.Pollers <= 0 {
		o.Pollers = 32
	}
	ln, err := net.Listen("tcp", o.APIAddr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &Local{URL: "http://" + ln.Addr().String(), app: a, cancel: cancel}
	l.srv = &http.Server{
		Handler:           &APIGateway{Handler: Concurrent(a.API().Handle), Stage: a.Config.Stage, MaxBody: 10 << 20},
		ReadHeaderTimeout: 10 * time.Second,
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if err := l.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("api server stopped", "error", err)
		}
	}()
	// One worker for every lane, as one deliver function has a mapping for
	// each: its in-process slot handoff (shared/inflight) spans them.
	l.worker = a.Worker()
	worker := Concurrent(l.worker.Handle)
	type mapping struct {
		concurrency int
		batch       int32
		window      time.Duration
	}
	lanes := map[string]mapping{a.Config.QueueURL: {o.Pollers, 10, 0}}
	if a.Config.SlowQueueURL != "" {
		if o.SlowPollers <= 0 {
			o.SlowPollers = max(o.Pollers/4, 1)
		}
		lanes[a.Config.SlowQueueURL] = mapping{o.SlowPollers, 10, 0}
	}
	if a.Config.PacedQueueURL != "" {
		if o.PacedPollers <= 0 {
			o.PacedPollers = max(o.Pollers/4, 1)
		}
		lanes[a.Config.PacedQueueURL] = mapping{o.PacedPollers, schema.PacedBatch, schema.PacedWindow}
	}
	for url, m := range lanes {
		poller := &Poller{SQS: a.SQS, QueueURL: url, QueueARN: arnOf(url), Handler: worker, Concurrency: m.concurrency,
			BatchSize: m.batch, Window: m.window, Timeout: schema.FunctionTimeout, Log: a.Log}
		l.lanes = append(l.lanes, poller)
		l.wg.Add(1)
		go func() { defer l.wg.Done(); poller.Run(ctx) }()
	}
	if o.Streams != nil && o.StreamARN != "" {
		agg := a.Stats()
		if o.StatsStore != nil {
			agg.Store = o.StatsStore
		}
		sp := &StreamPoller{Streams: o.Streams, StreamARN: o.StreamARN, BatchSize: schema.StatsBatch, Every: 250 * time.Millisecond,
			MaxRetries: schema.StatsRetries, Log: a.Log,
			Apply: func(ctx context.Context, r []st.Record) error { return agg.Apply(ctx, stats.FromStreams(r)) }}
		l.wg.Add(1)
		go func() { defer l.wg.Done(); sp.Run(ctx) }()
	}
	if o.SweepEvery > 0 {
		l.wg.Add(1)
		// The same scheduled event EventBridge sends (events/sweeper.json).
		go func() { defer l.wg.Done(); l.every(ctx, o.SweepEvery, 5*time.Minute, scheduledEvent) }()
	}
	if o.ScheduleEvery == 0 {
		o.ScheduleEvery = time.Minute
	}
	if o.ScheduleEvery > 0 {
		l.wg.Add(1)
		// The scheduler rule's constant input (events/scheduler.json).
		go func() { defer l.wg.Done(); l.every(ctx, o.ScheduleEvery, time.Minute, ScheduleInput) }()
	}
	return l, nil
}

// SlotWaits is how long the deliver invocations have slept for rate slots
// so far (delivery.Worker.SlotWaits).
func (l *Local) SlotWaits() time.Duration { return l.worker.SlotWaits() }

// DeliverBilled is the deliver invocations' durations so far, added up
// over the lanes: what Lambda would bill.
func (l *Local) DeliverBilled() time.Duration {
	var d time.Duration
	for _, p := range l.lanes {
		d += p.Billed()
	}
	return d
}

// ScheduleInput is what the scheduler rule sends the sweeper function.
func ScheduleInput() []byte { return []byte(`{"mode":"schedule"}`) }

// every invokes the sweeper function with event() at each tick of its
// schedule (nextTick).
func (l *Local) every(ctx context.Context, every, timeout time.Duration, event func() []byte) {
	sweeper, _ := Handler(l.app, "sweeper")
	for {
		t := time.NewTimer(time.Until(nextTick(time.Now(), every)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			sctx, cancel := context.WithTimeout(ctx, timeout)
			_, _ = sweeper.Invoke(sctx, event())
			cancel()
		}
	}
}

// nextTick is a schedule's next tick after now: the next multiple of every
// on the wall clock. An EventBridge rate schedule keeps its cadence
// whatever its target does; a timer started with the process would not: a
// runner started again (the soak's killed process) would wait a whole
// interval from its start, and the sweep due before it came a restart late.
// A tick missed while an invocation runs is skipped, as a ticker's is.
func nextTick(now time.Time, every time.Duration) time.Time {
	return now.Truncate(every).Add(every)
}

func scheduledEvent() []byte {
	return []byte(`{"version":"0","id":"local","detail-type":"Scheduled Event","source":"aws.events",` +
		`"account":"000000000000","time":"` + time.Now().UTC().Format(time.RFC3339) + `","region":"us-east-1",` +
		`"resources":["arn:aws:events:us-east-1:000000000000:rule/gifq-webhooks-sweeper"],"detail":{}}`)
}

// Stop shuts the API down and lets running invocations finish.
func (l *Local) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.srv.Shutdown(ctx)
	l.cancel()
	l.wg.Wait()
}

// arnOf makes the queue ARN the event source mapping would report.
func arnOf(url string) string {
	return "arn:aws:sqs:us-east-1:000000000000:" + url[strings.LastIndex(url, "/")+1:]
}
