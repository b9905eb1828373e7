// Package app wires the system's parts from a Config: the same wiring for
// the Lambda functions (functions/*/main.go) and the local runner.
package app

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/delivery"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/envelope"
	"github.com/gifq/webhooks/shared/httpapi"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/onboard"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/redrive"
	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/sender"
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
	Sender  *sender.Sender
	// OpEvents publishes operational events (package opevents): to the
	// stack's bus when OPS_EVENT_BUS names one, else as log lines.
	OpEvents opevents.Publisher
	// Destinations is the worker's Sender and the API's destination check:
	// HTTP through Sender; the AWS types once FromEnv has an AWS config.
	Destinations *destination.Router
	Log          *slog.Logger
	Metrics      *obs.Metrics
	Now          func() time.Time
}

// New wires an App. out receives logs and metrics (stdout in Lambda).
func New(cfg config.Config, db store.DynamoDB, q SQS, out io.Writer, function string) *App {
	return newApp(cfg, db, q, out, obs.NewLogger(out, cfg.LogLevel, function))
}

func newApp(cfg config.Config, db store.DynamoDB, q SQS, out io.Writer, log *slog.Logger) *App {
	st := store.New(db, cfg.TableName)
	web := sender.New(sender.Options{Policy: cfg.Policy(), Timeout: cfg.DeliveryTimeout})
	qu := queue.New(q, cfg.QueueURL, cfg.DLQURL)
	if cfg.SlowQueueURL != "" {
		qu.WithSlowLane(cfg.SlowQueueURL)
	}
	return &App{
		Config:       cfg,
		Store:        st,
		Queue:        qu,
		SQS:          q,
		Limiter:      ratelimit.New(db, cfg.TableName, store.RateKey, cfg.RatePerSecond).Admitting(schema.Table.TTLAttribute, store.IngestLimitKey),
		Sender:       web,
		Destinations: destination.NewRouter(destination.HTTP{Sender: web}),
		// No bus client here: FromEnv puts the bus in place when the
		// deployment names one; make dev and the tests log the events.
		OpEvents: opevents.Log{Log: log},
		Log:      log,
		Metrics:  obs.NewMetrics(out, cfg.Metrics, cfg.MetricsNamespace, cfg.Stage),
		Now:      time.Now,
	}
}

// FromEnv wires an App for a Lambda function from its environment. AWS
// endpoints can be overridden with the SDK's AWS_ENDPOINT_URL_* variables.
func FromEnv(ctx context.Context, function string, out io.Writer) (*App, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := obs.NewLogger(out, cfg.LogLevel, function) // the function's lines and the SDK's, through one handler
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithHTTPClient(awsTransport(nil)),
		awsconfig.WithLogger(obs.SDKLogger(log)))
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	awsCfg.HTTPClient = oneWrite{awsCfg.HTTPClient} // as AWSHTTPClient, around the client that has AWS_CA_BUNDLE's certificates
	if obs.TracingOn() {
		awsCfg.APIOptions = append(awsCfg.APIOptions, obs.AWSTracing) // a subsegment per AWS call
	}
	a := newApp(cfg, newDynamoDB(awsCfg), sqs.NewFromConfig(awsCfg), out, log)
	if cfg.OpsEventBus != "" {
		a.UseEventBus(eventbridge.NewFromConfig(awsCfg), cfg.OpsEventBus)
	}
	a.UseAWSDestinations(awsCfg)
	if err := needsKMS(function, cfg.KMSKeyID); err != nil {
		return nil, err
	}
	if cfg.KMSKeyID != "" {
		a.UseKMS(kms.NewFromConfig(awsCfg), cfg.KMSKeyID)
	}
	return a, nil
}

// newDynamoDB is the functions' DynamoDB client: its endpoint resolved once,
// not per call (CacheDynamoDBEndpoints).
func newDynamoDB(awsCfg aws.Config) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsCfg, CacheDynamoDBEndpoints)
}

// sealingFunctions read or write endpoint secrets and signing keys.
var sealingFunctions = map[string]bool{"api": true, "deliver": true}

