package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/schema"
)

// m is a shorthand for assertion patterns.
type m = map[string]any

// like matches an object that has at least these keys (inside arrays the
// assertions library otherwise compares objects exactly).
func like(o m) assertions.Matcher { return assertions.Match_ObjectLike(&o) }

// tableCapacity=provisioned: the table and every index start at the floor
// and are auto scaled, reads and writes each, between the floor and the
// ceiling at TableTargetUsePct.
func TestProvisionedTable(t *testing.T) {
	s := synth(t, "http") // tableMinUnits 2, tableMaxUnits 500
	_, table := s.only(t, "AWS::DynamoDB::Table")
	p := props(table)
	floor := m{"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
	if (p["BillingMode"] != nil && p["BillingMode"] != "PROVISIONED") || !reflect.DeepEqual(render(p["ProvisionedThroughput"]), render(floor)) {
		t.Fatalf("billing %v, throughput %v; want PROVISIONED at %v", p["BillingMode"], p["ProvisionedThroughput"], floor)
	}
	for _, ix := range list(p["GlobalSecondaryIndexes"]) {
		if got := ix.(map[string]any)["ProvisionedThroughput"]; !reflect.DeepEqual(render(got), render(floor)) {
			t.Errorf("index %v: throughput %v, want %v", ix.(map[string]any)["IndexName"], got, floor)
		}
	}
	// One target for each of the table's and its indexes' reads and writes.
	want := map[string]bool{}
	for _, dim := range []string{"ReadCapacityUnits", "WriteCapacityUnits"} {
		want["table/"+dim] = true
		for _, ix := range schema.Table.Indexes {
			want["index/"+dim+"/"+ix.Name] = true
		}
	}
	targets := s.resources("AWS::ApplicationAutoScaling::ScalableTarget")
	for id, r := range targets {
		tp := props(r)
		dim := strings.TrimPrefix(fmt.Sprint(tp["ScalableDimension"]), "dynamodb:")
		if tp["MinCapacity"] != float64(2) || tp["MaxCapacity"] != float64(500) {
			t.Errorf("%s: capacity %v..%v, want 2..500", id, tp["MinCapacity"], tp["MaxCapacity"])
		}
		res := render(tp["ResourceId"])
		key := "table/" + strings.TrimPrefix(dim, "table:")
		if strings.HasPrefix(dim, "index:") {
			key = "index/" + strings.TrimPrefix(dim, "index:") + "/" + res[strings.LastIndex(res, "/")+1:]
		}
		if !want[key] {
			t.Errorf("%s: unexpected scalable target %s (%s)", id, key, res)
		}
		delete(want, key)
	}
	for k := range want {
		t.Errorf("no scalable target for %s", k)
	}
	for id, r := range s.resources("AWS::ApplicationAutoScaling::ScalingPolicy") {
		cfg := props(r)["TargetTrackingScalingPolicyConfiguration"].(map[string]any)
		if cfg["TargetValue"] != float64(TableTargetUsePct) {
			t.Errorf("%s: target %v, want %d %%", id, cfg["TargetValue"], TableTargetUsePct)
		}
	}
	if n := len(s.resources("AWS::ApplicationAutoScaling::ScalingPolicy")); n != len(targets) {
		t.Errorf("%d scaling policies for %d targets", n, len(targets))
	}
}

func TestTable(t *testing.T) {
	dev := synth(t, "dev")
	dev.tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(1))
	check(t, "table properties", func() {
		dev.tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), m{
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": m{"PointInTimeRecoveryEnabled": true},
			"SSESpecification":                 m{"SSEEnabled": true},
			"TimeToLiveSpecification":          m{"AttributeName": schema.Table.TTLAttribute, "Enabled": true},
			"KeySchema": []any{
				m{"AttributeName": schema.Table.PK.Name, "KeyType": "HASH"},
				m{"AttributeName": schema.Table.SK.Name, "KeyType": "RANGE"},
			},
			"DeletionProtectionEnabled": false,
		})
	})
	// AWS-managed encryption: no customer key.
	_, table := dev.only(t, "AWS::DynamoDB::Table")
	if sse := props(table)["SSESpecification"].(map[string]any); sse["KMSMasterKeyId"] != nil || sse["SSEType"] != nil && sse["SSEType"] != "KMS" {
		t.Errorf("SSESpecification = %v, want AWS-managed", sse)
	}
	if props(table)["ProvisionedThroughput"] != nil {
		t.Error("table has provisioned throughput; want on-demand")
	}
	for _, ix := range schema.Table.Indexes {
		projection := m{"ProjectionType": ix.Projection}
		if len(ix.NonKey) > 0 {
			projection["NonKeyAttributes"] = ix.NonKey
		}
		check(t, "index "+ix.Name, func() {
			dev.tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), m{
				"GlobalSecondaryIndexes": assertions.Match_ArrayWith(&[]any{m{
					"IndexName": ix.Name,
					"KeySchema": []any{
						m{"AttributeName": ix.PK.Name, "KeyType": "HASH"},
						m{"AttributeName": ix.SK.Name, "KeyType": "RANGE"},
					},
					"Projection": projection,
				}}),
			})
		})
	}
	if n := len(dev.resources("AWS::ApplicationAutoScaling::ScalableTarget")); n != 0 {
		t.Errorf("on-demand table: %d scalable targets, want none", n)
	}
	// dev may be destroyed with the stack.
	check(t, "dev removal policy", func() {
		dev.tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), m{"DeletionPolicy": "Delete", "UpdateReplacePolicy": "Delete"})
	})
	// prod keeps the table and protects it from deletion.
	prod := synth(t, "prod")
	check(t, "prod retention", func() {
		prod.tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), m{
			"DeletionPolicy":      "Retain",
			"UpdateReplacePolicy": "Retain",
			"Properties":          m{"DeletionProtectionEnabled": true},
		})
	})
	for _, typ := range []string{"AWS::SQS::Queue", "AWS::Logs::LogGroup"} {
		for id, r := range prod.resources(typ) {
			if r["DeletionPolicy"] != "Retain" {
				t.Errorf("prod %s %s: DeletionPolicy %v, want Retain", typ, id, r["DeletionPolicy"])
			}
		}
	}
}

