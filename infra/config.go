package main

import (
	"fmt"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/constructs-go/constructs/v10"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/portal"
	"github.com/gifq/webhooks/shared/retry"
)

// Config is everything a deployment can choose, read from CDK context
// (`cdk deploy -c key=value`, or the "context" block of cdk.json). Every
// field has a default, so `cdk synth` with no context at all works.
type Config struct {
	// Stage names the deployment (context `stage`): dev, prod, ... The stack
	// is called GifqWebhooks-<stage>. "prod" keeps the table on stack
	// deletion and turns on deletion protection.
	Stage string
	// RetrySchedule overrides the retry waits (context `retrySchedule`,
	// e.g. "1s,2s,4s"); empty keeps the contract's default (n^4 seconds).
	RetrySchedule string
	// RateLimitPerSecond is the per-account delivery rate (context
	// `rateLimitPerSecond`).
	RateLimitPerSecond float64
	// IngestRatePerSecond and IngestBurst are each API key's ingest limit
	// unless its account or the key has its own (`ops account
	// set-ingest-limit`, `ops key set-limit`); context `ingestRatePerSecond`,
	// `ingestBurst`. The API stage's throttle stays the ceiling over all keys.
	IngestRatePerSecond float64
	IngestBurst         int
	// EndpointMaxInFlight caps concurrent attempts per endpoint (context
	// `endpointMaxInFlight`; 0 = no cap).
	EndpointMaxInFlight int
	// EndpointCap is "strict" (the default: every attempt takes a slot) or
	// "whenSlow" (slots only while an endpoint is slow: lifecycle.CapNow);
	// context `endpointCap`.
	EndpointCap string
	// AllowedSchemes for endpoint URLs (context `allowedSchemes`, comma
	// separated: "https" or "http,https").
	AllowedSchemes []string
	// AllowPrivateEndpoints lets endpoints point at private addresses
	// (context `allowPrivateEndpoints`). Only the "localstack" stage may set
	// it: a deployed stack never delivers to private, loopback, link-local or
	// metadata addresses.
	AllowPrivateEndpoints bool
	// SweepGrace: how overdue a delivery must be before the sweeper
	// re-queues it (context `sweepGrace`, a Go duration).
	SweepGrace time.Duration
	// LogLevel of the functions (context `logLevel`).
	LogLevel string
	// DeliverMaxConcurrency is the SQS event source's maximum concurrency
	// (context `deliverMaxConcurrency`, 2..1000).
	DeliverMaxConcurrency int
	// DeliverSlowMaxConcurrency is the slow lane's event source maximum
	// concurrency (context `deliverSlowMaxConcurrency`, 2..1000): what the
	// messages of failing endpoints may hold at most (lifecycle.Lane).
	DeliverSlowMaxConcurrency int
	// DeliverPacedMaxConcurrency is the paced lane's (context
	// `deliverPacedMaxConcurrency`, 2..1000): its invocations take up to
	// 100 messages each and last about two seconds (they wait for the
	// slots), so one keeps up with ~50 deliveries a second of accounts
	// over their rate (lifecycle.LanePaced).
	DeliverPacedMaxConcurrency int
	// APIThrottleRate and APIThrottleBurst are the API stage's throttle
	// (context `apiThrottleRate`, `apiThrottleBurst`).
	APIThrottleRate  float64
	APIThrottleBurst int
	// AlarmEmail, when set, creates an SNS topic with this email
	// subscription for every alarm (context `alarmEmail`).
	AlarmEmail string
	// AlarmTopicARN, when set, sends every alarm to an existing SNS topic
	// (context `alarmTopicArn`: a pager's, a chat integration's), in the
	// stack's region. prod needs one of the two.
	AlarmTopicARN string
	// DLQGrowthThreshold: the "DLQ growing" alarm fires when more than this
	// many messages are sent to the DLQ in one hour (context
	// `dlqGrowthThreshold`).
	DLQGrowthThreshold int
	// LambdaArchitecture is arm64 (default) or x86_64 (context
	// `lambdaArchitecture`); x86_64 exists for LocalStack on x86 hosts, where
	// arm64 Lambda containers would need emulation. `make build` must build
	// the same architecture (LAMBDA_ARCH).
	LambdaArchitecture string
	// APIGatewayCloudWatchRole creates the account-level role that API
	// Gateway needs to write execution logs (context
	// `apiGatewayCloudWatchRole`). Set it to false when the account already
	// has one (for example a second stage in the same account and region).
	APIGatewayCloudWatchRole bool
	// PortalFrameAncestors are the origins that may show the customer portal
	// in an iframe (context `portalFrameAncestors`: the CSP frame-ancestors
	// sources, space separated, e.g. "https://dashboard.gifq.com"); empty
	// means 'none'.
	PortalFrameAncestors string
	// PortalURL is where the portal is reached (context `portalUrl`, ending
	// in /portal/), for a custom domain; empty: the API Gateway URL the
	// session request came to.
	PortalURL string

	// APIType is what fronts the api function (context `api`): "rest", the
	// default, a REST API with a stage throttle, X-Ray tracing from the
	// edge, execution logs and the WAF option; or "http", an HTTP API at
	// $1.00 a million requests instead of $3.50 (a stage throttle and
	// access logs, no WAF, traces from the function on). docs/deploy.md
	// says which to choose; the LocalStack stage needs rest (the emulator
	// has no HTTP APIs).
	APIType string
	// WAF attaches an AWS WAF web ACL to the API stage (context `waf`,
	// default false: it costs about $6 a month plus $0.60 per million
	// requests) with one rate-based rule: more than WAFRateLimit requests
	// from one IP address in 5 minutes (context `wafRateLimit`) are answered
	// 429 at the edge, before API Gateway and Lambda (api_protection.go).
	WAF          bool
	WAFRateLimit int
	// EgressStaticIPs puts the deliver function in private subnets of its
	// own VPC behind NAT gateways with Elastic IPs, so that receivers can
	// allowlist the addresses webhooks come from (context `egressStaticIps`;
	// infra/egress.go, docs/deploy.md). Off by default: it costs money
	// (docs/cost.md). EgressAZs is how many availability zones, one NAT
	// gateway and one IP each (context `egressAzs`, 1..5: the default
	// Elastic IP quota).
	EgressStaticIPs bool
	EgressAZs       int
	// TableCapacity is how the table is billed (context `tableCapacity`):
	// "on-demand", the default, by the request, with nothing to size; or
	// "provisioned", capacity by the hour, auto scaled between
	// TableMinUnits and TableMaxUnits (contexts `tableMinUnits`,
	// `tableMaxUnits`) for the table's reads and writes and each index's,
	// at 70 % use: about 2.4 times less per unit for a steady load, and a
	// burst past the capacity is throttled until the scaling catches up
	// (minutes; docs/deploy.md "Which table capacity").
	TableCapacity                string
	TableMinUnits, TableMaxUnits int
	// DemoReceiver deploys the demo receiver: a Lambda function URL that
	// verifies each webhook's signature and logs it, its URL the
	// ReceiverUrl output (context `demoReceiver`, default false; receiver.go,
	// docs/deploy.md "First webhook in minutes"). For a first delivery
	// without a server of one's own; it accepts POSTs from anyone, so leave
	// it off in production.
	DemoReceiver bool
	// NotifyEmailFrom turns on notices by email (context `notifyEmailFrom`:
	// an address of a verified SES identity, the address or its domain).
	// deliver mails an account's notification contacts from it when an
	// endpoint fails, is disabled or recovers (notifymail.go); empty: no email.
	NotifyEmailFrom string
	// LocalStackStats deploys the stats function's stream mapping on the
	// localstack stage too (context `localstackStats`, default false: there
	// LocalStack's one Python process reads and filters every write's
	// stream record, most of a core in the e2e suite, and unrelated tests
	// time out; the stats test runs in a deploy of its own).
	LocalStackStats bool
}

