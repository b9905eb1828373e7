package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/schema"
)

// The functions, as named under functions/ and bin/.
const (
	FnAPI     = "api"
	FnDeliver = "deliver"
	FnSweeper = "sweeper"
	FnRedrive = "redrive"
	FnOps     = "ops"
	FnStats   = "stats"
	// FnReceiver is the optional demo receiver (receiver.go).
	FnReceiver = "receiver"
)

// Functions lists every function in build order.
var Functions = []string{FnAPI, FnDeliver, FnSweeper, FnRedrive, FnOps, FnStats}

// BuiltFunctions are the functions make build and the CDK app build: every
// deployed one, and the demo receiver (deployed with context demoReceiver).
var BuiltFunctions = append(append([]string{}, Functions...), FnReceiver)

// Function settings, as plain Go values. deliver's timeout is the one the queue's visibility
// timeout is derived from (schema.FunctionTimeout).
var functionSpecs = map[string]struct {
	ID          string
	Description string
	MemoryMB    float64
	Timeout     time.Duration
	// SendsToOwnTrigger: the function sends messages to the queue that
	// invokes it, by design (deliver puts every retry and deferral of up to
	// 15 minutes back on the delivery queue). Lambda's recursive loop
	// detection would stop such a chain after about 16 hops and drop the
	// message, so these functions get RecursiveLoop Allow; the
	// RecursiveInvocationsDropped alarm watches every function. The sweeper
	// (EventBridge) and redrive (console) send to the delivery queue but are
	// not triggered by it, and the api is triggered by API Gateway.
	SendsToOwnTrigger bool
}{
	FnAPI:      {"ApiFunction", "Ingest and management API behind API Gateway", 256, schema.APITimeout, false},
	FnDeliver:  {"DeliverFunction", "Delivers webhook attempts from the delivery queue", schema.DeliverMemoryMB, schema.FunctionTimeout, true},
	FnSweeper:  {"SweeperFunction", "Re-queues due deliveries that were never dispatched (every 15 minutes); sends parked deliveries (every minute)", 256, 5 * time.Minute, false},
	FnRedrive:  {"RedriveFunction", "Moves DLQ messages back for a fresh series of attempts (run from the console)", 128, 5 * time.Minute, false},
	FnReceiver: {"DemoReceiverFunction", "Demo receiver: verifies each webhook's signature and logs it (context demoReceiver)", 128, 10 * time.Second, false},
	FnStats:    {"StatsFunction", "Folds the table's stream into hourly delivery counters per endpoint and account", 128, 30 * time.Second, false},
	FnOps:      {"OpsFunction", "Creates an account and its first API key, returned once (run from the console: events/ops-create-account.json)", 128, 30 * time.Second, false},
}

// DeliverGoMemLimit is three quarters of the deliver function's memory.
var DeliverGoMemLimit = fmt.Sprintf("%dMiB", schema.DeliverMemoryMB*3/4)

// SweepRate is the sweeper's schedule.
const SweepRate = 15 // minutes

// ScheduleRate is the scheduler's (the sweeper function with ScheduleInput):
// every minute it sends the parked deliveries due within SCHEDULE_AHEAD.
const ScheduleRate = 1 // minute

// ScheduleInput is the scheduler rule's constant input (events/scheduler.json).
var ScheduleInput = map[string]any{"mode": "schedule"}

// LogRetention is how long function and access logs are kept.
const LogRetention = awslogs.RetentionDays_ONE_MONTH

// StackProps configures the stack.
type StackProps struct {
	awscdk.StackProps
	Config Config
	// AssetDir holds <fn>/bootstrap for every function (`make build` writes
	// bin/). Tests pass a temporary folder with dummy files.
	AssetDir string
}