func TestQueues(t *testing.T) {
	s := synth(t, "dev")
	// The delivery queue, its slow and paced lanes, their DLQ, and the EventBridge targets' DLQ (TestSchedulesHaveADLQ).
	s.tmpl.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(5))
	dlqID, _ := s.queueByName(t, schema.Queues.DLQTag)
	queueID, _ := s.queueByName(t, schema.Queues.DeliveryQueueTag)
	if got, want := schema.Queues.VisibilityTimeout, 6*schema.FunctionTimeout+schema.PacedWindow; got < want {
		t.Errorf("schema visibility timeout %v < 6 x function timeout + batching window %v", got, want)
	}
	lanes := []string{schema.Queues.DeliveryQueueTag, schema.Queues.SlowQueueTag, schema.Queues.PacedQueueTag}
	for _, tag := range lanes {
		check(t, "delivery queue "+tag, func() {
			s.tmpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), m{
				"QueueName":              StackName("dev") + "-" + tag,
				"VisibilityTimeout":      schema.Queues.VisibilityTimeout.Seconds(),
				"MessageRetentionPeriod": schema.Queues.Retention.Seconds(),
				"SqsManagedSseEnabled":   true,
				"RedrivePolicy": m{
					"deadLetterTargetArn": m{"Fn::GetAtt": []any{dlqID, "Arn"}},
					"maxReceiveCount":     schema.Queues.MaxReceiveCount,
				},
			})
		})
	}
	check(t, "dead-letter queue", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), m{
			"QueueName":              StackName("dev") + "-" + schema.Queues.DLQTag,
			"MessageRetentionPeriod": 14 * 24 * 3600,
			"SqsManagedSseEnabled":   true,
			"RedrivePolicy":          assertions.Match_Absent(),
			"RedriveAllowPolicy": m{
				"redrivePermission": "byQueue",
				"sourceQueueArns":   assertions.Match_AnyValue(),
			},
		})
	})
	// The DLQ accepts exactly the delivery queue and its lanes (by ARN, built from their names).
	_, dlq := s.queueByName(t, schema.Queues.DLQTag)
	sources := list(props(dlq)["RedriveAllowPolicy"].(map[string]any)["sourceQueueArns"])
	if len(sources) != len(lanes) {
		t.Fatalf("sourceQueueArns = %v, want the delivery queue and its lanes", sources)
	}
	for i, tag := range lanes {
		wantARN := "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:" + StackName("dev") + "-" + tag
		if got := render(sources[i]); got != wantARN {
			t.Errorf("DLQ source queue = %s, want %s", got, wantARN)
		}
	}
	// enforceSSL: each queue's policy denies requests without TLS.
	for _, id := range []string{queueID, dlqID} {
		check(t, "TLS-only policy on "+id, func() {
			s.tmpl.HasResourceProperties(jsii.String("AWS::SQS::QueuePolicy"), m{
				"Queues": []any{m{"Ref": id}},
				"PolicyDocument": m{"Statement": assertions.Match_ArrayWith(&[]any{like(m{
					"Effect":    "Deny",
					"Action":    "sqs:*",
					"Condition": m{"Bool": m{"aws:SecureTransport": "false"}},
				})})},
			})
		})
	}
}