// Context keys, as written in cdk.json and on the command line.
const (
	CtxStage                      = "stage"
	CtxRetrySchedule              = "retrySchedule"
	CtxRateLimitPerSecond         = "rateLimitPerSecond"
	CtxIngestRatePerSecond        = "ingestRatePerSecond"
	CtxIngestBurst                = "ingestBurst"
	CtxEndpointMaxInFlight        = "endpointMaxInFlight"
	CtxEndpointCap                = "endpointCap"
	CtxAllowedSchemes             = "allowedSchemes"
	CtxAllowPrivateEndpoints      = "allowPrivateEndpoints"
	CtxSweepGrace                 = "sweepGrace"
	CtxLogLevel                   = "logLevel"
	CtxDeliverMaxConcurrency      = "deliverMaxConcurrency"
	CtxDeliverSlowMaxConcurrency  = "deliverSlowMaxConcurrency"
	CtxDeliverPacedMaxConcurrency = "deliverPacedMaxConcurrency"
	CtxAPIThrottleRate            = "apiThrottleRate"
	CtxAPIThrottleBurst           = "apiThrottleBurst"
	CtxAlarmEmail                 = "alarmEmail"
	CtxAlarmTopicARN              = "alarmTopicArn"
	CtxDLQGrowthThreshold         = "dlqGrowthThreshold"
	CtxLambdaArchitecture         = "lambdaArchitecture"
	CtxAPIGatewayCloudWatchRole   = "apiGatewayCloudWatchRole"
	CtxPortalFrameAncestors       = "portalFrameAncestors"
	CtxPortalURL                  = "portalUrl"
	CtxAPIType                    = "api"
	CtxWAF                        = "waf"
	CtxWAFRateLimit               = "wafRateLimit"
	CtxEgressStaticIPs            = "egressStaticIps"
	CtxEgressAZs                  = "egressAzs"
	CtxDemoReceiver               = "demoReceiver"
	CtxLocalStackStats            = "localstackStats"
	CtxNotifyEmailFrom            = "notifyEmailFrom"
	CtxTableCapacity              = "tableCapacity"
	CtxTableMinUnits              = "tableMinUnits"
	CtxTableMaxUnits              = "tableMaxUnits"
)