// Stack is the webhook delivery system, with handles for tests.
type Stack struct {
	awscdk.Stack
	Config     Config
	Table      awsdynamodb.Table
	Queue      awssqs.Queue
	SlowQueue  awssqs.Queue // the slow lane: failing endpoints' messages (lifecycle.Lane)
	PacedQueue awssqs.Queue // the paced lane: messages whose slot is booked ahead (lifecycle.LanePaced)
	DLQ        awssqs.Queue
	Functions  map[string]awslambda.Function
	Roles      map[string]awsiam.Role
	Api        awsapigateway.LambdaRestApi // the REST API; nil with api=http
	HTTPApi    awsapigatewayv2.HttpApi     // the HTTP API with api=http; nil otherwise
	APIURL     *string                     // the API's base URL, whichever it is
	APIMetrics apiMetrics                  // the API's metrics, whichever it is
	AlarmTopic awssns.Topic                // the topic alarmEmail makes; nil without it
	Alarms     map[string]awscloudwatch.Alarm
	Dashboard  awscloudwatch.Dashboard
	// The sweeper's two EventBridge rules, and the DLQ of their targets
	// that is also the sweeper's own async DLQ (schedules.go).
	SweepRule, ScheduleRule awsevents.Rule
	ScheduleDLQ             awssqs.Queue
	alarmActions            []awscloudwatch.IAlarmAction // none without alarmEmail or alarmTopicArn
	// The API stage's execution log group, and its WAF web ACL (nil
	// without context waf=true) (api_protection.go).
	ExecutionLogs awslogs.LogGroup
	WebACL        awswafv2.CfnWebACL
	Egress        *Egress // static egress IPs; nil unless egressStaticIps (egress.go)
	// The demo receiver's function URL; nil unless demoReceiver (receiver.go).
	ReceiverURL awslambda.FunctionUrl
	// OpsEventBus carries the operational events (opevents.go).
	OpsEventBus awsevents.EventBus
	// SigningKey seals signing secrets and keys (keys.go).
	SigningKey awskms.Key
}

// StackName is the CloudFormation stack's name for a stage.
func StackName(stage string) string { return "GifqWebhooks-" + stage }