func TestFunctions(t *testing.T) {
	s := synth(t, "dev")
	s.tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(float64(len(Functions))))
	tableID, _ := s.only(t, "AWS::DynamoDB::Table")
	queueID, _ := s.queueByName(t, schema.Queues.DeliveryQueueTag)
	dlqID, _ := s.queueByName(t, schema.Queues.DLQTag)
	wantTimeout := map[string]float64{FnAPI: 15, FnDeliver: schema.FunctionTimeout.Seconds(), FnSweeper: 300, FnRedrive: 300, FnOps: 30, FnStats: 30}
	wantMemory := map[string]float64{FnAPI: 256, FnDeliver: schema.DeliverMemoryMB, FnSweeper: 256, FnRedrive: 128, FnOps: 128, FnStats: 128}
	roles := map[string]string{}
	for _, fn := range Functions {
		id, r := s.functionByName(t, fn)
		p := props(r)
		if p["Runtime"] != "provided.al2023" || p["Handler"] != "bootstrap" {
			t.Errorf("%s: runtime %v handler %v, want provided.al2023 / bootstrap", fn, p["Runtime"], p["Handler"])
		}
		if a := list(p["Architectures"]); len(a) != 1 || a[0] != "arm64" {
			t.Errorf("%s: architectures %v, want [arm64]", fn, a)
		}
		if p["Timeout"] != wantTimeout[fn] || p["MemorySize"] != wantMemory[fn] {
			t.Errorf("%s: timeout %v memory %v, want %v / %v", fn, p["Timeout"], p["MemorySize"], wantTimeout[fn], wantMemory[fn])
		}
		if tc, _ := p["TracingConfig"].(map[string]any); tc["Mode"] != "Active" {
			t.Errorf("%s: tracing %v, want Active", fn, p["TracingConfig"])
		}
		// Code from the function's own asset (bin/<fn>).
		if code, _ := p["Code"].(map[string]any); code["S3Key"] == nil {
			t.Errorf("%s: code %v, want an S3 asset", fn, p["Code"])
		}
		// Its own log group, with retention.
		lc, _ := p["LoggingConfig"].(map[string]any)
		if lc["LogFormat"] != "JSON" || lc["SystemLogLevel"] != "WARN" {
			t.Errorf("%s: log format %v, system log level %v, want JSON and WARN (no START/END/REPORT lines billed)", fn, lc["LogFormat"], lc["SystemLogLevel"])
		}
		lg := strings.Trim(render(lc["LogGroup"]), "${}")
		group, ok := s.resources("AWS::Logs::LogGroup")[lg]
		if !ok {
			t.Errorf("%s: LoggingConfig %v does not name a log group of the stack", fn, lc)
		} else if props(group)["RetentionInDays"] != float64(30) {
			t.Errorf("%s: log retention %v, want 30 days", fn, props(group)["RetentionInDays"])
		}
		// Its own role.
		role := strings.TrimSuffix(strings.Trim(render(p["Role"]), "${}"), ".Arn")
		for other, r := range roles {
			if r == role {
				t.Errorf("%s and %s share role %s", fn, other, role)
			}
		}
		roles[fn] = role
		// Environment wired from the resources and the context.
		env := p["Environment"].(map[string]any)["Variables"].(map[string]any)
		want := map[string]string{
			"TABLE_NAME": "${" + tableID + "}", "QUEUE_URL": "${" + queueID + "}", "DLQ_URL": "${" + dlqID + "}",
			"STAGE": "dev", "RATE_LIMIT_PER_SECOND": "5", "ENDPOINT_MAX_IN_FLIGHT": "5", "ALLOWED_SCHEMES": "https",
			"INGEST_RATE_PER_SECOND": "100", "INGEST_BURST": "1000",
			"ALLOW_PRIVATE_ENDPOINTS": "false", "SWEEP_GRACE": "5m0s", "METRICS": "emf",
			"METRICS_NAMESPACE": "GifqWebhooks", "LOG_LEVEL": "info",
		}
		if fn == FnAPI { // it serves the portal
			want["PORTAL_FRAME_ANCESTORS"] = "'none'"
		}
		slowID, _ := s.queueByName(t, schema.Queues.SlowQueueTag)
		pacedID, _ := s.queueByName(t, schema.Queues.PacedQueueTag)
		if fn == FnAPI || fn == FnDeliver { // they send to the slow and paced lanes
			want["SLOW_QUEUE_URL"], want["PACED_QUEUE_URL"] = "${"+slowID+"}", "${"+pacedID+"}"
		}
		if fn == FnDeliver {
			want["GOMEMLIMIT"] = DeliverGoMemLimit
			if got := render(env["PORTAL_URL"]); strings.HasSuffix(got, "portal/") { // the notices' link (TestNoticesLinkToThePortal)
				want["PORTAL_URL"] = got
			}
		}
		if contains(opsEventPublishers, fn) { // opevents.go
			busID, _ := s.only(t, "AWS::Events::EventBus")
			want["OPS_EVENT_BUS"] = "${" + busID + "}"
		}
		if contains(customerRoleFunctions, fn) { // destinations.go: refuses roles of our own account
			want["DEPLOYMENT_ACCOUNT_ID"] = "${AWS::AccountId}"
		}
		if _, seals := signingKeyGrants[fn]; seals { // keys.go
			want["KMS_KEY_ID"] = "${" + s.signingKeyID(t) + ".Arn}"
		}
		for k, v := range want {
			if got := render(env[k]); got != v {
				t.Errorf("%s (%s): %s = %q, want %q", fn, id, k, got, v)
			}
		}
		if _, ok := env["RETRY_SCHEDULE"]; ok {
			t.Errorf("%s: RETRY_SCHEDULE set without context retrySchedule", fn)
		}
		for k := range env {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: unexpected variable %s", fn, k)
			}
		}
	}
}

