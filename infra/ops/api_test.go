package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/apiclient"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
)

// The API commands against the whole system on the emulators: a delivery
// to an endpoint that refuses connections, looked at and resent.
func TestAPICommands(t *testing.T) {
	env := testenv.New(t)
	vars := map[string]string{"TABLE_NAME": env.Table, "QUEUE_URL": env.Queues.Delivery, "DLQ_URL": env.Queues.DLQ,
		"ALLOW_PRIVATE_ENDPOINTS": "true", "ALLOWED_SCHEMES": "http,https", "METRICS": "off", "LOG_LEVEL": "error",
		"RETRY_SCHEDULE": "1h"}
	cfg, err := config.Parse(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := app.New(cfg, env.DB, env.SQS, io.Discard, "local")
	l, err := runner.Start(ctx, a, runner.Options{APIAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Stop)
	acct, err := a.Store.CreateAccount(ctx, "ops", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := a.Store.CreateAPIKey(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := apiclient.NewClientWithResponses(l.URL, apiclient.WithBearer(key))
	refused := "http://127.0.0.1:1/refused"
	ep, err := c.CreateEndpointWithResponse(ctx, apiclient.NewEndpoint{Url: &refused})
	if err != nil || ep.JSON201 == nil {
		t.Fatalf("endpoint: %v", err)
	}
	ev, err := c.CreateEventWithBodyWithResponse(ctx, nil, "application/json", strings.NewReader(`{"event":"payout.fulfilled"}`))
	if err != nil || ev.JSON202 == nil {
		t.Fatalf("event: %v", err)
	}
	dlv := ev.JSON202.Deliveries[0].Id
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		d, err := c.GetDeliveryWithResponse(ctx, dlv)
		if err == nil && d.JSON200 != nil && len(d.JSON200.Attempts) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt")
		}
	}

	t.Setenv("GIFQ_API_KEY", key)
	api := []string{"-api", l.URL}
	out, err := capture(t, append(api, "delivery", "show", "-id", dlv)...)
	if err != nil || !strings.Contains(out, dlv) || !strings.Contains(out, "pending") || !strings.Contains(out, "connection_refused") {
		t.Errorf("delivery show: %v\n%s", err, out)
	}
	out, err = capture(t, append(api, "event", "show", "-id", ev.JSON202.Id)...)
	if err != nil || !strings.Contains(out, "1 deliveries") || !strings.Contains(out, dlv) {
		t.Errorf("event show: %v\n%s", err, out)
	}
	out, err = capture(t, append(api, "delivery", "resend", "-id", dlv)...)
	if err != nil || !strings.Contains(out, "queued as attempt att_") {
		t.Errorf("delivery resend: %v\n%s", err, out)
	}
	out, err = capture(t, append(api, "endpoint", "recover", "-id", ep.JSON201.Id, "-since", "2026-01-01T00:00:00Z")...)
	if err != nil || !strings.Contains(out, "recovered 0 failed deliveries") {
		t.Errorf("endpoint recover: %v\n%s", err, out)
	}
	lateURL := "http://127.0.0.1:1/late"
	late, err := c.CreateEndpointWithResponse(ctx, apiclient.NewEndpoint{Url: &lateURL})
	if err != nil || late.JSON201 == nil {
		t.Fatalf("late endpoint: %v", err)
	}
	hourAgo := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	out, err = capture(t, append(api, "endpoint", "replay", "-id", late.JSON201.Id, "-since", hourAgo)...)
	if err != nil || !strings.Contains(out, "replayed 1 missed events") {
		t.Errorf("endpoint replay: %v\n%s", err, out)
	}
	if _, err := capture(t, append(api, "endpoint", "replay", "-id", late.JSON201.Id, "-since", "2020-01-01T00:00:00Z")...); err == nil || !strings.Contains(err.Error(), "422") {
		t.Errorf("a replay past the retention: %v", err)
	}
	if _, err := capture(t, append(api, "delivery", "show", "-id", "dlv_01M8RAWTPRM6WQAVY1EMAH5THY")...); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("an unknown delivery: %v", err)
	}
	if _, err := capture(t, append(api, "endpoint", "recover", "-id", ep.JSON201.Id, "-since", "yesterday")...); err == nil {
		t.Error("a -since that is not RFC 3339 must be an error")
	}
	t.Setenv("GIFQ_API_KEY", "")
	if _, err := capture(t, append(api, "delivery", "show", "-id", dlv)...); err == nil || !strings.Contains(err.Error(), "GIFQ_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}
