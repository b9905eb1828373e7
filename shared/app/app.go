// Package app wires the system's parts from a Config: the same wiring for
// the Lambda functions (through package onlambda, which adds what only AWS
// has: the SDK's default configuration, the event bus, AWS destinations)
// and the local runner.
package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/delivery"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/envelope"
	"github.com/gifq/webhooks/shared/httpapi"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/notify"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/onboard"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/redrive"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/stats"
	"github.com/gifq/webhooks/shared/store"
	"github.com/gifq/webhooks/shared/sweep"
)

// SQS is every SQS call the functions make.
type SQS interface {
	queue.SQS
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
}

// App holds the shared parts.
type App struct {
	Config  config.Config
	Store   *store.Store
	Queue   *queue.Queue
	SQS     SQS
	Limiter *ratelimit.Limiter
	Sender  *webhook.Sender
	// OpEvents publishes operational events (package opevents): to the
	// stack's bus when OPS_EVENT_BUS names one, else as log lines.
	OpEvents opevents.Publisher
	// Destinations is the worker's Sender and the API's destination check:
	// HTTP through Sender; the AWS types once onlambda.FromEnv has an AWS config.
	Destinations *destination.Router
	// Mail sends notices by email (package notifymail): onlambda.MailNotices
	// sets it when NOTIFY_EMAIL_FROM names a sender; nil, none (make dev).
	Mail notify.Mailer
	// AWS is the SDK configuration onlambda.FromEnv loaded, for the clients
	// only some functions make (MailNotices); zero in make dev and tests.
	AWS     aws.Config
	Log     *slog.Logger
	Metrics *obs.Metrics
	Now     func() time.Time
}

// New wires an App. out receives logs and metrics (stdout in Lambda).
func New(cfg config.Config, db store.DynamoDB, q SQS, out io.Writer, function string) *App {
	return NewWithLogger(cfg, db, q, out, obs.NewLogger(out, cfg.LogLevel, function))
}

// NewWithLogger wires an App that logs through log (package onlambda: the
// logger the SDK's configuration was loaded with).
func NewWithLogger(cfg config.Config, db store.DynamoDB, q SQS, out io.Writer, log *slog.Logger) *App {
	st := store.New(db, cfg.TableName)
	web := webhook.New(webhook.Options{Policy: cfg.Policy(), Timeout: cfg.DeliveryTimeout})
	qu := queue.New(q, cfg.QueueURL, cfg.DLQURL)
	if cfg.SlowQueueURL != "" {
		qu.WithSlowLane(cfg.SlowQueueURL)
	}
	if cfg.PacedQueueURL != "" {
		qu.WithPacedLane(cfg.PacedQueueURL)
	}
	return &App{
		Config:       cfg,
		Store:        st,
		Queue:        qu,
		SQS:          q,
		Limiter:      ratelimit.New(db, cfg.TableName, store.RateKey, cfg.RatePerSecond).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey),
		Sender:       web,
		Destinations: destination.NewRouter(web),
		// No bus client here: onlambda.FromEnv puts the bus in place when the
		// deployment names one; make dev and the tests log the events.
		OpEvents: opevents.Log{Log: log},
		Log:      log,
		Metrics:  obs.NewMetrics(out, cfg.Metrics, cfg.MetricsNamespace, cfg.Stage),
		Now:      time.Now,
	}
}

// WithClock makes every part of the app read time from now (New's is
// time.Now): the functions, the store's conditions and the rate limiter's
// bookings, as one host's clock (the soak's jumps move all of them; a
// limiter left on the real clock booked slots a worker 2 s ahead took for
// past, and its deliveries yielded their claims every second until the
// clock came back).
func (a *App) WithClock(now func() time.Time) *App {
	a.Now = now
	a.Store.WithClock(now)
	a.Limiter.WithClock(now)
	return a
}

// UseKMS makes the store keep signing secrets and keys sealed under the
// KMS key keyID (package envelope): one Decrypt per cold start, then cached.
func (a *App) UseKMS(k envelope.KMS, keyID string) *App {
	a.Store.SealWith(envelope.New(k, keyID, a.Store))
	return a
}

