package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/notify"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Notices go through the account's own pipeline, to the endpoints that
// name the system events only (not an empty filter, not "*"), never to the
// endpoint they are about, once per kind, endpoint and day; an account with
// no notification endpoint has nothing written.
func TestNoticesReachOnlyTheNotificationEndpoint(t *testing.T) {
	env := testenv.New(t)
	vars := map[string]string{"TABLE_NAME": env.Table, "QUEUE_URL": env.Queues.Delivery, "DLQ_URL": env.Queues.DLQ, "METRICS": "off", "LOG_LEVEL": "warn"}
	cfg, err := config.Parse(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(cfg, env.DB, env.SQS, io.Discard, "test")
	ctx := context.Background()
	acct, err := a.Store.CreateAccount(ctx, "a", 0)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(url string, types ...string) domain.Endpoint {
		ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: acct.ID, URL: url, EventTypes: types,
			Secrets: []domain.Secret{{Value: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", CreatedAt: 1}}}
		if err := a.Store.CreateEndpoint(ctx, ep); err != nil {
			t.Fatal(err)
		}
		return ep
	}
	down := mk("https://down.example/h")
	every := mk("https://all.example/h", "*")
	note := mk("https://notes.example/h", "endpoint.*")
	deliveries := func(ep domain.Endpoint) []domain.Delivery {
		t.Helper()
		p, err := a.Store.ListEndpointDeliveries(ctx, ep.ID, "", 100, "")
		if err != nil {
			t.Fatal(err)
		}
		return p.Deliveries
	}
	rec := &opevents.Recorder{}
	a.OpEvents = rec
	n := a.Notifier()
	now := time.Now()
	n.Publish(ctx, opevents.Failing(down, domain.Attempt{StatusCode: 500}, now))
	n.Publish(ctx, opevents.Failing(down, domain.Attempt{StatusCode: 502}, now.Add(time.Second))) // another attempt saw the same change
	n.Publish(ctx, opevents.Failing(note, domain.Attempt{StatusCode: 500}, now))                  // about the notification endpoint itself
	n.Publish(ctx, opevents.Disabled(down, opevents.ByAPI, now))                                  // its owner did it
	if len(rec.Events()) != 4 {
		t.Errorf("the operators' publisher got %d events, want 4", len(rec.Events()))
	}
	got := deliveries(note)
	if len(got) != 1 || got[0].EventType != domain.SystemEndpointFailing {
		t.Fatalf("notification endpoint's deliveries: %+v", got)
	}
	if d := append(deliveries(down), deliveries(every)...); len(d) != 0 {
		t.Fatalf("other endpoints got %+v", d)
	}
	ev, err := a.Store.GetEvent(ctx, got[0].AccountID, got[0].EventID)
	if err != nil {
		t.Fatal(err)
	}
	var body notify.Body
	if err := json.Unmarshal(ev.Body, &body); err != nil || body.Event != "endpoint.failing" || body.Endpoint.ID != down.ID ||
		body.LastStatus != 500 || body.Recover == nil || body.Recover.Path != "/v1/endpoints/"+down.ID+"/recover" {
		t.Errorf("notice body %s (%v)", ev.Body, err)
	}
	failing := down
	failing.FailingSince = domain.Millis(now)
	n.Publish(ctx, opevents.Recovered(failing, now.Add(time.Minute)))
	if got := deliveries(note); len(got) != 2 || got[0].EventType != domain.SystemEndpointRecovered {
		t.Fatalf("after recovery: %+v", got)
	}

	// Another account without a notification endpoint: nothing is written.
	other, err := a.Store.CreateAccount(ctx, "b", 0)
	if err != nil {
		t.Fatal(err)
	}
	lone := domain.Endpoint{ID: domain.NewID("ep"), AccountID: other.ID, URL: "https://lone.example/h",
		Secrets: []domain.Secret{{Value: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", CreatedAt: 1}}}
	if err := a.Store.CreateEndpoint(ctx, lone); err != nil {
		t.Fatal(err)
	}
	calls := testenv.NewCalls()
	db, q := env.CountedClients(calls)
	b := app.New(cfg, db, q, io.Discard, "test")
	b.Notifier().Publish(ctx, opevents.Failing(lone, domain.Attempt{StatusCode: 500}, now))
	if w := calls.WriteUnits(); w != 0 {
		t.Errorf("no notification endpoint: %v write units (%s)", w, calls)
	}
	if _, err := a.Store.PriorEvent(ctx, other.ID, "notify:endpoint.failing:"+lone.ID+":"+now.UTC().Format(time.DateOnly), nil); err != store.ErrNotFound {
		t.Errorf("a notice was stored: %v", err)
	}
}