// NewStack builds the stack. It panics on an invalid configuration (the app
// validates first and prints the errors).
func NewStack(scope constructs.Construct, id string, props *StackProps) *Stack {
	cfg := props.Config
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if props.AssetDir == "" {
		panic("StackProps.AssetDir is empty")
	}
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	s := &Stack{
		Stack: stack, Config: cfg,
		Functions: map[string]awslambda.Function{}, Roles: map[string]awsiam.Role{},
		Alarms: map[string]awscloudwatch.Alarm{},
	}
	awscdk.Tags_Of(stack).Add(jsii.String("app"), jsii.String("gifq-webhooks"), nil)
	awscdk.Tags_Of(stack).Add(jsii.String("stage"), jsii.String(cfg.Stage), nil)

	// Production keeps its data when the stack (or a resource) is deleted;
	// other stages clean up after themselves.
	removal := awscdk.RemovalPolicy_DESTROY
	if cfg.IsProd() {
		removal = awscdk.RemovalPolicy_RETAIN
	}
	name := *stack.StackName()

	s.Table = newTable(stack, cfg, removal)
	s.Queue, s.SlowQueue, s.PacedQueue, s.DLQ = newQueues(stack, name, removal)

	env := cfg.Environment()
	env["TABLE_NAME"] = *s.Table.TableName()
	env["QUEUE_URL"] = *s.Queue.QueueUrl()
	env["DLQ_URL"] = *s.DLQ.QueueUrl()

	arch := awslambda.Architecture_ARM_64()
	if cfg.LambdaArchitecture == "x86_64" {
		arch = awslambda.Architecture_X86_64()
	}
	for _, fn := range Functions {
		fnEnv := env
		if fn == FnAPI {
			fnEnv = cfg.WithPortal(env)
		}
		switch fn {
		case FnAPI, FnDeliver: // the two that send to the slow and paced lanes
			fnEnv = maps.Clone(fnEnv)
			fnEnv["SLOW_QUEUE_URL"] = *s.SlowQueue.QueueUrl()
			fnEnv["PACED_QUEUE_URL"] = *s.PacedQueue.QueueUrl()
		}
		if fn == FnDeliver {
			// At 128 MB: Go's collector keeps the heap under this soft limit
			// (working harder near it) rather than the function running out.
			fnEnv["GOMEMLIMIT"] = DeliverGoMemLimit
		}
		s.Functions[fn], s.Roles[fn] = newFunction(stack, name, fn, props.AssetDir, arch, fnEnv, removal)
	}

	// Least privilege, function by function: the table's actions and indexes
	// are in iam.go (tableGrants, checked against the code by a test).
	api, deliver, sweeper, redrive := s.Functions[FnAPI], s.Functions[FnDeliver], s.Functions[FnSweeper], s.Functions[FnRedrive]
	s.grantTable()
	// api: ingest sends the new deliveries to the delivery queue, to its
	// slow lane for an endpoint that is failing, or to its paced lane for a
	// slot booked ahead.
	s.Queue.GrantSendMessages(api)
	s.SlowQueue.GrantSendMessages(api)
	s.PacedQueue.GrantSendMessages(api)
	// deliver: consumes the three lanes (the event sources grant it), each
	// with its own maximum concurrency, re-sends deferred messages on any,
	// dead-letters.
	s.Queue.GrantSendMessages(deliver)
	s.SlowQueue.GrantSendMessages(deliver)
	s.PacedQueue.GrantSendMessages(deliver)
	s.DLQ.GrantSendMessages(deliver)
	for _, lane := range []struct {
		q      awssqs.Queue
		most   int
		batch  int
		window time.Duration
	}{{s.Queue, cfg.DeliverMaxConcurrency, 10, 0}, {s.SlowQueue, cfg.DeliverSlowMaxConcurrency, 10, 0},
		{s.PacedQueue, cfg.DeliverPacedMaxConcurrency, schema.PacedBatch, schema.PacedWindow}} {
		props := &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(float64(lane.batch)),
			ReportBatchItemFailures: jsii.Bool(true),
			MaxConcurrency:          jsii.Number(float64(lane.most)),
		}
		if lane.window > 0 {
			props.MaxBatchingWindow = awscdk.Duration_Seconds(jsii.Number(lane.window.Seconds()))
		}
		deliver.AddEventSource(awslambdaeventsources.NewSqsEventSource(lane.q, props))
	}
	// sweeper: re-queues (on the fast lane: the worker moves a failing
	// endpoint's message to the slow lane), dead-letters deliveries that are
	// out of attempts; it decides per delivery and reads no queue.
	s.Queue.GrantSendMessages(sweeper)
	s.DLQ.GrantSendMessages(sweeper)
	// Both EventBridge schedules, their target DLQ (schedules.go).
	s.addSchedules(name, sweeper, removal)
	// redrive: reads and deletes DLQ messages, sends them back to the
	// delivery queue. No trigger.
	s.DLQ.GrantConsumeMessages(redrive)
	s.Queue.GrantSendMessages(redrive)

	// stats: the table's stream, delivery items' changes only (the filter:
	// no invocation for other items), in batches of up to StatsBatch
	// gathered for StatsWindow; a failed batch is halved and retried at
	// most StatsRetries times, then skipped (counters are approximate on
	// retry: shared/stats/README.md). The event source grants the stream
	// read. Not on LocalStack unless asked (Config.LocalStackStats).
	if cfg.Stage != LocalStackStage || cfg.LocalStackStats {
		s.Functions[FnStats].AddEventSource(awslambdaeventsources.NewDynamoEventSource(s.Table, &awslambdaeventsources.DynamoEventSourceProps{
			StartingPosition:   awslambda.StartingPosition_LATEST,
			BatchSize:          jsii.Number(schema.StatsBatch),
			MaxBatchingWindow:  awscdk.Duration_Seconds(jsii.Number(schema.StatsWindow.Seconds())),
			BisectBatchOnError: jsii.Bool(true),
			RetryAttempts:      jsii.Number(schema.StatsRetries),
			Filters: &[]*map[string]interface{}{awslambda.FilterCriteria_Filter(&map[string]interface{}{
				"eventName": awslambda.FilterRule_IsEqual(jsii.String("MODIFY")),
				"dynamodb":  map[string]interface{}{"Keys": map[string]interface{}{"sk": map[string]interface{}{"S": awslambda.FilterRule_IsEqual(jsii.String("DLV"))}}},
			})},
		}))
	}

	s.addSigningKey(removal)  // keys.go: KMS key for sealed secrets, its grants, KMS_KEY_ID
	s.addOpsEventBus(name)    // opevents.go: the operational events' bus, PutEvents grants, OPS_EVENT_BUS
	s.addCustomerRoleAccess() // destinations.go: sts:AssumeRole into customers' roles (AWS destinations)
	s.addNoticeMail()         // notifymail.go: ses:SendEmail from notifyEmailFrom, NOTIFY_EMAIL_FROM (when set)
	if cfg.APIType == APIHTTP {
		var stage awsapigatewayv2.HttpStage
		s.HTTPApi, stage = newHTTPAPI(stack, name, cfg, api, removal) // httpapi.go
		s.APIURL, s.APIMetrics = stage.Url(), s.HTTPApi
	} else {
		s.Api = newAPI(stack, name, cfg, api, removal)
		s.APIURL, s.APIMetrics = s.Api.Url(), s.Api
	}
	s.addNoticeLinks() // notifymail.go: PORTAL_URL for the notices' links
	if cfg.DemoReceiver {
		s.addDemoReceiver(name, props.AssetDir, arch, removal) // receiver.go
	}
	s.addAPIProtection(name, removal) // api_protection.go

	s.addAlarms(name)
	s.addDashboard(name)
	s.addOutputs()
	s.Egress = addEgress(s)
	addNagSuppressions(s)
	addLintSkips(s) // checkov and cfn-lint (checkov.go)
	return s
}