// TestContextReachesFunctions: every context option lands in the
// functions' environment or the resources it configures.
func TestContextReachesFunctions(t *testing.T) {
	s := synth(t, "prod")
	for _, fn := range Functions {
		_, r := s.functionByName(t, fn)
		env := props(r)["Environment"].(map[string]any)["Variables"].(map[string]any)
		want := map[string]string{
			"STAGE": "prod", "RETRY_SCHEDULE": "1s,16s,81s", "RATE_LIMIT_PER_SECOND": "7.5",
			"ENDPOINT_MAX_IN_FLIGHT": "3", "SWEEP_GRACE": "10m0s", "LOG_LEVEL": "warn",
			"INGEST_RATE_PER_SECOND": "2", "INGEST_BURST": "8",
			"ALLOWED_SCHEMES": "https", "ALLOW_PRIVATE_ENDPOINTS": "false",
		}
		for k, v := range want {
			if got := render(env[k]); got != v {
				t.Errorf("prod %s: %s = %q, want %q", fn, k, got, v)
			}
		}
	}
	check(t, "prod event source concurrency", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), m{"ScalingConfig": m{"MaximumConcurrency": 20}})
	})
	check(t, "prod API throttle", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), m{
			"StageName":      "prod",
			"MethodSettings": []any{m{"ThrottlingRateLimit": 25, "ThrottlingBurstLimit": 40, "HttpMethod": "*", "ResourcePath": "/*", "LoggingLevel": "ERROR", "DataTraceEnabled": false, "MetricsEnabled": true}},
		})
	})
	check(t, "prod DLQ growth threshold", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m{"AlarmName": "GifqWebhooks-prod-" + AlarmDLQGrowing, "Threshold": 50})
	})

	// The LocalStack stage is the only one that reaches private endpoints.
	ls := synth(t, "localstack")
	for _, fn := range Functions {
		_, r := ls.functionByName(t, fn)
		p := props(r)
		env := p["Environment"].(map[string]any)["Variables"].(map[string]any)
		if env["ALLOW_PRIVATE_ENDPOINTS"] != "true" || env["ALLOWED_SCHEMES"] != "http,https" {
			t.Errorf("localstack %s: %v", fn, env)
		}
		if a := list(p["Architectures"]); len(a) != 1 || a[0] != "x86_64" {
			t.Errorf("localstack %s: architectures %v, want [x86_64]", fn, a)
		}
	}
	ls.tmpl.ResourceCountIs(jsii.String("AWS::ApiGateway::Account"), jsii.Number(0))
}

func TestDeliverEventSource(t *testing.T) {
	s := synth(t, "dev")
	// Three lanes, each its own maximum concurrency (lifecycle.Lane); none
	// waits to fill a batch (the paced lane's messages leave as they come);
	// and the stats function's stream mapping (TestStatsEventSource).
	s.tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(4))
	deliverID, _ := s.functionByName(t, FnDeliver)
	for tag, want := range map[string]struct {
		most, batch int
		window      any
	}{
		schema.Queues.DeliveryQueueTag: {300, 10, assertions.Match_Absent()},
		schema.Queues.SlowQueueTag:     {50, 10, assertions.Match_Absent()},
		schema.Queues.PacedQueueTag:    {50, 10, assertions.Match_Absent()},
	} {
		queueID, _ := s.queueByName(t, tag)
		check(t, "deliver event source "+tag, func() {
			s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), m{
				"FunctionName":                   m{"Ref": deliverID},
				"EventSourceArn":                 m{"Fn::GetAtt": []any{queueID, "Arn"}},
				"BatchSize":                      want.batch,
				"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
				"ScalingConfig":                  m{"MaximumConcurrency": want.most},
				"MaximumBatchingWindowInSeconds": want.window,
			})
		})
	}
	// The queue hides a message for at least 6x the function's timeout.
	_, q := s.queueByName(t, schema.Queues.DeliveryQueueTag)
	_, fn := s.functionByName(t, FnDeliver)
	if vt, to := props(q)["VisibilityTimeout"].(float64), props(fn)["Timeout"].(float64); vt < 6*to {
		t.Errorf("visibility timeout %v < 6 x deliver timeout %v", vt, to)
	}
}

// The table's stream (both images) feeds the stats function: delivery
// items' changes only, in batches of 100 gathered for 5 s, a failed batch
// halved and retried twice, then skipped; its errors have an alarm.
func TestStatsEventSource(t *testing.T) {
	s := synth(t, "dev")
	tableID, table := s.only(t, "AWS::DynamoDB::Table")
	if v := props(table)["StreamSpecification"]; render(v) != render(m{"StreamViewType": "NEW_AND_OLD_IMAGES"}) {
		t.Errorf("table stream %v, want NEW_AND_OLD_IMAGES", v)
	}
	statsID, _ := s.functionByName(t, FnStats)
	check(t, "stats event source", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), m{
			"FunctionName":                   m{"Ref": statsID},
			"EventSourceArn":                 m{"Fn::GetAtt": []any{tableID, "StreamArn"}},
			"StartingPosition":               "LATEST",
			"BatchSize":                      schema.StatsBatch,
			"MaximumBatchingWindowInSeconds": schema.StatsWindow.Seconds(),
			"BisectBatchOnFunctionError":     true,
			"MaximumRetryAttempts":           schema.StatsRetries,
			"FilterCriteria":                 m{"Filters": []any{m{"Pattern": `{"dynamodb":{"Keys":{"sk":{"S":["DLV"]}}},"eventName":["MODIFY"]}`}}},
		})
	})
	// On LocalStack only when asked (its poller's CPU slows the whole suite).
	synth(t, "localstack").tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(3))
	synth(t, "localstack-stats").tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(4))
	check(t, "stats alarm", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m{
			"MetricName": "Errors", "Dimensions": []any{m{"Name": "FunctionName", "Value": m{"Ref": statsID}}},
			"AlarmDescription": assertions.Match_StringLikeRegexp(jsii.String("To do: read the stats log group")),
		})
	})
}