// LocalStackStage is the only stage that may allow private endpoints: the
// LocalStack end-to-end suite's receiver runs on the developer's machine.
const LocalStackStage = "localstack"

// MetricsNamespace is the CloudWatch namespace of the functions' EMF metrics.
const MetricsNamespace = "GifqWebhooks"

// DefaultConfig is the configuration with no context given.
func DefaultConfig() Config {
	return Config{
		Stage:               "dev",
		RateLimitPerSecond:  5,
		IngestRatePerSecond: 100, // shared/config.Defaults says why
		IngestBurst:         1000,
		EndpointMaxInFlight: 5,
		EndpointCap:         "strict",
		AllowedSchemes:      []string{"https"},
		SweepGrace:          5 * time.Minute,
		LogLevel:            "info",
		// From the simulation (docs/scale.md, "The defaults this implies"):
		// 300 concurrent batches carry the day's peak with a breaker.
		DeliverMaxConcurrency: 300,
		// A sixth of it: failing endpoints' attempts (timeouts hold an
		// invocation for the whole delivery timeout) never hold more,
		// whatever their number; the healthy ones keep the 300.
		DeliverSlowMaxConcurrency:  50,
		DeliverPacedMaxConcurrency: 50,
		// The stage throttle is a ceiling over every producer (each API key
		// has its own ingest limit). The account's 10,000 rps / 5,000 burst
		// is shared by every API in the region, so at that figure one flood
		// (junk keys each cost a Lambda invocation) could take them all.
		// 2,000 rps is above the simulated day's peak (~650 events/s; at
		// ten times the load, ~6,400, the stage binds and is sized up:
		// docs/scale.md) and a fifth of the account's; a burst of 500 keeps a spike of requests from taking
		// more than half of a new account's 1,000 Lambda concurrency, which
		// deliver needs too.
		APIThrottleRate:          DefaultAPIThrottleRate,
		APIThrottleBurst:         DefaultAPIThrottleBurst,
		DLQGrowthThreshold:       10,
		LambdaArchitecture:       "arm64",
		APIGatewayCloudWatchRole: true,
		// 30,000 per IP in 5 minutes: 100 requests/s sustained, ten times a
		// key's default ingest rate, so a producer fleet behind one NAT
		// address is not cut, while a flood from one address is.
		WAFRateLimit: 30000,
		APIType:      APIREST,
		EgressAZs:    2,
		// Provisioned only: the floor each of the table's and its indexes'
		// reads and writes keeps (5 units each is about $17 a month for the
		// table and its five indexes), and a ceiling on the bill.
		TableCapacity: TableOnDemand,
		TableMinUnits: 5,
		TableMaxUnits: 4000,
	}
}

