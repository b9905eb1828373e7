// Package onlambda starts a function on Lambda: its App (package app) wired
// from the environment, with the AWS SDK's default configuration, the
// EventBridge bus for operational events, the AWS destinations and SES for
// notices by email. It is
// apart from package app so that the local runner, which wires the same App
// against the emulators, links neither the SDK's credential chain (SSO,
// STS, IMDS) nor the EventBridge and SNS clients: a tenth less to compile
// before a newcomer's first webhook (docs/local.md).
package onlambda

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/ses"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/destination/providers"
	"github.com/gifq/webhooks/shared/notifymail"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/opevents/eventbus"
)

// Start is a function's whole main: wire the App from the environment and
// hand the Lambda runtime the handler handler picks. A bad environment stops
// the function at init, where Lambda reports it.
func Start(function string, handler func(*app.App) any) {
	app.TuneGC(os.Getenv)
	// Spans to the X-Ray daemon Lambda runs with Active tracing; nothing
	// without one. The process ends with the environment: no stop.
	obs.StartTracing()
	a, err := FromEnv(context.Background(), function, os.Stdout)
	if err != nil {
		log.Fatalf("%s: %v", function, err)
	}
	lambda.Start(handler(a))
}

// FromEnv wires an App for a Lambda function from its environment. AWS
// endpoints can be overridden with the SDK's AWS_ENDPOINT_URL_* variables.
func FromEnv(ctx context.Context, function string, out io.Writer) (*app.App, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := obs.NewLogger(out, cfg.LogLevel, function) // the function's lines and the SDK's, through one handler
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithHTTPClient(app.AWSTransport()),
		awsconfig.WithLogger(obs.SDKLogger(log)))
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	awsCfg.HTTPClient = app.OneWrite{Next: awsCfg.HTTPClient} // as app.AWSHTTPClient, around the client that has AWS_CA_BUNDLE's certificates
	if obs.TracingOn() {
		awsCfg.APIOptions = append(awsCfg.APIOptions, obs.AWSTracing) // a subsegment per AWS call
	}
	a := app.NewWithLogger(cfg, newDynamoDB(awsCfg), sqs.NewFromConfig(awsCfg), out, log)
	if cfg.OpsEventBus != "" {
		a.OpEvents = &eventbus.Bus{Client: eventbridge.NewFromConfig(awsCfg), Name: cfg.OpsEventBus, Log: a.Log, Metrics: a.Metrics}
	}
	a.AWS = awsCfg
	providers.UseAWS(a.Destinations, awsCfg, cfg.DestinationRegions, cfg.DeploymentAccount, cfg.DeliveryTimeout)
	if err := needsKMS(function, cfg.KMSKeyID); err != nil {
		return nil, err
	}
	if cfg.KMSKeyID != "" {
		a.UseKMS(kms.NewFromConfig(awsCfg), cfg.KMSKeyID)
	}
	return a, nil
}

// MailNotices makes the worker mail its notices through SES when
// NOTIFY_EMAIL_FROM names a sender (package notifymail); deliver's main
// calls it, so that only deliver's code can send mail or write mail claims.
func MailNotices(a *app.App) *app.App {
	if a.Config.NotifyEmailFrom != "" {
		a.Mail = &notifymail.Sender{SES: ses.NewFromConfig(a.AWS), From: a.Config.NotifyEmailFrom, Store: a.Store, Log: a.Log}
	}
	return a
}

// newDynamoDB is the functions' DynamoDB client: its endpoint resolved once,
// not per call (app.CacheDynamoDBEndpoints).
func newDynamoDB(awsCfg aws.Config) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsCfg, app.CacheDynamoDBEndpoints)
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
