// Package config reads a function's settings from its environment. The same
// variables configure the Lambda functions (set by the CDK stack) and the
// local runner (set by make dev).
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/portal"
	"github.com/gifq/webhooks/shared/retry"
)

// Config is every setting of the system.
type Config struct {
	Stage                 string         // STAGE: dev, prod...
	TableName             string         // TABLE_NAME
	QueueURL              string         // QUEUE_URL: the delivery queue
	SlowQueueURL          string         // SLOW_QUEUE_URL: the delivery queue's slow lane, for failing endpoints (lifecycle.Lane); none: one lane
	PacedQueueURL         string         // PACED_QUEUE_URL: its paced lane, for messages whose slot is booked ahead (lifecycle.LanePaced); none: they take the fast lane
	DLQURL                string         // DLQ_URL
	KMSKeyID              string         // KMS_KEY_ID: the key that seals signing secrets and keys (package envelope); required by api and deliver
	Retry                 retry.Schedule // RETRY_SCHEDULE: "1s,16s,..." (default n^4 s, 8 attempts)
	RatePerSecond         float64        // RATE_LIMIT_PER_SECOND: per account (default 5)
	IngestRatePerSecond   float64        // INGEST_RATE_PER_SECOND: events a second per API key at the API (default 100; ops can override per account or key)
	IngestBurst           int            // INGEST_BURST: events at once per API key (default 1000)
	PortalRatePerSecond   float64        // PORTAL_RATE_PER_SECOND: requests a second per portal session (default 10)
	PortalBurst           int            // PORTAL_BURST: requests at once per portal session (default 50)
	ManagementRate        float64        // MANAGEMENT_RATE_PER_SECOND: management writes a second per API key (default 5)
	ManagementBurst       int            // MANAGEMENT_BURST: management writes at once per API key (default 100)
	EndpointMaxInFlight   int            // ENDPOINT_MAX_IN_FLIGHT: concurrent attempts per endpoint (default 5; 0 = no cap)
	EndpointCapWhenSlow   bool           // ENDPOINT_CAP=whenSlow: the cap's slots only while an endpoint is slow (default strict)
	DeliveryTimeout       time.Duration  // DELIVERY_TIMEOUT (default 10s)
	AllowPrivateEndpoints bool           // ALLOW_PRIVATE_ENDPOINTS (default false)
	AllowedSchemes        []string       // ALLOWED_SCHEMES (default https)
	SweepGrace            time.Duration  // SWEEP_GRACE: how overdue a delivery must be before the sweeper re-queues it (default 5m)
	ParkAfter             time.Duration  // PARK_AFTER: a wait longer than this is parked in the table for the scheduler, shorter ones are delayed sends (default and most 15m, SQS's delay limit)
	Breaker               bool           // BREAKER: "on" (default) or "off": the per-endpoint circuit breaker (lifecycle.Breaker*)
	ScheduleAhead         time.Duration  // SCHEDULE_AHEAD: how far ahead each scheduler run sends parked deliveries (default 2m: twice its 1-minute period)
	SecretRotationGrace   time.Duration  // SECRET_ROTATION_GRACE (default and most 24h)
	EndpointDisableAfter  time.Duration  // ENDPOINT_DISABLE_AFTER: disable an endpoint failing without a success for this long (default 120h; 0 = never)
	APIKeyCacheTTL        time.Duration  // API_KEY_CACHE_TTL: how long the api function remembers a valid key (default 30s; 0 = off); a revoked key works at most this long
	LogLevel              slog.Level     // LOG_LEVEL: debug, info, warn, error
	Metrics               bool           // METRICS: "emf" (default) writes CloudWatch Embedded Metric Format lines; "off"
	MetricsNamespace      string         // METRICS_NAMESPACE (default GifqWebhooks)

	Portal portal.Settings // PORTAL_URL, PORTAL_FRAME_ANCESTORS (shared/portal)
	// EGRESS_IPS: the static addresses deliveries leave from, comma separated
	// (the stack sets it on the api function with egressStaticIps; empty: none).
	EgressIPs []string
	// OPS_EVENT_BUS: the EventBridge bus operational events go to (package
	// opevents; the stack sets it on the functions that publish). Empty:
	// they are logged as JSON lines instead (make dev has no bus).
	OpsEventBus string
	// NOTIFY_EMAIL_FROM: the verified SES identity notices are mailed from
	// (package notifymail; the stack sets it on deliver with notifyEmailFrom).
	// Empty: no email.
	NotifyEmailFrom string
	// DESTINATION_REGIONS: the regions an AWS destination (SQS, SNS,
	// EventBridge) may be in, comma separated; by default the stack's own
	// (AWS_REGION), whose partition is then the only one served.
	DestinationRegions []string
	// DEPLOYMENT_ACCOUNT_ID: the AWS account this deployment runs in (the
	// stack sets it). An AWS destination's role may not be in it: such a
	// role trusts our account, not a customer's (docs/destinations.md).
	// Empty: no account is refused (make dev).
	DeploymentAccount string
}

