package config

import (
	"fmt"

	"github.com/gifq/webhooks/shared/ratelimit"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	env := map[string]string{
		"TABLE_NAME": "t", "QUEUE_URL": "q", "DLQ_URL": "d", "RETRY_SCHEDULE": "1s,2s",
		"RATE_LIMIT_PER_SECOND": "20", "ENDPOINT_MAX_IN_FLIGHT": "0", "ALLOW_PRIVATE_ENDPOINTS": "true",
		"ALLOWED_SCHEMES": "http, https", "SWEEP_GRACE": "2s", "LOG_LEVEL": "debug", "METRICS": "off",
	}
	c, err := Parse(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Retry.MaxAttempts() != 3 || c.RatePerSecond != 20 || c.EndpointMaxInFlight != 0 || !c.AllowPrivateEndpoints ||
		len(c.AllowedSchemes) != 2 || c.SweepGrace != 2*time.Second || c.Metrics || c.Validate() != nil {
		t.Fatalf("%+v", c)
	}
	d, err := Parse(func(string) string { return "" })
	if err != nil || d.Retry.MaxAttempts() != 8 || d.RatePerSecond != 5 || d.AllowPrivateEndpoints || d.AllowedSchemes[0] != "https" {
		t.Fatalf("defaults %+v %v", d, err)
	}
	if err := d.Validate(); err == nil || !strings.Contains(err.Error(), "TABLE_NAME") {
		t.Fatalf("missing resources: %v", err)
	}
	bad := map[string]string{"RETRY_SCHEDULE": "x", "RATE_LIMIT_PER_SECOND": "-1", "ALLOWED_SCHEMES": "ftp", "LOG_LEVEL": "loud", "SWEEP_GRACE": "soon"}
	_, err = Parse(func(k string) string { return bad[k] })
	for k := range bad {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("error does not name %s: %v", k, err)
		}
	}
}