// needsKMS refuses to start a function that handles secrets without the key
// that seals them: it would write them in plaintext (or fail to read them).
func needsKMS(function, keyID string) error {
	if sealingFunctions[function] && keyID == "" {
		return fmt.Errorf("KMS_KEY_ID is required by the %s function: it seals the endpoints' signing secrets and keys", function)
	}
	return nil
}

// UseKMS makes the store keep signing secrets and keys sealed under the
// KMS key keyID (package envelope): one Decrypt per cold start, then cached.
func (a *App) UseKMS(k envelope.KMS, keyID string) *App {
	a.Store.SealWith(envelope.New(k, keyID, a.Store))
	return a
}

// UseEventBus makes the App publish operational events to the EventBridge
// bus named bus (its name or ARN).
func (a *App) UseEventBus(client opevents.PutEventsAPI, bus string) *App {
	a.OpEvents = &opevents.Bus{Client: client, Name: bus, Log: a.Log, Metrics: a.Metrics}
	return a
}

// UseAWSDestinations delivers to customers' SQS queues, SNS topics and
// EventBridge buses, assuming their roles with awsCfg's credentials.
func (a *App) UseAWSDestinations(awsCfg aws.Config) *App {
	p := &destination.AWS{Base: awsCfg, Regions: a.Config.DestinationRegions, DefaultTimeout: a.Config.DeliveryTimeout}
	a.Destinations.Register(p, domain.DestinationSQS, domain.DestinationSNS, domain.DestinationEventBridge)
	return a
}

// API is the api function's handler.
func (a *App) API() *httpapi.API {
	return &httpapi.API{
		Store: a.Store,
		Ingest: &ingest.Service{Store: a.Store, Queue: a.Queue, Limiter: a.Limiter, DefaultRate: a.Config.RatePerSecond,
			Lanes: a.Config.SlowQueueURL != "", Log: a.Log, Metrics: a.Metrics, Now: a.Now},
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

// Worker is the deliver function's handler.
func (a *App) Worker() *delivery.Worker {
	return &delivery.Worker{
		Policy: lifecycle.Policy{Schedule: a.Config.Retry, MaxInFlight: a.Config.EndpointMaxInFlight,
			LeaseFor: LeaseFor(a.Config.DeliveryTimeout), AttemptTimeout: a.Config.DeliveryTimeout,
			DisableAfter: a.Config.EndpointDisableAfter, SweepGrace: a.Config.SweepGrace, ParkAfter: a.Config.ParkAfter,
			BreakerOff: !a.Config.Breaker, Lead: ratelimit.Lead, MaxEarly: ratelimit.MaxEarly, Lanes: a.Config.SlowQueueURL != ""},
		Store: a.Store, Queue: a.Queue, Limiter: a.Limiter, Sender: a.Destinations, Events: a.OpEvents,
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

// Onboarder is the ops function's handler: an account and its first API key.
func (a *App) Onboarder() *onboard.Onboarder {
	return &onboard.Onboarder{Store: a.Store, Log: a.Log}
}

// LeaseFor is how long a claim holds an attempt: the HTTP exchange is
// bounded by the delivery timeout, and the writes around it take far less
// than the margin. After it, another worker (or the sweeper) may take over.
func LeaseFor(deliveryTimeout time.Duration) time.Duration { return 2*deliveryTimeout + 5*time.Second }

// Start is a function's whole main: wire the App from the environment and
// hand the Lambda runtime the handler handler picks. A bad environment stops
// the function at init, where Lambda reports it.
func Start(function string, handler func(*App) any) {
	TuneGC(os.Getenv)
	// Spans to the X-Ray daemon Lambda runs with Active tracing; nothing
	// without one. The process ends with the environment: no stop.
	obs.StartTracing()
	a, err := FromEnv(context.Background(), function, os.Stdout)
	if err != nil {
		log.Fatalf("%s: %v", function, err)
	}
	lambda.Start(handler(a))
}