func TestSweeperScheduleAndRedriveHasNoTrigger(t *testing.T) {
	s := synth(t, "dev")
	sweeperID, _ := s.functionByName(t, FnSweeper)
	redriveID, _ := s.functionByName(t, FnRedrive)
	s.tmpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(2))
	check(t, "scheduler schedule: the sweeper function every minute with {\"mode\":\"schedule\"}", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), m{
			"ScheduleExpression": "rate(1 minute)",
			"State":              "ENABLED",
			"Targets": []any{m{"Arn": m{"Fn::GetAtt": []any{sweeperID, "Arn"}}, "Id": assertions.Match_AnyValue(),
				"Input": `{"mode":"schedule"}`, "RetryPolicy": assertions.Match_AnyValue(), "DeadLetterConfig": assertions.Match_AnyValue()}},
		})
	})
	check(t, "sweeper schedule", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), m{
			"ScheduleExpression": "rate(15 minutes)",
			"State":              "ENABLED",
			"Targets": []any{m{"Arn": m{"Fn::GetAtt": []any{sweeperID, "Arn"}}, "Id": assertions.Match_AnyValue(),
				"RetryPolicy": assertions.Match_AnyValue(), "DeadLetterConfig": assertions.Match_AnyValue()}},
		})
	})
	check(t, "EventBridge may invoke the sweeper", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), m{
			"Action":       "lambda:InvokeFunction",
			"FunctionName": m{"Fn::GetAtt": []any{sweeperID, "Arn"}},
			"Principal":    "events.amazonaws.com",
		})
	})
	// redrive: invoked from the console only.
	for id, r := range s.resources("AWS::Lambda::Permission") {
		if strings.Contains(render(props(r)["FunctionName"]), redriveID) {
			t.Errorf("permission %s lets something invoke redrive", id)
		}
	}
	for id, r := range s.resources("AWS::Lambda::EventSourceMapping") {
		if strings.Contains(render(props(r)["FunctionName"]), redriveID) {
			t.Errorf("event source %s triggers redrive", id)
		}
	}
}

func TestAPI(t *testing.T) {
	s := synth(t, "dev")
	apiFnID, _ := s.functionByName(t, FnAPI)
	s.tmpl.ResourceCountIs(jsii.String("AWS::ApiGateway::RestApi"), jsii.Number(1))
	check(t, "REST API", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::RestApi"), m{
			"Name":                  StackName("dev"),
			"EndpointConfiguration": m{"Types": []any{"REGIONAL"}},
			"BinaryMediaTypes":      assertions.Match_Absent(),
		})
	})
	check(t, "{proxy+} resource", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Resource"), m{"PathPart": "{proxy+}"})
	})
	// ANY on / and on /{proxy+}, both Lambda proxy integrations of api.
	s.tmpl.ResourceCountIs(jsii.String("AWS::ApiGateway::Method"), jsii.Number(2))
	for id, r := range s.resources("AWS::ApiGateway::Method") {
		p := props(r)
		integ := p["Integration"].(map[string]any)
		if p["HttpMethod"] != "ANY" || integ["Type"] != "AWS_PROXY" || integ["IntegrationHttpMethod"] != "POST" ||
			!strings.Contains(render(integ["Uri"]), "${"+apiFnID+".Arn}") {
			t.Errorf("method %s: %v", id, p)
		}
	}
	accessLogsID := ""
	for id := range s.resources("AWS::Logs::LogGroup") {
		if strings.HasPrefix(id, "ApiAccessLogs") {
			accessLogsID = id
		}
	}
	check(t, "stage", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), m{
			"StageName":      "dev",
			"TracingEnabled": true,
			"MethodSettings": []any{m{
				"HttpMethod": "*", "ResourcePath": "/*",
				"ThrottlingRateLimit": DefaultAPIThrottleRate, "ThrottlingBurstLimit": DefaultAPIThrottleBurst,
				"LoggingLevel": "ERROR", "DataTraceEnabled": false, "MetricsEnabled": true,
			}},
			"AccessLogSetting": m{
				"DestinationArn": assertions.Match_AnyValue(),
				"Format":         assertions.Match_StringLikeRegexp(jsii.String(`\$context\.requestId.*\$context\.status`)),
			},
		})
	})
	_, stage := s.only(t, "AWS::ApiGateway::Stage")
	dest := render(props(stage)["AccessLogSetting"].(map[string]any)["DestinationArn"])
	if accessLogsID == "" || !strings.Contains(dest, accessLogsID) {
		t.Errorf("access logs go to %s, want the ApiAccessLogs group (%s)", dest, accessLogsID)
	}
	// The account-level role for execution logs (context apiGatewayCloudWatchRole).
	s.tmpl.ResourceCountIs(jsii.String("AWS::ApiGateway::Account"), jsii.Number(1))
	// Two permissions per method: the stage, and the console's test-invoke.
	for id, r := range s.resources("AWS::Lambda::Permission") {
		p := props(r)
		if p["Principal"] == "apigateway.amazonaws.com" && !strings.Contains(render(p["FunctionName"]), apiFnID) {
			t.Errorf("API Gateway may invoke something else than api: %s", id)
		}
	}
}

