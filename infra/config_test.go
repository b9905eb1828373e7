package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

func getter(m map[string]any) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		if !ok || v == nil {
			return "", false
		}
		return fmt.Sprint(v), true
	}
}

// TestCdkJSON: cdk.json runs the Go app, and its context block gives
// exactly the defaults (so `cdk synth` and `go test` build the same stack),
// with no unknown keys besides CDK feature flags.
func TestCdkJSON(t *testing.T) {
	c := cdkJSON(t)
	if c["app"] != "go run ./infra" {
		t.Errorf(`app = %v, want "go run ./infra"`, c["app"])
	}
	ctx, _ := c["context"].(map[string]any)
	known := map[string]bool{}
	for _, k := range []string{CtxStage, CtxRetrySchedule, CtxRateLimitPerSecond, CtxIngestRatePerSecond, CtxIngestBurst, CtxEndpointMaxInFlight, CtxEndpointCap, CtxAllowedSchemes,
		CtxAllowPrivateEndpoints, CtxSweepGrace, CtxLogLevel, CtxDeliverMaxConcurrency, CtxDeliverSlowMaxConcurrency, CtxDeliverPacedMaxConcurrency, CtxAPIThrottleRate, CtxAPIThrottleBurst,
		CtxAlarmEmail, CtxAlarmTopicARN, CtxDLQGrowthThreshold, CtxLambdaArchitecture, CtxAPIGatewayCloudWatchRole,
		CtxPortalFrameAncestors, CtxPortalURL, CtxAPIType, CtxTableCapacity, CtxTableMinUnits, CtxTableMaxUnits, CtxWAF, CtxWAFRateLimit, CtxEgressStaticIPs, CtxEgressAZs, CtxDemoReceiver} {
		known[k] = true
		if _, ok := ctx[k]; !ok {
			t.Errorf("cdk.json context lacks %s (document every option there)", k)
		}
	}
	for k := range ctx {
		if !known[k] && !strings.HasPrefix(k, "@aws-cdk") {
			t.Errorf("cdk.json context has unknown key %q", k)
		}
	}
	cfg, err := ParseConfig(getter(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, DefaultConfig()) {
		t.Errorf("cdk.json context gives\n %+v\nwant the defaults\n %+v", cfg, DefaultConfig())
	}
}

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig(getter(map[string]any{
		CtxStage: "prod", CtxRetrySchedule: "1s, 2s", CtxRateLimitPerSecond: 2.5, CtxEndpointMaxInFlight: 0, CtxEndpointCap: "whenSlow",
		CtxIngestRatePerSecond: "0.5", CtxIngestBurst: 4, CtxAllowedSchemes: "HTTPS", CtxSweepGrace: "90s", CtxLogLevel: "DEBUG", CtxDeliverMaxConcurrency: "1000",
		CtxAPIThrottleRate: "10", CtxAPIThrottleBurst: 20, CtxAlarmEmail: "ops@example.com", CtxDLQGrowthThreshold: 3,
		CtxLambdaArchitecture: "x86_64", CtxAPIGatewayCloudWatchRole: "false", CtxWAF: "true", CtxWAFRateLimit: "500",
		CtxEgressStaticIPs: "true", CtxEgressAZs: "3", // demoReceiver: refused on prod (TestDemoReceiver)
		CtxTableCapacity: "provisioned", CtxTableMinUnits: "10", CtxTableMaxUnits: 800,
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Stage: "prod", RetrySchedule: "1s, 2s", RateLimitPerSecond: 2.5, EndpointMaxInFlight: 0, EndpointCap: "whenSlow",
		IngestRatePerSecond: 0.5, IngestBurst: 4, AllowedSchemes: []string{"https"}, SweepGrace: 90 * time.Second, LogLevel: "debug", DeliverMaxConcurrency: 1000, DeliverSlowMaxConcurrency: 50, DeliverPacedMaxConcurrency: 50,
		APIThrottleRate: 10, APIThrottleBurst: 20, AlarmEmail: "ops@example.com", DLQGrowthThreshold: 3,
		LambdaArchitecture: "x86_64", APIGatewayCloudWatchRole: false, WAF: true, WAFRateLimit: 500,
		EgressStaticIPs: true, EgressAZs: 3, APIType: APIREST, TableCapacity: TableProvisioned, TableMinUnits: 10, TableMaxUnits: 800,
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got  %+v\nwant %+v", cfg, want)
	}
	if !cfg.IsProd() {
		t.Error("prod is not prod")
	}
	env := cfg.Environment()
	if env["RETRY_SCHEDULE"] != "1s, 2s" || env["RATE_LIMIT_PER_SECOND"] != "2.5" || env["INGEST_RATE_PER_SECOND"] != "0.5" || env["INGEST_BURST"] != "4" || env["SWEEP_GRACE"] != "1m30s" ||
		env["METRICS"] != "emf" || env["METRICS_NAMESPACE"] != "GifqWebhooks" || env["ALLOW_PRIVATE_ENDPOINTS"] != "false" {
		t.Errorf("environment %v", env)
	}
}

func TestParseConfigRejects(t *testing.T) {
	for _, tc := range []struct {
		ctx  map[string]any
		want string
	}{
		{map[string]any{CtxStage: "Prod"}, CtxStage},
		{map[string]any{CtxStage: "a-very-long-stage-name-indeed"}, CtxStage},
		{map[string]any{CtxRetrySchedule: "1s,soon"}, CtxRetrySchedule},
		{map[string]any{CtxRetrySchedule: "13h"}, CtxRetrySchedule},
		{map[string]any{CtxRateLimitPerSecond: "0"}, CtxRateLimitPerSecond},
		{map[string]any{CtxRateLimitPerSecond: "fast"}, CtxRateLimitPerSecond},
		{map[string]any{CtxIngestRatePerSecond: "0"}, CtxIngestRatePerSecond},
		{map[string]any{CtxIngestBurst: "0"}, CtxIngestBurst},
		{map[string]any{CtxEndpointMaxInFlight: "101"}, CtxEndpointMaxInFlight},
		{map[string]any{CtxEndpointCap: "loose"}, CtxEndpointCap},
		{map[string]any{CtxAllowedSchemes: "ftp"}, CtxAllowedSchemes},
		{map[string]any{CtxAllowedSchemes: " , "}, CtxAllowedSchemes},
		// A deployed stack never reaches private addresses.
		{map[string]any{CtxAllowPrivateEndpoints: "true"}, CtxAllowPrivateEndpoints},
		{map[string]any{CtxStage: "prod", CtxAllowPrivateEndpoints: true}, CtxAllowPrivateEndpoints},
		{map[string]any{CtxAllowPrivateEndpoints: "yes please"}, CtxAllowPrivateEndpoints},
		{map[string]any{CtxSweepGrace: "0s"}, CtxSweepGrace},
		{map[string]any{CtxLogLevel: "loud"}, CtxLogLevel},
		{map[string]any{CtxDeliverMaxConcurrency: "1"}, CtxDeliverMaxConcurrency},
		{map[string]any{CtxDeliverMaxConcurrency: "1001"}, CtxDeliverMaxConcurrency},
		{map[string]any{CtxDeliverPacedMaxConcurrency: "1"}, CtxDeliverPacedMaxConcurrency},
		{map[string]any{CtxTableCapacity: "reserved"}, CtxTableCapacity},
		{map[string]any{CtxTableMinUnits: "0"}, CtxTableMinUnits},
		{map[string]any{CtxTableMinUnits: "50", CtxTableMaxUnits: "10"}, CtxTableMaxUnits},
		{map[string]any{CtxAPIThrottleRate: "-1"}, CtxAPIThrottleRate},
		{map[string]any{CtxAPIThrottleBurst: "0"}, CtxAPIThrottleBurst},
		{map[string]any{CtxAlarmEmail: "ops"}, CtxAlarmEmail},
		{map[string]any{CtxAlarmEmail: "Ops <ops@example.com>"}, CtxAlarmEmail},
		{map[string]any{CtxAlarmTopicARN: "pager"}, CtxAlarmTopicARN},
		{map[string]any{CtxAlarmTopicARN: "arn:aws:sqs:eu-west-1:123456789012:q"}, CtxAlarmTopicARN},
		// prod notifies someone: an email or an existing topic.
		{map[string]any{CtxStage: "prod"}, "stage=prod needs an alarm destination: -c alarmEmail=<address> (a topic the stack makes) or -c alarmTopicArn="},
		{map[string]any{CtxDLQGrowthThreshold: "0"}, CtxDLQGrowthThreshold},
		{map[string]any{CtxLambdaArchitecture: "arm"}, CtxLambdaArchitecture},
		{map[string]any{CtxAPIGatewayCloudWatchRole: "maybe"}, CtxAPIGatewayCloudWatchRole},
		{map[string]any{CtxWAF: "on"}, CtxWAF},
		{map[string]any{CtxWAFRateLimit: "9"}, CtxWAFRateLimit},
		{map[string]any{CtxWAFRateLimit: "lots"}, CtxWAFRateLimit},
		{map[string]any{CtxAPIType: "graphql"}, CtxAPIType},
		// WAF attaches to REST stages only; LocalStack's core has no HTTP APIs.
		{map[string]any{CtxAPIType: "http", CtxWAF: "true"}, CtxWAF},
		{map[string]any{CtxAPIType: "http", CtxStage: LocalStackStage}, CtxAPIType},
	} {
		_, err := ParseConfig(getter(tc.ctx))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one naming %s", tc.ctx, err, tc.want)
		}
	}
	// prod with either alarm destination.
	for _, dest := range []map[string]any{{CtxAlarmEmail: "ops@example.com"}, {CtxAlarmTopicARN: "arn:aws-us-gov:sns:us-gov-west-1:123456789012:pager-1"}} {
		dest[CtxStage] = "prod"
		if c, err := ParseConfig(getter(dest)); err != nil || c.AlarmEmail+c.AlarmTopicARN == "" {
			t.Errorf("%v: %v", dest, err)
		}
	}
	// The localstack stage may allow private endpoints.
	if _, err := ParseConfig(getter(map[string]any{CtxStage: LocalStackStage, CtxAllowPrivateEndpoints: "true"})); err != nil {
		t.Error(err)
	}
	// Several problems are reported together.
	_, err := ParseConfig(getter(map[string]any{CtxLogLevel: "loud", CtxAPIThrottleBurst: "0"}))
	if err == nil || !strings.Contains(err.Error(), CtxLogLevel) || !strings.Contains(err.Error(), CtxAPIThrottleBurst) {
		t.Errorf("want both problems, got %v", err)
	}
}

// TestNewStackRejectsInvalidConfig: the stack itself refuses a bad
// configuration, e.g. private endpoints outside the localstack stage.
func TestNewStackRejectsInvalidConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AllowPrivateEndpoints = true
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), CtxAllowPrivateEndpoints) {
			t.Errorf("NewStack accepted AllowPrivateEndpoints on stage dev (recovered %v)", r)
		}
	}()
	NewStack(nil, "Never", &StackProps{Config: cfg, AssetDir: "unused"})
}