func attribute(k schema.Key) *awsdynamodb.Attribute {
	t := awsdynamodb.AttributeType_STRING
	switch k.Type {
	case schema.String:
	case schema.Number:
		t = awsdynamodb.AttributeType_NUMBER
	default:
		panic(fmt.Sprintf("schema key %s: unknown type %q", k.Name, k.Type))
	}
	return &awsdynamodb.Attribute{Name: jsii.String(k.Name), Type: t}
}

// newTable builds the single table from schema.Table, as store.CreateTable
// does for the local emulator.
func newTable(stack awscdk.Stack, cfg Config, removal awscdk.RemovalPolicy) awsdynamodb.Table {
	t := schema.Table
	provisioned := cfg.TableCapacity == TableProvisioned
	billing, floor := awsdynamodb.BillingMode_PAY_PER_REQUEST, (*float64)(nil)
	if provisioned {
		billing, floor = awsdynamodb.BillingMode_PROVISIONED, jsii.Number(float64(cfg.TableMinUnits))
	}
	table := awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:  attribute(t.PK),
		SortKey:       attribute(t.SK),
		BillingMode:   billing,
		ReadCapacity:  floor,
		WriteCapacity: floor,
		Encryption:    awsdynamodb.TableEncryption_AWS_MANAGED,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		TimeToLiveAttribute: jsii.String(t.TTLAttribute),
		Stream:              awsdynamodb.StreamViewType(t.StreamView),
		DeletionProtection:  jsii.Bool(cfg.IsProd()),
		RemovalPolicy:       removal,
	})
	for _, ix := range t.Indexes {
		p := &awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   attribute(ix.PK),
			SortKey:        attribute(ix.SK),
			ProjectionType: awsdynamodb.ProjectionType(ix.Projection),
			ReadCapacity:   floor,
			WriteCapacity:  floor,
		}
		if len(ix.NonKey) > 0 {
			p.NonKeyAttributes = jsii.Strings(ix.NonKey...)
		}
		table.AddGlobalSecondaryIndex(p)
	}
	if provisioned {
		autoScale(table, cfg)
	}
	return table
}

// autoScale keeps the provisioned table's and each index's reads and
// writes at TableTargetUsePct of their capacity, between the configured
// floor and ceiling: an index whose capacity runs out throttles the
// table's writes, so each scales on its own.
func autoScale(table awsdynamodb.Table, cfg Config) {
	bounds := &awsdynamodb.EnableScalingProps{MinCapacity: jsii.Number(float64(cfg.TableMinUnits)), MaxCapacity: jsii.Number(float64(cfg.TableMaxUnits))}
	target := &awsdynamodb.UtilizationScalingProps{TargetUtilizationPercent: jsii.Number(TableTargetUsePct)}
	table.AutoScaleReadCapacity(bounds).ScaleOnUtilization(target)
	table.AutoScaleWriteCapacity(bounds).ScaleOnUtilization(target)
	for _, ix := range schema.Table.Indexes {
		table.AutoScaleGlobalSecondaryIndexReadCapacity(jsii.String(ix.Name), bounds).ScaleOnUtilization(target)
		table.AutoScaleGlobalSecondaryIndexWriteCapacity(jsii.String(ix.Name), bounds).ScaleOnUtilization(target)
	}
}