// Defaults are the contract's values.
func Defaults() Config {
	return Config{
		Stage:         "dev",
		Retry:         retry.Default(),
		RatePerSecond: 5,
		// A burst such as an order with 500 recipients finishing at once is
		// accepted whole (the contract spreads it at the account's delivery
		// rate instead of dropping it): the bucket holds two of them. The
		// refill, 20 times the default delivery rate, still answers a flood
		// (a runaway producer, a leaked key: thousands a second) with 429
		// before it costs a write per event.
		IngestRatePerSecond:  100,
		IngestBurst:          1000,
		PortalRatePerSecond:  10,
		PortalBurst:          50,
		ManagementRate:       5,
		ManagementBurst:      100,
		EndpointMaxInFlight:  5,
		DeliveryTimeout:      10 * time.Second,
		AllowedSchemes:       []string{"https"},
		SweepGrace:           5 * time.Minute,
		ParkAfter:            15 * time.Minute,
		ScheduleAhead:        2 * time.Minute,
		Breaker:              true,
		SecretRotationGrace:  24 * time.Hour,
		EndpointDisableAfter: 5 * 24 * time.Hour,
		APIKeyCacheTTL:       30 * time.Second,
		LogLevel:             slog.LevelInfo,
		Metrics:              true,
		MetricsNamespace:     "GifqWebhooks",
	}
}

// FromEnv reads the environment over the defaults.
func FromEnv() (Config, error) { return Parse(os.Getenv) }