func TestParseIngestLimit(t *testing.T) {
	d, _ := Parse(func(string) string { return "" })
	if d.IngestRatePerSecond != 100 || d.IngestBurst != 1000 {
		t.Fatalf("default ingest limit %v/s burst %d", d.IngestRatePerSecond, d.IngestBurst)
	}
	c, err := Parse(func(k string) string {
		return map[string]string{"INGEST_RATE_PER_SECOND": "0.5", "INGEST_BURST": "3"}[k]
	})
	if err != nil || c.IngestRatePerSecond != 0.5 || c.IngestBurst != 3 {
		t.Fatalf("%v/s burst %d (%v)", c.IngestRatePerSecond, c.IngestBurst, err)
	}
	for _, bad := range []map[string]string{
		{"INGEST_RATE_PER_SECOND": "0"}, {"INGEST_RATE_PER_SECOND": "-2"}, {"INGEST_RATE_PER_SECOND": "+Inf"},
		{"INGEST_RATE_PER_SECOND": "fast"}, {"INGEST_BURST": "0"}, {"INGEST_BURST": "1.5"},
	} {
		if _, err := Parse(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}

// The waiting and breaker settings: defaults, values, and waits SQS cannot
// delay refused.
func TestWaitingAndBreakerSettings(t *testing.T) {
	d, err := Parse(func(string) string { return "" })
	if err != nil || d.ParkAfter != 15*time.Minute || d.ScheduleAhead != 2*time.Minute || !d.Breaker {
		t.Fatalf("defaults: park after %v, ahead %v, breaker %v (%v)", d.ParkAfter, d.ScheduleAhead, d.Breaker, err)
	}
	env := map[string]string{"PARK_AFTER": "2s", "SCHEDULE_AHEAD": "1s", "BREAKER": "off"}
	c, err := Parse(func(k string) string { return env[k] })
	if err != nil || c.ParkAfter != 2*time.Second || c.ScheduleAhead != time.Second || c.Breaker {
		t.Fatalf("%+v %v", c, err)
	}
	for k, v := range map[string]string{"PARK_AFTER": "16m", "SCHEDULE_AHEAD": "1h", "BREAKER": "maybe"} {
		if _, err := Parse(func(n string) string { return map[string]string{k: v}[n] }); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s accepted (%v)", k, v, err)
		}
	}
}

// The default per-key ingest limit takes two bursts of
// 500 events at once (the contract spreads a burst, it does not drop it),
// and still answers a flood with 429: a key posting at 1,000 events a
// second is refused most of them within two seconds.
func TestTheDefaultKeyLimitTakesABurstAndStopsAFlood(t *testing.T) {
	l := ratelimit.Limit{Rate: Defaults().IngestRatePerSecond, Burst: Defaults().IngestBurst}
	var tat, now int64 = 0, 1_000_000_000 // µs
	for i := 0; i < 1000; i++ {
		d := ratelimit.Decide(tat, now, 1, l)
		if !d.Allowed {
			t.Fatalf("event %d of a burst of 1000 at once refused", i+1)
		}
		tat = d.TAT
	}
	accepted := 0
	for ms := int64(1); ms <= 2000; ms++ { // then one event every millisecond for two seconds
		if d := ratelimit.Decide(tat, now+ms*1000, 1, l); d.Allowed {
			tat = d.TAT
			accepted++
		}
	}
	if accepted > 201 {
		t.Fatalf("a flood of 2000 events in 2 s after the burst: %d accepted, want at most the refill (200)", accepted)
	}
}

// A previous secret signs for at most 24 h (two live secrets at most).
func TestRotationGraceAtMostADay(t *testing.T) {
	if c, err := Parse(func(k string) string { return map[string]string{"SECRET_ROTATION_GRACE": "1h"}[k] }); err != nil || c.SecretRotationGrace != time.Hour {
		t.Fatalf("1h: %v %v", c.SecretRotationGrace, err)
	}
	if _, err := Parse(func(k string) string { return map[string]string{"SECRET_ROTATION_GRACE": "25h"}[k] }); err == nil || !strings.Contains(err.Error(), "SECRET_ROTATION_GRACE") {
		t.Errorf("25h accepted (%v)", err)
	}
}

func TestParsePortalLimit(t *testing.T) {
	d, _ := Parse(func(string) string { return "" })
	if d.PortalRatePerSecond != 10 || d.PortalBurst != 50 {
		t.Fatalf("default portal limit %v/s burst %d", d.PortalRatePerSecond, d.PortalBurst)
	}
	c, err := Parse(func(k string) string {
		return map[string]string{"PORTAL_RATE_PER_SECOND": "0.5", "PORTAL_BURST": "3"}[k]
	})
	if err != nil || c.PortalRatePerSecond != 0.5 || c.PortalBurst != 3 {
		t.Fatalf("%v/s burst %d (%v)", c.PortalRatePerSecond, c.PortalBurst, err)
	}
	for _, bad := range []map[string]string{
		{"PORTAL_RATE_PER_SECOND": "0"}, {"PORTAL_RATE_PER_SECOND": "+Inf"}, {"PORTAL_BURST": "0"}, {"PORTAL_BURST": "x"},
	} {
		if _, err := Parse(func(k string) string { return bad[k] }); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}

// AWS destinations go to the function's own region unless
// DESTINATION_REGIONS names others; with neither, none.
func TestDestinationRegions(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"AWS_REGION": "eu-west-1"}, "[eu-west-1]"},
		{map[string]string{"AWS_REGION": "eu-west-1", "DESTINATION_REGIONS": " us-east-1, eu-central-1 ,"}, "[us-east-1 eu-central-1]"},
		{map[string]string{}, "[]"},
	} {
		c, err := Parse(func(k string) string { return tt.env[k] })
		if got := fmt.Sprint(c.DestinationRegions); err != nil || got != tt.want {
			t.Errorf("%v: %s, want %s (%v)", tt.env, got, tt.want, err)
		}
	}
}

// The deployment's own account (the stack's DEPLOYMENT_ACCOUNT_ID): 12
// digits, or unset (no account refused).
func TestDeploymentAccount(t *testing.T) {
	for v, want := range map[string]string{"": "", " 123456789012 ": "123456789012"} {
		c, err := Parse(func(k string) string { return map[string]string{"DEPLOYMENT_ACCOUNT_ID": v}[k] })
		if err != nil || c.DeploymentAccount != want {
			t.Errorf("%q: %q, %v", v, c.DeploymentAccount, err)
		}
	}
	for _, bad := range []string{"12345", "arn:aws:iam::123456789012:root", "${AWS::AccountId}"} {
		if _, err := Parse(func(k string) string { return map[string]string{"DEPLOYMENT_ACCOUNT_ID": bad}[k] }); err == nil || !strings.Contains(err.Error(), "DEPLOYMENT_ACCOUNT_ID") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