// newQueues builds the delivery queue, its slow and paced lanes and their
// DLQ from schema.Queues, as queue.CreateQueues does for the local emulator.
// The queues are named <stack>-deliveries, <stack>-deliveries-slow,
// <stack>-deliveries-paced and <stack>-dlq, so that the DLQ's redrive allow policy can name its source
// queues by ARN without a reference cycle (their redrive policies already
// refer to the DLQ).
func newQueues(stack awscdk.Stack, name string, removal awscdk.RemovalPolicy) (queue, slow, paced, dlq awssqs.Queue) {
	q := schema.Queues
	queueName, slowName, pacedName := name+"-"+q.DeliveryQueueTag, name+"-"+q.SlowQueueTag, name+"-"+q.PacedQueueTag
	arnOf := func(n string) string {
		return *stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("sqs"), Resource: jsii.String(n)})
	}
	dlq = awssqs.NewQueue(stack, jsii.String("DeadLetterQueue"), &awssqs.QueueProps{
		QueueName:       jsii.String(name + "-" + q.DLQTag),
		RetentionPeriod: awscdk.Duration_Seconds(jsii.Number(q.DLQRetention.Seconds())),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		// Only the delivery queue and its lanes may use this DLQ.
		RedriveAllowPolicy: &awssqs.RedriveAllowPolicy{
			RedrivePermission: awssqs.RedrivePermission_BY_QUEUE,
			SourceQueues: &[]awssqs.IQueue{awssqs.Queue_FromQueueArn(stack, jsii.String("DeliveryQueueByName"), jsii.String(arnOf(queueName))),
				awssqs.Queue_FromQueueArn(stack, jsii.String("SlowQueueByName"), jsii.String(arnOf(slowName))),
				awssqs.Queue_FromQueueArn(stack, jsii.String("PacedQueueByName"), jsii.String(arnOf(pacedName)))},
		},
		RemovalPolicy: removal,
	})
	lane := func(id, queueName string) awssqs.Queue {
		return awssqs.NewQueue(stack, jsii.String(id), &awssqs.QueueProps{
			QueueName:         jsii.String(queueName),
			VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(q.VisibilityTimeout.Seconds())),
			RetentionPeriod:   awscdk.Duration_Seconds(jsii.Number(q.Retention.Seconds())),
			Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:        jsii.Bool(true),
			// Only the poison-message net: retries and deferrals set the
			// visibility themselves and never come near this count.
			DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(float64(q.MaxReceiveCount))},
			RemovalPolicy:   removal,
		})
	}
	return lane("DeliveryQueue", queueName), lane("SlowQueue", slowName), lane("PacedQueue", pacedName), dlq
}

// newFunction builds one Go function with its own role and log group. The
// role starts empty: log writing is granted on the function's own log
// group, and the stack adds each function's data grants.
func newFunction(stack awscdk.Stack, name, fn, assetDir string, arch awslambda.Architecture, env map[string]string, removal awscdk.RemovalPolicy) (awslambda.Function, awsiam.Role) {
	spec := functionSpecs[fn]
	logs := awslogs.NewLogGroup(stack, jsii.String(spec.ID+"Logs"), &awslogs.LogGroupProps{
		Retention:     LogRetention,
		RemovalPolicy: removal,
	})
	role := awsiam.NewRole(stack, jsii.String(spec.ID+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String(fmt.Sprintf("%s %s function", name, fn)),
	})
	logs.GrantWrite(role)
	environment := map[string]*string{}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		environment[k] = jsii.String(env[k])
	}
	recursion := awslambda.RecursiveLoop_TERMINATE
	if spec.SendsToOwnTrigger {
		recursion = awslambda.RecursiveLoop_ALLOW
	}
	f := awslambda.NewFunction(stack, jsii.String(spec.ID), &awslambda.FunctionProps{
		FunctionName:  jsii.String(name + "-" + fn),
		Description:   jsii.String(spec.Description),
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:  arch,
		Handler:       jsii.String("bootstrap"),
		Code:          awslambda.Code_FromAsset(jsii.String(filepath.Join(assetDir, fn)), nil),
		MemorySize:    jsii.Number(spec.MemoryMB),
		Timeout:       awscdk.Duration_Seconds(jsii.Number(spec.Timeout.Seconds())),
		Role:          role,
		LogGroup:      logs,
		Environment:   &environment,
		Tracing:       awslambda.Tracing_ACTIVE,
		RecursiveLoop: recursion,
		// Lean logs: JSON, so that Lambda filters its own START, END and
		// REPORT lines (INFO) out at WARN; the app's lines keep the app's
		// level (LOG_LEVEL), and EMF lines (no level: INFO) pass.
		LoggingFormat:    awslambda.LoggingFormat_JSON,
		SystemLogLevelV2: awslambda.SystemLogLevel_WARN,
	})
	// The function may only start once it can write its logs.
	f.Node().AddDependency(role)
	return f, role
}