// The table's capacity modes (Config.TableCapacity), and the use auto
// scaling keeps a provisioned table at.
const (
	TableOnDemand     = "on-demand"
	TableProvisioned  = "provisioned"
	TableTargetUsePct = 70
)

// The default API stage throttle (DefaultConfig says why).
const (
	DefaultAPIThrottleRate  = 2000
	DefaultAPIThrottleBurst = 500
)

// The API types (Config.APIType).
const (
	APIREST = "rest"
	APIHTTP = "http"
)

// IsProd reports whether the stage is production.
func (c Config) IsProd() bool { return c.Stage == "prod" }

var stageRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)

// snsTopicARN is an SNS topic's ARN (a FIFO topic cannot take alarms).
var snsTopicARN = regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$`)

// Validate checks the configuration and returns every problem at once.
func (c Config) Validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if !stageRE.MatchString(c.Stage) {
		add("%s=%q: want 1-20 of a-z, 0-9 and '-', starting with a letter", CtxStage, c.Stage)
	}
	if c.NotifyEmailFrom != "" {
		if err := domain.CheckEmail(c.NotifyEmailFrom); err != nil {
			add("%s=%q: %v (the address of a verified SES identity)", CtxNotifyEmailFrom, c.NotifyEmailFrom, err)
		}
	}
	if c.DemoReceiver && c.IsProd() {
		add("%s=true: the demo receiver accepts POSTs from anyone; it is for trying a stage out, not for prod", CtxDemoReceiver)
	}
	if c.RetrySchedule != "" {
		if _, err := retry.Parse(c.RetrySchedule); err != nil {
			add("%s=%q: %v", CtxRetrySchedule, c.RetrySchedule, err)
		}
	}
	if c.RateLimitPerSecond <= 0 {
		add("%s=%v: want a positive number", CtxRateLimitPerSecond, c.RateLimitPerSecond)
	}
	if c.IngestRatePerSecond <= 0 {
		add("%s=%v: want a positive number", CtxIngestRatePerSecond, c.IngestRatePerSecond)
	}
	if c.IngestBurst < 1 {
		add("%s=%d: want at least 1", CtxIngestBurst, c.IngestBurst)
	}
	if c.EndpointMaxInFlight < 0 || c.EndpointMaxInFlight > 100 {
		add("%s=%d: want 0..100", CtxEndpointMaxInFlight, c.EndpointMaxInFlight)
	}
	if c.EndpointCap != "strict" && c.EndpointCap != "whenSlow" {
		add("%s=%q: want strict or whenSlow", CtxEndpointCap, c.EndpointCap)
	}
	if len(c.AllowedSchemes) == 0 {
		add("%s: want https or http,https", CtxAllowedSchemes)
	}
	for _, s := range c.AllowedSchemes {
		if s != "http" && s != "https" {
			add("%s: %q is not http or https", CtxAllowedSchemes, s)
		}
	}
	if c.AllowPrivateEndpoints && c.Stage != LocalStackStage {
		add("%s=true is only for stage %q: a deployed stack never delivers to private addresses", CtxAllowPrivateEndpoints, LocalStackStage)
	}
	if c.SweepGrace <= 0 {
		add("%s=%v: want a positive duration", CtxSweepGrace, c.SweepGrace)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		add("%s=%q: want debug, info, warn or error", CtxLogLevel, c.LogLevel)
	}
	if c.DeliverMaxConcurrency < 2 || c.DeliverMaxConcurrency > 1000 {
		add("%s=%d: SQS event sources take 2..1000", CtxDeliverMaxConcurrency, c.DeliverMaxConcurrency)
	}
	if c.DeliverSlowMaxConcurrency < 2 || c.DeliverSlowMaxConcurrency > 1000 {
		add("%s=%d: SQS event sources take 2..1000", CtxDeliverSlowMaxConcurrency, c.DeliverSlowMaxConcurrency)
	}
	if c.DeliverPacedMaxConcurrency < 2 || c.DeliverPacedMaxConcurrency > 1000 {
		add("%s=%d: SQS event sources take 2..1000", CtxDeliverPacedMaxConcurrency, c.DeliverPacedMaxConcurrency)
	}
	if c.APIThrottleRate <= 0 {
		add("%s=%v: want a positive number", CtxAPIThrottleRate, c.APIThrottleRate)
	}
	if c.APIThrottleBurst <= 0 {
		add("%s=%d: want a positive number", CtxAPIThrottleBurst, c.APIThrottleBurst)
	}
	if c.AlarmEmail != "" {
		if a, err := mail.ParseAddress(c.AlarmEmail); err != nil || a.Address != c.AlarmEmail {
			add("%s=%q: want a plain email address", CtxAlarmEmail, c.AlarmEmail)
		}
	}
	if c.AlarmTopicARN != "" && !snsTopicARN.MatchString(c.AlarmTopicARN) {
		add("%s=%q: want an SNS topic ARN, arn:<partition>:sns:<region>:<account>:<name>", CtxAlarmTopicARN, c.AlarmTopicARN)
	}
	if c.IsProd() && c.AlarmEmail == "" && c.AlarmTopicARN == "" {
		add("stage=prod needs an alarm destination: -c %s=<address> (a topic the stack makes) or -c %s=<an existing SNS topic's ARN>; "+
			"without one the alarms notify no one", CtxAlarmEmail, CtxAlarmTopicARN)
	}
	if c.DLQGrowthThreshold < 1 {
		add("%s=%d: want at least 1", CtxDLQGrowthThreshold, c.DLQGrowthThreshold)
	}
	if c.LambdaArchitecture != "arm64" && c.LambdaArchitecture != "x86_64" {
		add("%s=%q: want arm64 or x86_64", CtxLambdaArchitecture, c.LambdaArchitecture)
	}
	switch {
	case c.TableCapacity != TableOnDemand && c.TableCapacity != TableProvisioned:
		add("%s=%q: want %s or %s", CtxTableCapacity, c.TableCapacity, TableOnDemand, TableProvisioned)
	case c.TableMinUnits < 1 || c.TableMaxUnits < c.TableMinUnits || c.TableMaxUnits > 40000:
		add("%s=%d, %s=%d: want 1 <= min <= max <= 40000 (DynamoDB's per-table default)", CtxTableMinUnits, c.TableMinUnits, CtxTableMaxUnits, c.TableMaxUnits)
	}
	switch {
	case c.APIType != APIREST && c.APIType != APIHTTP:
		add("%s=%q: want %s or %s", CtxAPIType, c.APIType, APIREST, APIHTTP)
	case c.APIType == APIHTTP && c.WAF:
		add("%s=true with %s=%s: AWS WAF attaches to REST API stages only; keep %s=%s for a web ACL", CtxWAF, CtxAPIType, APIHTTP, CtxAPIType, APIREST)
	case c.APIType == APIHTTP && c.Stage == LocalStackStage:
		add("%s=%s on stage %q: LocalStack's open-source core has no HTTP APIs", CtxAPIType, APIHTTP, LocalStackStage)
	}
	if c.WAFRateLimit < 10 || c.WAFRateLimit > 2000000000 {
		add("%s=%d: AWS WAF rate-based rules take 10..2,000,000,000 requests per 5 minutes", CtxWAFRateLimit, c.WAFRateLimit)
	}
	if c.EgressAZs < 1 || c.EgressAZs > MaxEgressAZs {
		add("%s=%d: want 1..%d (one Elastic IP each; a region's default quota is 5 per account)", CtxEgressAZs, c.EgressAZs, MaxEgressAZs)
	}
	if _, err := portal.ParseSettings(c.portalEnv); err != nil {
		add("%s / %s: %v", CtxPortalFrameAncestors, CtxPortalURL, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid CDK context:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// ConfigFromContext reads the configuration from a construct's context
// (the app's), over the defaults, and validates it.
func ConfigFromContext(node constructs.Node) (Config, error) {
	return ParseConfig(func(key string) (string, bool) {
		v := node.TryGetContext(&key)
		if v == nil {
			return "", false
		}
		return fmt.Sprint(v), true
	})
}

// ParseConfig reads the configuration through get (a context lookup that
// gives values as strings) over the defaults, and validates it.
func ParseConfig(get func(key string) (string, bool)) (Config, error) {
	c := DefaultConfig()
	var errs []string
	bad := func(key, v, want string) { errs = append(errs, fmt.Sprintf("%s=%q: want %s", key, v, want)) }
	str := func(key string, dst *string) {
		if v, ok := get(key); ok {
			*dst = strings.TrimSpace(v)
		}
	}
	float := func(key string, dst *float64) {
		if v, ok := get(key); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				bad(key, v, "a number")
				return
			}
			*dst = f
		}
	}
	integer := func(key string, dst *int) {
		if v, ok := get(key); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				bad(key, v, "an integer")
				return
			}
			*dst = n
		}
	}
	boolean := func(key string, dst *bool) {
		if v, ok := get(key); ok {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				bad(key, v, "true or false")
				return
			}
			*dst = b
		}
	}
	str(CtxStage, &c.Stage)
	str(CtxRetrySchedule, &c.RetrySchedule)
	float(CtxRateLimitPerSecond, &c.RateLimitPerSecond)
	float(CtxIngestRatePerSecond, &c.IngestRatePerSecond)
	integer(CtxIngestBurst, &c.IngestBurst)
	integer(CtxEndpointMaxInFlight, &c.EndpointMaxInFlight)
	str(CtxEndpointCap, &c.EndpointCap)
	if v, ok := get(CtxAllowedSchemes); ok {
		c.AllowedSchemes = nil
		for _, s := range strings.Split(v, ",") {
			if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
				c.AllowedSchemes = append(c.AllowedSchemes, s)
			}
		}
	}
	boolean(CtxAllowPrivateEndpoints, &c.AllowPrivateEndpoints)
	if v, ok := get(CtxSweepGrace); ok {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			bad(CtxSweepGrace, v, "a duration like 5m")
		} else {
			c.SweepGrace = d
		}
	}
	str(CtxLogLevel, &c.LogLevel)
	c.LogLevel = strings.ToLower(c.LogLevel)
	integer(CtxDeliverMaxConcurrency, &c.DeliverMaxConcurrency)
	integer(CtxDeliverSlowMaxConcurrency, &c.DeliverSlowMaxConcurrency)
	integer(CtxDeliverPacedMaxConcurrency, &c.DeliverPacedMaxConcurrency)
	float(CtxAPIThrottleRate, &c.APIThrottleRate)
	integer(CtxAPIThrottleBurst, &c.APIThrottleBurst)
	str(CtxAlarmEmail, &c.AlarmEmail)
	str(CtxAlarmTopicARN, &c.AlarmTopicARN)
	integer(CtxDLQGrowthThreshold, &c.DLQGrowthThreshold)
	str(CtxLambdaArchitecture, &c.LambdaArchitecture)
	boolean(CtxAPIGatewayCloudWatchRole, &c.APIGatewayCloudWatchRole)
	str(CtxPortalFrameAncestors, &c.PortalFrameAncestors)
	str(CtxPortalURL, &c.PortalURL)
	str(CtxAPIType, &c.APIType)
	boolean(CtxWAF, &c.WAF)
	integer(CtxWAFRateLimit, &c.WAFRateLimit)
	boolean(CtxEgressStaticIPs, &c.EgressStaticIPs)
	integer(CtxEgressAZs, &c.EgressAZs)
	boolean(CtxDemoReceiver, &c.DemoReceiver)
	boolean(CtxLocalStackStats, &c.LocalStackStats)
	str(CtxNotifyEmailFrom, &c.NotifyEmailFrom)
	str(CtxTableCapacity, &c.TableCapacity)
	integer(CtxTableMinUnits, &c.TableMinUnits)
	integer(CtxTableMaxUnits, &c.TableMaxUnits)
	if err := c.Validate(); err != nil {
		errs = append(errs, strings.TrimPrefix(err.Error(), "invalid CDK context:\n  "))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("invalid CDK context:\n  %s", strings.Join(errs, "\n  "))
	}
	return c, nil
}

// Environment is the functions' environment apart from the resource names
// (TABLE_NAME, QUEUE_URL, DLQ_URL), which the stack adds. The variables are
// the ones shared/config reads.
func (c Config) Environment() map[string]string {
	env := map[string]string{
		"STAGE":                   c.Stage,
		"RATE_LIMIT_PER_SECOND":   strconv.FormatFloat(c.RateLimitPerSecond, 'f', -1, 64),
		"INGEST_RATE_PER_SECOND":  strconv.FormatFloat(c.IngestRatePerSecond, 'f', -1, 64),
		"INGEST_BURST":            strconv.Itoa(c.IngestBurst),
		"ENDPOINT_MAX_IN_FLIGHT":  strconv.Itoa(c.EndpointMaxInFlight),
		"ALLOWED_SCHEMES":         strings.Join(c.AllowedSchemes, ","),
		"ALLOW_PRIVATE_ENDPOINTS": strconv.FormatBool(c.AllowPrivateEndpoints),
		"SWEEP_GRACE":             c.SweepGrace.String(),
		"METRICS":                 "emf",
		"METRICS_NAMESPACE":       MetricsNamespace,
		"LOG_LEVEL":               c.LogLevel,
	}
	if c.RetrySchedule != "" {
		env["RETRY_SCHEDULE"] = c.RetrySchedule
	}
	if c.EndpointCap != "strict" {
		env["ENDPOINT_CAP"] = c.EndpointCap
	}
	return env
}

// WithPortal is env plus the portal's settings, for the api function (the
// one that serves the portal).
func (c Config) WithPortal(env map[string]string) map[string]string {
	out := make(map[string]string, len(env)+2)
	for k, v := range env {
		out[k] = v
	}
	for _, k := range []string{"PORTAL_FRAME_ANCESTORS", "PORTAL_URL"} {
		if v := c.portalEnv(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// portalEnv is the api function's portal settings as shared/portal reads them.
func (c Config) portalEnv(k string) string {
	switch k {
	case "PORTAL_FRAME_ANCESTORS":
		if c.PortalFrameAncestors == "" {
			return portal.DefaultFrameAncestors
		}
		return c.PortalFrameAncestors
	case "PORTAL_URL":
		return c.PortalURL
	}
	return ""
}