// The stack's defaults are the ones docs/scale.md's simulation chose: 300 concurrent deliver batches of 10 (50 fell behind by 01:07 on the
// simulated day); the API stage throttle well below the account's 10,000
// rps / 5,000 burst that every API in the region shares (50 rps would be
// below the day's mean; each key's ingest limit isolates producers).
func TestDefaultsFromTheSimulation(t *testing.T) {
	c := DefaultConfig()
	if c.DeliverMaxConcurrency != 300 || c.APIThrottleRate != 2000 || c.APIThrottleBurst != 500 {
		t.Fatalf("deliverMaxConcurrency %d, apiThrottleRate %v, apiThrottleBurst %d; want 300, 2000, 500",
			c.DeliverMaxConcurrency, c.APIThrottleRate, c.APIThrottleBurst)
	}
	if c.APIThrottleRate > 10000/4 || c.APIThrottleBurst > 5000/4 || c.WAF {
		t.Errorf("the stage throttle %v/%d is not well below the account's 10,000/5,000, or WAF is on by default", c.APIThrottleRate, c.APIThrottleBurst)
	}
	s := synth(t, "dev")
	check(t, "deliver mapping: 300 x batches of 10", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), m{"BatchSize": 10, "ScalingConfig": m{"MaximumConcurrency": 300}})
	})
	check(t, "stage throttle", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Stage"), m{"MethodSettings": []any{assertions.Match_ObjectLike(&map[string]any{
			"ThrottlingRateLimit": 2000, "ThrottlingBurstLimit": 500})}})
	})
}