func TestAlarms(t *testing.T) {
	dev := synth(t, "dev")
	queueID, _ := dev.queueByName(t, schema.Queues.DeliveryQueueTag)
	slowID, _ := dev.queueByName(t, schema.Queues.SlowQueueTag)
	pacedID, _ := dev.queueByName(t, schema.Queues.PacedQueueTag)
	dlqID, _ := dev.queueByName(t, schema.Queues.DLQTag)
	deliverID, _ := dev.functionByName(t, FnDeliver)
	apiFnID, _ := dev.functionByName(t, FnAPI)
	sweeperID, _ := dev.functionByName(t, FnSweeper)
	redriveID, _ := dev.functionByName(t, FnRedrive)
	opsID, _ := dev.functionByName(t, FnOps)
	statsFnID, _ := dev.functionByName(t, FnStats)
	type alarm struct {
		namespace, metric, statistic, op string
		threshold, period                float64
		dimension                        string // the logical id its dimension refers to
		missing                          string // TreatMissingData; "" is notBreaching
	}
	rules := map[string]string{}
	for id, r := range dev.resources("AWS::Events::Rule") {
		rules[fmt.Sprint(props(r)["ScheduleExpression"])] = id
	}
	want := map[string]alarm{
		AlarmSweeperErrors:      {"AWS/Lambda", "Errors", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "FunctionName=${" + sweeperID + "}", ""},
		AlarmRedriveErrors:      {"AWS/Lambda", "Errors", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "FunctionName=${" + redriveID + "}", ""},
		AlarmSweeperHeartbeat:   {MetricsNamespace, obs.MetricSweeperRuns, "Sum", "LessThanThreshold", 1, 1800, "Stage=dev", "breaching"},
		AlarmSchedulerHeartbeat: {MetricsNamespace, obs.MetricSchedulerRuns, "Sum", "LessThanThreshold", 1, 300, "Stage=dev", "breaching"},
		AlarmOldestOverdue:      {MetricsNamespace, obs.MetricSweeperOldestOverdue, "Maximum", "GreaterThanThreshold", 3600 * 1000, 1800, "Stage=dev", ""},
		AlarmSweepRuleFailed:    {"AWS/Events", "FailedInvocations", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "RuleName=${" + rules["rate(15 minutes)"] + "}", ""},
		AlarmScheduleRuleFailed: {"AWS/Events", "FailedInvocations", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "RuleName=${" + rules["rate(1 minute)"] + "}", ""},
		AlarmScheduleDLQNotEmpty: {"AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", "GreaterThanThreshold", 0, 300,
			"QueueName=${" + scheduleDLQID(t, dev) + ".QueueName}", ""},
		AlarmDLQNotEmpty:      {"AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", "GreaterThanThreshold", 0, 300, "QueueName=${" + dlqID + ".QueueName}", ""},
		AlarmDLQGrowing:       {"AWS/SQS", "NumberOfMessagesSent", "Sum", "GreaterThanThreshold", 10, 3600, "QueueName=${" + dlqID + ".QueueName}", ""},
		AlarmDeliverErrors:    {"AWS/Lambda", "Errors", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "FunctionName=${" + deliverID + "}", ""},
		AlarmQueueAge:         {"AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum", "GreaterThanThreshold", 900, 300, "QueueName=${" + queueID + ".QueueName}", ""},
		AlarmSlowLaneAge:      {"AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum", "GreaterThanThreshold", 900, 300, "QueueName=${" + slowID + ".QueueName}", ""},
		AlarmPacedLaneAge:     {"AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum", "GreaterThanThreshold", 900, 300, "QueueName=${" + pacedID + ".QueueName}", ""},
		AlarmDeliverThrottles: {"AWS/Lambda", "Throttles", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "FunctionName=${" + deliverID + "}", ""},
		AlarmAPIThrottles:     {"AWS/Lambda", "Throttles", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "FunctionName=${" + apiFnID + "}", ""},
		AlarmAPI5xx:           {"AWS/ApiGateway", "5XXError", "Sum", "GreaterThanOrEqualToThreshold", API5xxThreshold, 300, "ApiName=" + StackName("dev"), ""},
		AlarmDLQNearExpiry:    {"AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum", "GreaterThanThreshold", 10 * 86400, 300, "QueueName=${" + dlqID + ".QueueName}", ""},
		AlarmOpsErrors:        {"AWS/Lambda", "Errors", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "FunctionName=${" + opsID + "}", ""},
		AlarmStatsErrors:      {"AWS/Lambda", "Errors", "Sum", "GreaterThanOrEqualToThreshold", 1, 300, "FunctionName=${" + statsFnID + "}", ""},
	}
	// and the metric math sums: recursion (TestRecursion), DynamoDB
	// throttles (TestDynamoDBThrottleAlarms).
	mathAlarms := []string{AlarmRecursionDropped, AlarmTableThrottles, AlarmIndexThrottles}
	dev.tmpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(float64(len(want)+len(mathAlarms))))
	for name, a := range want {
		if a.missing == "" {
			a.missing = "notBreaching"
		}
		check(t, "alarm "+name, func() {
			dev.tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m{
				"AlarmName":          "GifqWebhooks-dev-" + name,
				"Namespace":          a.namespace,
				"MetricName":         a.metric,
				"Statistic":          a.statistic,
				"ComparisonOperator": a.op,
				"Threshold":          a.threshold,
				"Period":             a.period,
				"EvaluationPeriods":  1,
				"TreatMissingData":   a.missing,
				"AlarmActions":       assertions.Match_Absent(), // no alarmEmail: no topic
			})
		})
	}
	for _, r := range dev.resources("AWS::CloudWatch::Alarm") {
		p := props(r)
		name := strings.TrimPrefix(p["AlarmName"].(string), "GifqWebhooks-dev-")
		// Every alarm tells the on-call engineer what to do.
		if d := fmt.Sprint(p["AlarmDescription"]); !strings.Contains(d, " To do: ") || !strings.HasSuffix(d, "See docs/deploy.md#alarms.") {
			t.Errorf("alarm %s: description %q does not say what to do", name, d)
		}
		if slices.Contains(mathAlarms, name) {
			continue
		}
		dims := list(p["Dimensions"])
		if len(dims) != 1 {
			t.Errorf("alarm %s: dimensions %v", name, dims)
			continue
		}
		d := dims[0].(map[string]any)
		if got := render(d["Name"]) + "=" + render(d["Value"]); got != want[name].dimension {
			t.Errorf("alarm %s watches %s, want %s", name, got, want[name].dimension)
		}
	}
	dev.tmpl.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(0))

	// With alarmTopicArn every alarm notifies that topic, and the stack
	// makes none.
	ht := synth(t, "http")
	ht.tmpl.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(0))
	for id, r := range ht.resources("AWS::CloudWatch::Alarm") {
		for _, key := range []string{"AlarmActions", "OKActions"} {
			if acts := list(props(r)[key]); len(acts) != 1 || render(acts[0]) != existingTopic {
				t.Errorf("http alarm %s: %s %v, want %s", id, key, props(r)[key], existingTopic)
			}
		}
	}

	// With alarmEmail every alarm notifies an encrypted, TLS-only topic.
	prod := synth(t, "prod")
	topicID, _ := prod.only(t, "AWS::SNS::Topic")
	keyID := prod.alarmTopicKeyID(t)
	for id, r := range prod.resources("AWS::CloudWatch::Alarm") {
		for _, key := range []string{"AlarmActions", "OKActions"} {
			if acts := list(props(r)[key]); len(acts) != 1 || render(acts[0]) != "${"+topicID+"}" {
				t.Errorf("prod alarm %s: %s %v, want the topic", id, key, props(r)[key])
			}
		}
	}
	check(t, "topic", func() {
		prod.tmpl.HasResourceProperties(jsii.String("AWS::SNS::Topic"), m{"KmsMasterKeyId": m{"Fn::GetAtt": []any{keyID, "Arn"}}})
	})
	check(t, "key rotation", func() {
		prod.tmpl.HasResourceProperties(jsii.String("AWS::KMS::Key"), m{"EnableKeyRotation": true})
	})
	check(t, "CloudWatch may use the key", func() {
		prod.tmpl.HasResourceProperties(jsii.String("AWS::KMS::Key"), m{"KeyPolicy": m{"Statement": assertions.Match_ArrayWith(&[]any{like(m{
			"Effect":    "Allow",
			"Principal": m{"Service": "cloudwatch.amazonaws.com"},
			"Action":    []any{"kms:Decrypt", "kms:GenerateDataKey*"},
		})})}})
	})
	check(t, "email subscription", func() {
		prod.tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), m{"Protocol": "email", "Endpoint": "ops@example.com", "TopicArn": m{"Ref": topicID}})
	})
	check(t, "topic enforces TLS", func() {
		prod.tmpl.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), m{"PolicyDocument": m{"Statement": assertions.Match_ArrayWith(&[]any{like(m{
			"Effect": "Deny", "Action": "sns:Publish", "Condition": m{"Bool": m{"aws:SecureTransport": "false"}},
		})})}})
	})
}