// newAPI puts the api function behind a REST API (Lambda proxy on / and
// /{proxy+}) with stage throttling, access logs and execution logging.
func newAPI(stack awscdk.Stack, name string, cfg Config, fn awslambda.Function, removal awscdk.RemovalPolicy) awsapigateway.LambdaRestApi {
	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     LogRetention,
		RemovalPolicy: removal,
	})
	t := true
	// The account-wide logging role (and the account setting naming it)
	// follows the stage: prod keeps it, other stages delete it with the
	// stack. CDK would keep it everywhere.
	var roleRemoval awscdk.RemovalPolicy
	if cfg.APIGatewayCloudWatchRole {
		roleRemoval = removal
	}
	return awsapigateway.NewLambdaRestApi(stack, jsii.String("Api"), &awsapigateway.LambdaRestApiProps{
		CloudWatchRoleRemovalPolicy: roleRemoval,
		RestApiName:                 jsii.String(name),
		Description:                 jsii.String("Webhook ingest and management API (" + cfg.Stage + ")"),
		Handler:                     fn,
		Proxy:                       jsii.Bool(true),
		EndpointTypes:               &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL},
		CloudWatchRole:              jsii.Bool(cfg.APIGatewayCloudWatchRole),
		DeployOptions: &awsapigateway.StageOptions{
			StageName:            jsii.String(cfg.Stage),
			ThrottlingRateLimit:  jsii.Number(cfg.APIThrottleRate),
			ThrottlingBurstLimit: jsii.Number(float64(cfg.APIThrottleBurst)),
			LoggingLevel:         awsapigateway.MethodLoggingLevel_ERROR,
			// Never log request or response bodies: they hold bearer API
			// keys, endpoint secrets and customers' webhook payloads.
			DataTraceEnabled:     jsii.Bool(false),
			MetricsEnabled:       jsii.Bool(true),
			TracingEnabled:       jsii.Bool(true),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(accessLogs),
			AccessLogFormat: awsapigateway.AccessLogFormat_JsonWithStandardFields(&awsapigateway.JsonWithStandardFieldProps{
				Caller: &t, HttpMethod: &t, Ip: &t, Protocol: &t, RequestTime: &t,
				ResourcePath: &t, ResponseLength: &t, Status: &t, User: &t,
			}),
		},
	})
}

// Alarm ids, also the suffix of each alarm's name.
const (
	AlarmDLQNotEmpty      = "DlqNotEmpty"
	AlarmDLQGrowing       = "DlqGrowing"
	AlarmDeliverErrors    = "DeliverErrors"
	AlarmQueueAge         = "DeliveryQueueAge"
	AlarmSlowLaneAge      = "SlowLaneAge"
	AlarmPacedLaneAge     = "PacedLaneAge"
	AlarmDeliverThrottles = "DeliverThrottles"
	AlarmAPIThrottles     = "ApiThrottles"
	AlarmAPI5xx           = "Api5xx"
)

// QueueAgeThreshold: the oldest message in the delivery queue older than
// this means deliveries are not being picked up.
const QueueAgeThreshold = 15 * 60 // seconds

// API5xxThreshold is the 5XX count in five minutes that raises an alarm.
const API5xxThreshold = 5