// Parse reads settings through getenv over the defaults.
func Parse(getenv func(string) string) (Config, error) {
	c := Defaults()
	var errs []error
	str := func(name string, dst *string) {
		if v := getenv(name); v != "" {
			*dst = v
		}
	}
	dur := func(name string, dst *time.Duration) {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				errs = append(errs, fmt.Errorf("%s=%q: want a duration like 10s", name, v))
				return
			}
			*dst = d
		}
	}
	str("STAGE", &c.Stage)
	str("TABLE_NAME", &c.TableName)
	str("QUEUE_URL", &c.QueueURL)
	str("SLOW_QUEUE_URL", &c.SlowQueueURL)
	str("PACED_QUEUE_URL", &c.PacedQueueURL)
	str("DLQ_URL", &c.DLQURL)
	str("KMS_KEY_ID", &c.KMSKeyID)
	str("OPS_EVENT_BUS", &c.OpsEventBus)
	str("NOTIFY_EMAIL_FROM", &c.NotifyEmailFrom)
	if c.NotifyEmailFrom != "" {
		if err := domain.CheckEmail(c.NotifyEmailFrom); err != nil {
			errs = append(errs, fmt.Errorf("NOTIFY_EMAIL_FROM=%q: %v", c.NotifyEmailFrom, err))
		}
	}
	str("METRICS_NAMESPACE", &c.MetricsNamespace)
	if v := strings.TrimSpace(getenv("EGRESS_IPS")); v != "" {
		for _, ip := range strings.Split(v, ",") {
			addr, err := netip.ParseAddr(strings.TrimSpace(ip))
			if err != nil {
				errs = append(errs, fmt.Errorf("EGRESS_IPS=%q: %q is not an IP address", v, strings.TrimSpace(ip)))
				continue
			}
			c.EgressIPs = append(c.EgressIPs, addr.String())
		}
	}
	c.DestinationRegions = regionList(getenv("DESTINATION_REGIONS"), getenv("AWS_REGION"))
	if v := strings.TrimSpace(getenv("DEPLOYMENT_ACCOUNT_ID")); v != "" {
		if !accountIDRE.MatchString(v) {
			errs = append(errs, fmt.Errorf("DEPLOYMENT_ACCOUNT_ID=%q: want a 12-digit AWS account id", v))
		}
		c.DeploymentAccount = v
	}
	dur("DELIVERY_TIMEOUT", &c.DeliveryTimeout)
	dur("SWEEP_GRACE", &c.SweepGrace)
	dur("PARK_AFTER", &c.ParkAfter)
	dur("SCHEDULE_AHEAD", &c.ScheduleAhead)
	if c.ParkAfter > 15*time.Minute || c.ScheduleAhead > 15*time.Minute {
		errs = append(errs, fmt.Errorf("PARK_AFTER and SCHEDULE_AHEAD: at most 15m (SQS's longest delay)"))
	}
	dur("SECRET_ROTATION_GRACE", &c.SecretRotationGrace)
	if c.SecretRotationGrace > 24*time.Hour {
		errs = append(errs, fmt.Errorf("SECRET_ROTATION_GRACE: at most 24h (an old secret signs no longer than that)"))
	}
	dur("ENDPOINT_DISABLE_AFTER", &c.EndpointDisableAfter)
	dur("API_KEY_CACHE_TTL", &c.APIKeyCacheTTL)
	if v := getenv("RETRY_SCHEDULE"); v != "" {
		s, err := retry.Parse(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("RETRY_SCHEDULE: %w", err))
		}
		c.Retry = s
	}
	if v := getenv("RATE_LIMIT_PER_SECOND"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			errs = append(errs, fmt.Errorf("RATE_LIMIT_PER_SECOND=%q: want a positive number", v))
		}
		c.RatePerSecond = f
	}
	if v := getenv("INGEST_RATE_PER_SECOND"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) {
			errs = append(errs, fmt.Errorf("INGEST_RATE_PER_SECOND=%q: want a positive number", v))
		}
		c.IngestRatePerSecond = f
	}
	if v := getenv("INGEST_BURST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("INGEST_BURST=%q: want a whole number of at least 1", v))
		}
		c.IngestBurst = n
	}
	if v := getenv("PORTAL_RATE_PER_SECOND"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) {
			errs = append(errs, fmt.Errorf("PORTAL_RATE_PER_SECOND=%q: want a positive number", v))
		}
		c.PortalRatePerSecond = f
	}
	if v := getenv("PORTAL_BURST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("PORTAL_BURST=%q: want a whole number of at least 1", v))
		}
		c.PortalBurst = n
	}
	if v := getenv("MANAGEMENT_RATE_PER_SECOND"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) {
			errs = append(errs, fmt.Errorf("MANAGEMENT_RATE_PER_SECOND=%q: want a positive number", v))
		}
		c.ManagementRate = f
	}
	if v := getenv("MANAGEMENT_BURST"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("MANAGEMENT_BURST=%q: want a whole number of at least 1", v))
		}
		c.ManagementBurst = n
	}
	if v := getenv("ENDPOINT_MAX_IN_FLIGHT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 100 {
			errs = append(errs, fmt.Errorf("ENDPOINT_MAX_IN_FLIGHT=%q: want 0..100", v))
		}
		c.EndpointMaxInFlight = n
	}
	switch v := getenv("ENDPOINT_CAP"); v {
	case "", "strict":
	case "whenSlow":
		c.EndpointCapWhenSlow = true
	default:
		errs = append(errs, fmt.Errorf("ENDPOINT_CAP=%q: want strict or whenSlow", v))
	}
	if v := getenv("ALLOW_PRIVATE_ENDPOINTS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("ALLOW_PRIVATE_ENDPOINTS=%q: want true or false", v))
		}
		c.AllowPrivateEndpoints = b
	}
	if v := getenv("ALLOWED_SCHEMES"); v != "" {
		c.AllowedSchemes = nil
		for _, s := range strings.Split(v, ",") {
			s = strings.ToLower(strings.TrimSpace(s))
			if s != "http" && s != "https" {
				errs = append(errs, fmt.Errorf("ALLOWED_SCHEMES: %q is not http or https", s))
			}
			c.AllowedSchemes = append(c.AllowedSchemes, s)
		}
	}
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			errs = append(errs, fmt.Errorf("LOG_LEVEL=%q: want debug, info, warn or error", v))
		}
	}
	if v := getenv("BREAKER"); v != "" {
		switch v {
		case "on":
			c.Breaker = true
		case "off":
			c.Breaker = false
		default:
			errs = append(errs, fmt.Errorf("BREAKER=%q: want on or off", v))
		}
	}
	if v := getenv("METRICS"); v != "" {
		switch v {
		case "emf":
			c.Metrics = true
		case "off":
			c.Metrics = false
		default:
			errs = append(errs, fmt.Errorf("METRICS=%q: want emf or off", v))
		}
	}
	if p, err := portal.ParseSettings(getenv); err != nil {
		errs = append(errs, err)
	} else {
		c.Portal = p
	}
	return c, errors.Join(errs...)
}

// Policy is the endpoint URL policy these settings give.
func (c Config) Policy() netguard.Policy {
	return netguard.Policy{AllowPrivate: c.AllowPrivateEndpoints, Schemes: c.AllowedSchemes}
}

// Validate checks that the resources are named.
func (c Config) Validate() error {
	var missing []string
	for name, v := range map[string]string{"TABLE_NAME": c.TableName, "QUEUE_URL": c.QueueURL, "DLQ_URL": c.DLQURL} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing settings: %s", strings.Join(missing, ", "))
	}
	return nil
}

var accountIDRE = regexp.MustCompile(`^[0-9]{12}$`)

// regionList is DESTINATION_REGIONS' regions, or the function's own.
func regionList(list, own string) []string {
	var out []string
	for _, r := range strings.Split(list, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	if len(out) == 0 && strings.TrimSpace(own) != "" {
		out = []string{strings.TrimSpace(own)}
	}
	return out
}