// API is the api function's handler.
func (a *App) API() *httpapi.API {
	return &httpapi.API{
		Store:  a.Store,
		Ingest: a.ingest(),
		Policy: a.Config.Policy(), Resolver: net.DefaultResolver, Queue: a.Queue, Limiter: a.Limiter,
		DefaultRate: a.Config.RatePerSecond, RotationGrace: a.Config.SecretRotationGrace, KeyCacheTTL: a.Config.APIKeyCacheTTL,
		Portal:       httpapi.Portal{Sessions: a.Store, Settings: a.Config.Portal},
		KeyLimits:    a.KeyLimits(),
		EgressIPs:    a.Config.EgressIPs,
		OpEvents:     a.OpEvents,
		Destinations: a.Destinations,
		Log:          a.Log, Now: a.Now,
	}
}

// ingest is the service that accepts events (the API's, and the notices').
func (a *App) ingest() *ingest.Service {
	return &ingest.Service{Store: a.Store, Queue: a.Queue, Limiter: a.Limiter, DefaultRate: a.Config.RatePerSecond,
		Lanes: a.Config.SlowQueueURL != "", Paced: a.Config.PacedQueueURL != "", Log: a.Log, Metrics: a.Metrics, Now: a.Now}
}

// Notifier is the worker's publisher: the operational events (OpEvents),
// and the account's own notices of its endpoints failing, disabled or
// recovered (package notify).
func (a *App) Notifier() *notify.Notifier {
	return &notify.Notifier{Next: a.OpEvents, Ingest: a.ingest(), DisableAfter: a.Config.EndpointDisableAfter,
		PortalURL: a.Config.Portal.URL, Mail: a.Mail, Log: a.Log}
}

// Worker is the deliver function's handler.
func (a *App) Worker() *delivery.Worker {
	return &delivery.Worker{
		Policy: lifecycle.Policy{Schedule: a.Config.Retry, MaxInFlight: a.Config.EndpointMaxInFlight, CapWhenSlow: a.Config.EndpointCapWhenSlow,
			LeaseFor: LeaseFor(a.Config.DeliveryTimeout), AttemptTimeout: a.Config.DeliveryTimeout,
			DisableAfter: a.Config.EndpointDisableAfter, SweepGrace: a.Config.SweepGrace, ParkAfter: a.Config.ParkAfter,
			BreakerOff: !a.Config.Breaker, MaxEarly: pace.MaxEarly,
			Lanes: a.Config.SlowQueueURL != "", Paced: a.Config.PacedQueueURL != ""},
		Store: a.Store, Queue: a.Queue, Limiter: a.Limiter, Sender: a.Destinations, Events: a.Notifier(),
		Log: a.Log, Metrics: a.Metrics, Now: a.Now,
	}
}

// Sweeper is the sweeper function's handler.
func (a *App) Sweeper() *sweep.Sweeper {
	return &sweep.Sweeper{
		Store: a.Store, Queue: a.Queue, MaxAttempts: a.Config.Retry.MaxAttempts(), Grace: a.Config.SweepGrace,
		OpEvents: a.OpEvents, Log: a.Log, Metrics: a.Metrics, Now: a.Now,
	}
}

// SweeperFunction is the sweeper function's handler: the 15-minute sweep,
// or, with {"mode":"schedule"}, the every-minute scheduler of parked waits.
func (a *App) SweeperFunction() sweep.Function {
	return sweep.Function{Sweeper: a.Sweeper(), Scheduler: a.Scheduler(), Metrics: a.Metrics}
}

// Scheduler sends parked deliveries' messages shortly before they are due.
func (a *App) Scheduler() *sweep.Scheduler {
	return &sweep.Scheduler{Store: a.Store, Queue: a.Queue, Ahead: a.Config.ScheduleAhead, Log: a.Log, Now: a.Now}
}

// Redriver is the redrive function's handler.
func (a *App) Redriver() *redrive.Redriver {
	return &redrive.Redriver{SQS: a.SQS, DLQURL: a.Config.DLQURL, Store: a.Store, Queue: a.Queue, Log: a.Log, Metrics: a.Metrics}
}

// Stats is the stats function's handler: the table's stream folded into
// hourly counters (package stats).
func (a *App) Stats() *stats.Aggregator {
	return &stats.Aggregator{Store: a.Store, Log: a.Log, Metrics: a.Metrics}
}

// Onboarder is the ops function's handler: an account and its first API key.
func (a *App) Onboarder() *onboard.Onboarder {
	return &onboard.Onboarder{Store: a.Store, Log: a.Log}
}

// LeaseFor is how long a claim holds an attempt: the HTTP exchange is
// bounded by the delivery timeout, and the writes around it take far less
// than the margin. After it, another worker (or the sweeper) may take over.
func LeaseFor(deliveryTimeout time.Duration) time.Duration { return 2*deliveryTimeout + 5*time.Second }