func (s *Stack) addAlarms(name string) {
	if s.Config.AlarmEmail != "" {
		key := awskms.NewKey(s.Stack, jsii.String("AlarmTopicKey"), &awskms.KeyProps{
			Description:       jsii.String(name + " alarm topic encryption"),
			EnableKeyRotation: jsii.Bool(true),
			RemovalPolicy:     awscdk.RemovalPolicy_DESTROY,
		})
		// CloudWatch publishes to the encrypted topic; the AWS-managed SNS key
		// does not allow that, hence a customer-managed key.
		key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("AllowCloudWatchAlarmsToPublish"),
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
			Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
			Resources:  jsii.Strings("*"),
			Conditions: &map[string]interface{}{
				"StringEquals": map[string]interface{}{"aws:SourceAccount": s.Account()},
			},
		}), nil)
		s.AlarmTopic = awssns.NewTopic(s.Stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
			DisplayName: jsii.String(name + " alarms"),
			MasterKey:   key,
			EnforceSSL:  jsii.Bool(true),
		})
		s.AlarmTopic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(s.Config.AlarmEmail), nil))
		s.alarmActions = append(s.alarmActions, awscloudwatchactions.NewSnsAction(s.AlarmTopic))
	}
	// An existing topic (a pager's): its policy must let CloudWatch publish,
	// and its KMS key, if any, let CloudWatch use it (docs/deploy.md).
	if s.Config.AlarmTopicARN != "" {
		topic := awssns.Topic_FromTopicArn(s.Stack, jsii.String("ExistingAlarmTopic"), jsii.String(s.Config.AlarmTopicARN))
		s.alarmActions = append(s.alarmActions, awscloudwatchactions.NewSnsAction(topic))
	}
	five := awscdk.Duration_Minutes(jsii.Number(5))
	add := func(id, description string, metric awscloudwatch.IMetric, op awscloudwatch.ComparisonOperator, threshold float64) {
		s.addAlarm(alarmSpec{ID: id, Description: description, Metric: metric, Op: op, Threshold: threshold})
	}
	gt := awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD
	ge := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
	add(AlarmDLQNotEmpty, "The dead-letter queue holds messages: deliveries failed for good, or poison messages SQS moved. To do: poll the DLQ (each message names its delivery, endpoint and reason), fix the cause with the receiver, then redrive (custom destination: the DeliveryQueueArn output, or the redrive function).",
		s.DLQ.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}), gt, 0)
	add(AlarmDLQGrowing, fmt.Sprintf("More than %d messages were dead-lettered in one hour: a receiver is down or rejecting, or the system is failing. To do: find the endpoint or reason that dominates (dashboard Outcomes, deliver logs); contact that receiver or disable its endpoint.", s.Config.DLQGrowthThreshold),
		s.DLQ.MetricNumberOfMessagesSent(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Hours(jsii.Number(1)), Statistic: jsii.String("Sum")}), gt, float64(s.Config.DLQGrowthThreshold))
	add(AlarmDeliverErrors, "The deliver function failed whole invocations (crash, timeout, or an error outside one message): its batches are retried. To do: read the deliver log group for the error; if it persists, roll back the last deploy.",
		s.Functions[FnDeliver].MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), ge, 1)
	add(AlarmQueueAge, "The oldest message in the delivery queue is older than 15 minutes: deliveries are not being picked up. To do: check DeliverErrors and DeliverThrottles, the event source mapping (enabled?) and the queue depth; raise deliverMaxConcurrency or the account's Lambda concurrency.",
		s.Queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}), gt, QueueAgeThreshold)
	add(AlarmSlowLaneAge, "The oldest message on the slow lane (failing endpoints' deliveries) is older than 15 minutes: its concurrency does not keep up, so those deliveries fail late or as endpoint_unavailable. Healthy endpoints are not affected. To do: look at which accounts' endpoints are failing (dashboard, endpoint health); disable dead ones; raise deliverSlowMaxConcurrency if many endpoints fail at once.",
		s.SlowQueue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}), gt, QueueAgeThreshold)
	add(AlarmPacedLaneAge, "The oldest message on the paced lane (deliveries of accounts over their rate, waiting for their slots) is older than 15 minutes: its concurrency does not keep up, so those deliveries leave late. Other accounts are not affected. To do: look at which accounts post far over their rate (dashboard RateLimitDeferrals); raise deliverPacedMaxConcurrency, or their rate if their receivers can take it.",
		s.PacedQueue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}), gt, QueueAgeThreshold)
	add(AlarmDeliverThrottles, "Lambda throttled the deliver function: the account's concurrency is exhausted. To do: find what else uses the account's concurrency; request a higher Lambda concurrency quota or lower deliverMaxConcurrency.",
		s.Functions[FnDeliver].MetricThrottles(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), ge, 1)
	add(AlarmAPIThrottles, "Lambda throttled the api function: producers got errors. To do: as for DeliverThrottles (account concurrency); producers retry safely with their Idempotency-Key.",
		s.Functions[FnAPI].MetricThrottles(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), ge, 1)
	add(AlarmAPI5xx, fmt.Sprintf("The API answered at least %d 5XX errors in five minutes. To do: read the api function's log group and the API access logs; check DynamoDB throttling and ApiThrottles; roll back a bad deploy.", API5xxThreshold),
		s.APIMetrics.MetricServerError(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), ge, API5xxThreshold)
	s.addOperationsAlarms() // alarms.go
	s.addDataAlarms()       // data_alarms.go
}

// AlarmOrder is the alarms in dashboard order.
var AlarmOrder = append([]string{AlarmDLQNotEmpty, AlarmDLQGrowing, AlarmDeliverErrors, AlarmQueueAge, AlarmSlowLaneAge, AlarmPacedLaneAge, AlarmDeliverThrottles, AlarmAPIThrottles, AlarmAPI5xx},
	append(OperationsAlarms, DataAlarms...)...)