// TestDynamoDBThrottleAlarms: the table's read and write throttle events
// in one alarm, every index's in another, each within CloudWatch's ten
// metrics an alarm.
func TestDynamoDBThrottleAlarms(t *testing.T) {
	dev := synth(t, "dev")
	tableID, _ := dev.only(t, "AWS::DynamoDB::Table")
	want := map[string][]string{}
	for _, m := range []string{"ReadThrottleEvents", "WriteThrottleEvents"} {
		want[AlarmTableThrottles] = append(want[AlarmTableThrottles], m+" TableName=${"+tableID+"}")
		for _, ix := range schema.Table.Indexes {
			want[AlarmIndexThrottles] = append(want[AlarmIndexThrottles], m+" GlobalSecondaryIndexName="+ix.Name+",TableName=${"+tableID+"}")
		}
	}
	for name, metrics := range want {
		var r map[string]any
		for _, a := range dev.resources("AWS::CloudWatch::Alarm") {
			if props(a)["AlarmName"] == StackName("dev")+"-"+name {
				r = props(a)
			}
		}
		if r == nil {
			t.Errorf("no alarm %s", name)
			continue
		}
		var got []string
		for _, q := range list(r["Metrics"]) {
			stat, ok := q.(map[string]any)["MetricStat"].(map[string]any)
			if !ok {
				continue
			}
			metric := stat["Metric"].(map[string]any)
			var dims []string
			for _, d := range list(metric["Dimensions"]) {
				dims = append(dims, render(d.(map[string]any)["Name"])+"="+render(d.(map[string]any)["Value"]))
			}
			sort.Strings(dims)
			if metric["Namespace"] != "AWS/DynamoDB" || stat["Stat"] != "Sum" {
				t.Errorf("%s: metric %v", name, stat)
			}
			got = append(got, fmt.Sprint(metric["MetricName"])+" "+strings.Join(dims, ","))
		}
		sort.Strings(got)
		sort.Strings(metrics)
		if strings.Join(got, "\n") != strings.Join(metrics, "\n") {
			t.Errorf("%s watches\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(metrics, "\n"))
		}
		if len(got) > MaxAlarmMetrics || r["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" || r["Threshold"] != 1.0 {
			t.Errorf("%s: %d metrics, %v %v", name, len(got), r["ComparisonOperator"], r["Threshold"])
		}
	}
}

func TestDashboard(t *testing.T) {
	s := synth(t, "dev")
	_, d := s.only(t, "AWS::CloudWatch::Dashboard")
	body := render(props(d)["DashboardBody"])
	queueID, _ := s.queueByName(t, schema.Queues.DeliveryQueueTag)
	dlqID, _ := s.queueByName(t, schema.Queues.DLQTag)
	deliverID, _ := s.functionByName(t, FnDeliver)
	for _, want := range []string{
		// queue depth, DLQ depth, deliver errors and duration
		`"AWS/SQS","ApproximateNumberOfMessagesVisible","QueueName","${` + queueID + `.QueueName}"`,
		`"AWS/SQS","ApproximateNumberOfMessagesVisible","QueueName","${` + dlqID + `.QueueName}"`,
		`"AWS/Lambda","Errors","FunctionName","${` + deliverID + `}"`,
		`"AWS/Lambda","Duration","FunctionName","${` + deliverID + `}"`,
		`"type":"alarm"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("dashboard lacks %s", want)
		}
	}
	// Every EMF metric of shared/obs, namespace GifqWebhooks, dimension Stage=dev.
	for _, name := range DashboardAppMetrics {
		if !strings.Contains(body, fmt.Sprintf(`"%s","%s","%s","dev"`, MetricsNamespace, name, obs.DimensionStage)) {
			t.Errorf("dashboard lacks the app metric %s", name)
		}
	}
	if len(DashboardAppMetrics) < 14 {
		t.Errorf("only %d app metrics on the dashboard", len(DashboardAppMetrics))
	}
}

func TestOutputs(t *testing.T) {
	s := synth(t, "dev")
	outputs := s.json["Outputs"].(map[string]any)
	for _, name := range []string{"ApiUrl", "ApiId", "ApiStageName", "QueueUrl", "DlqUrl", "TableName", "RedriveFunctionName", "DashboardName", "OpsEventBusName", "OpsEventBusArn", "Stage"} {
		if _, ok := outputs[name]; !ok {
			t.Errorf("output %s is missing", name)
		}
	}
	redriveID, _ := s.functionByName(t, FnRedrive)
	if got := render(outputs["RedriveFunctionName"].(map[string]any)["Value"]); got != "${"+redriveID+"}" {
		t.Errorf("RedriveFunctionName = %s", got)
	}
	if _, ok := outputs["ApiEndpoint4F160690"]; ok {
		t.Error("the construct's duplicate Endpoint output is still there")
	}
	if _, ok := synth(t, "prod").json["Outputs"].(map[string]any)["AlarmTopicArn"]; !ok {
		t.Error("prod: AlarmTopicArn output is missing")
	}
}

// TestEnvironmentAgnostic: no account or region in the template, no
// lookups, so `cdk synth` needs no credentials.
func TestEnvironmentAgnostic(t *testing.T) {
	for _, v := range []string{"dev", "prod", "localstack"} {
		s := synth(t, v)
		if !*awscdk.Token_IsUnresolved(s.stack.Account()) || !*awscdk.Token_IsUnresolved(s.stack.Region()) {
			t.Errorf("%s: stack has a fixed environment %s/%s", v, *s.stack.Account(), *s.stack.Region())
		}
		raw, _ := json.Marshal(s.json)
		if acct := regexp.MustCompile(`\b\d{12}\b`).FindString(string(raw)); acct != "" {
			t.Errorf("%s: template holds an account number %s", v, acct)
		}
		if region := regexp.MustCompile(`\b(us|eu|ap|sa|ca|me|af|il|mx)-(east|west|north|south|central|northeast|southeast|southwest|northwest)-\d\b`).FindString(string(raw)); region != "" {
			t.Errorf("%s: template names a region %s", v, region)
		}
	}
	// main.go passes no env; a context lookup would need credentials.
	if _, err := ParseConfig(func(string) (string, bool) { return "", false }); err != nil {
		t.Fatal(err)
	}
}