func (s *Stack) addOutputs() {
	out := func(id, value, description string) {
		awscdk.NewCfnOutput(s.Stack, jsii.String(id), &awscdk.CfnOutputProps{Value: jsii.String(value), Description: jsii.String(description)})
	}
	out("ApiUrl", *s.APIURL, "Base URL of the API (append v1/events, v1/endpoints, ...)")
	if s.HTTPApi != nil {
		out("ApiId", *s.HTTPApi.ApiId(), "HTTP API id")
		out("ApiStageName", HTTPStageName, "HTTP API stage")
	} else {
		// LambdaRestApi adds an "Endpoint" output of its own; ApiUrl replaces it.
		s.Api.Node().TryRemoveChild(jsii.String("Endpoint"))
		out("ApiId", *s.Api.RestApiId(), "REST API id (LocalStack builds its URL from it)")
		out("ApiStageName", *s.Api.DeploymentStage().StageName(), "REST API stage")
	}
	out("QueueUrl", *s.Queue.QueueUrl(), "Delivery queue URL")
	out("SlowQueueUrl", *s.SlowQueue.QueueUrl(), "The delivery queue's slow lane URL (failing endpoints' deliveries)")
	out("PacedQueueUrl", *s.PacedQueue.QueueUrl(), "The delivery queue's paced lane URL (deliveries waiting for an account slot booked ahead)")
	out("DlqUrl", *s.DLQ.QueueUrl(), "Dead-letter queue URL")
	// The console's "Start DLQ redrive" must use "Redrive to a custom
	// destination" with this ARN: the app's dead letters are sent with
	// SendMessage, so SQS knows no source queue for them and "Redrive to
	// source queue(s)" fails with CouldNotDetermineMessageSource.
	out("DeliveryQueueArn", *s.Queue.QueueArn(), "Delivery queue ARN: the custom destination of the SQS console's DLQ redrive")
	out("ScheduleDlqUrl", *s.ScheduleDLQ.QueueUrl(), "DLQ of the EventBridge schedules' invocations of the sweeper")
	out("TableName", *s.Table.TableName(), "DynamoDB table")
	// A redeploy of prod after a destroy imports the retained key by its id
	// (docs/deploy.md): without it every sealed secret is unreadable.
	out("SigningKeyId", *s.SigningKey.KeyId(), "KMS key that seals the endpoints' signing secrets and v1a keys (kept on prod; import it on a redeploy)")
	out("SigningKeyArn", *s.SigningKey.KeyArn(), "ARN of that KMS key")
	out("DlqArn", *s.DLQ.QueueArn(), "Dead-letter queue ARN (for IAM policies, alarms and the console's redrive)")
	// AWS destinations (docs/destinations.md): the roles that assume
	// customers' roles, for a trust policy that names them (aws:PrincipalArn).
	var principals []string
	for _, fn := range customerRoleFunctions {
		principals = append(principals, *s.Roles[fn].RoleArn())
	}
	out("DestinationPrincipalArns", strings.Join(principals, ","),
		"The roles that assume customers' roles for AWS destinations (api, deliver): a customer's trust policy may name them")
	out("RedriveFunctionName", *s.Functions[FnRedrive].FunctionName(), "Run this function from the Lambda console to redrive the DLQ (sample event: events/redrive.json)")
	out("OpsFunctionName", *s.Functions[FnOps].FunctionName(), "Run this function from the Lambda console (or aws lambda invoke) to create an account and its first API key (sample event: events/ops-create-account.json)")
	out("DashboardName", *s.Dashboard.DashboardName(), "CloudWatch dashboard")
	out("OpsEventBusName", *s.OpsEventBus.EventBusName(), "EventBridge bus of the operational events (docs/operational-events.md): put your rules on it")
	out("OpsEventBusArn", *s.OpsEventBus.EventBusArn(), "ARN of the operational events' bus")
	out("Stage", s.Config.Stage, "Stage name (the Stage dimension of the app's metrics)")
	if s.ReceiverURL != nil {
		out("ReceiverUrl", *s.ReceiverURL.Url(), "Demo receiver (context demoReceiver): register <ReceiverUrl>?account=<account id> as an endpoint with signature_scheme v1a; its log group shows each webhook")
		out("ReceiverLogGroup", *s.Functions[FnReceiver].LogGroup().LogGroupName(), "The demo receiver's log group (aws logs tail <it> --follow)")
	}
	if s.AlarmTopic != nil {
		out("AlarmTopicArn", *s.AlarmTopic.TopicArn(), "SNS topic that receives every alarm")
	}
}
