package notify

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/opevents"
)

var at = time.Date(2026, 12, 6, 23, 59, 0, 0, time.UTC)

// Each account-facing fact makes one notice, keyed by kind, endpoint and
// UTC day, that says what failed, since when and how to get the missed
// events back; an owner's own disable and the other facts make none.
func TestFor(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://r.example/h", FailingSince: at.Add(-2 * time.Hour).UnixMilli()}
	failing, ok := For(opevents.Failing(ep, domain.Attempt{StatusCode: 503}, at), 5*24*time.Hour, "https://portal.example/")
	if !ok || failing.Key != "notify:endpoint.failing:ep_1:2026-12-06" || failing.AccountID != "acct_1" || failing.EndpointID != "ep_1" {
		t.Fatalf("failing: %+v", failing)
	}
	b := failing.Body
	if b.Event != domain.SystemEndpointFailing || b.Endpoint.URL != ep.URL || b.FailingSince != "2026-12-06T23:59:00Z" || b.LastStatus != 503 ||
		b.DisablesAt != "2026-12-11T23:59:00Z" || b.PortalURL != "https://portal.example/#/endpoints/ep_1" || b.Message == "" {
		t.Errorf("failing body: %+v", b)
	}
	if b.Recover == nil || b.Recover.Path != "/v1/endpoints/ep_1/recover" || b.Recover.Body["since"] != "2026-12-06T23:59:00Z" {
		t.Errorf("failing recover: %+v", b.Recover)
	}
	// The next day is another key: one notice of a kind per endpoint per day.
	next, _ := For(opevents.Failing(ep, domain.Attempt{ErrorClass: "timeout"}, at.Add(2*time.Minute)), 0, "")
	if next.Key == failing.Key || next.Body.DisablesAt != "" || next.Body.PortalURL != "" || next.Body.LastError != "timeout" {
		t.Errorf("next day: %+v", next)
	}
	rec, ok := For(opevents.Recovered(ep, at), 0, "")
	if !ok || rec.Body.Event != domain.SystemEndpointRecovered || rec.Body.FailingSince != "2026-12-06T21:59:00Z" ||
		rec.Body.Recover.Body["since"] != "2026-12-06T21:59:00Z" || rec.Body.Recover.Body["until"] != "2026-12-06T23:59:00Z" {
		t.Errorf("recovered: %+v %+v", rec, rec.Body.Recover)
	}
	warn, ok := For(opevents.Disabling(ep, domain.Attempt{StatusCode: 500}, at.Add(time.Hour), at), 5*24*time.Hour, "https://portal.example/")
	if w := warn.Body; !ok || warn.Key != "notify:endpoint.disabling:ep_1:2026-12-06" || w.Event != domain.SystemEndpointDisabling ||
		w.FailingSince != "2026-12-06T21:59:00Z" || w.DisablesAt != "2026-12-07T00:59:00Z" || w.LastStatus != 500 || w.Message == "" ||
		w.Recover == nil || w.Recover.Body["since"] != "2026-12-06T21:59:00Z" || w.PortalURL != "https://portal.example/#/endpoints/ep_1" {
		t.Errorf("disabling: %+v", warn)
	}
	gone := ep
	gone.Disabled, gone.DisabledReason = true, "the receiver answered 410 Gone"
	dis, ok := For(opevents.Disabled(gone, opevents.ByReceiver, at), 0, "")
	if !ok || dis.Body.Event != domain.SystemEndpointDisabled || dis.Body.Reason != gone.DisabledReason || dis.Body.Enable == nil ||
		dis.Body.Enable.Method != "PATCH" || dis.Body.Enable.Body["disabled"] != false || dis.Body.Recover == nil {
		t.Errorf("disabled: %+v", dis)
	}
	for _, e := range []opevents.Event{opevents.Disabled(gone, opevents.ByAPI, at), opevents.BreakerClose(ep, at),
		opevents.Changed(opevents.EndpointCreated, ep, at), opevents.DeadLettered(domain.Delivery{}, at)} {
		if n, ok := For(e, 0, ""); ok {
			t.Errorf("%s made a notice %+v", e.Type, n)
		}
	}
}

type ingestNone struct{}

func (ingestNone) Notify(context.Context, string, string, []byte, string) (bool, error) {
	return false, nil
}

type mailbox struct{ got []Notice }

func (m *mailbox) Send(_ context.Context, n Notice) error {
	m.got = append(m.got, n)
	return errors.New("ses SendEmail: Throttling")
}

// With a mailer, every notice is also handed to it, whether or not the
// account has a notification endpoint (the mailer keeps its own once-a-day
// key), and an error of its own fails nothing; other facts are not mailed.
func TestNotifierMailsEachNotice(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://r.example/h", FailingSince: at.UnixMilli()}
	m := &mailbox{}
	n := &Notifier{Ingest: ingestNone{}, Mail: m, Log: slog.New(slog.DiscardHandler)}
	n.Publish(context.Background(), opevents.Failing(ep, domain.Attempt{StatusCode: 500}, at), opevents.BreakerClose(ep, at),
		opevents.Disabled(ep, opevents.ByAPI, at), opevents.Recovered(ep, at.Add(time.Hour)))
	if len(m.got) != 2 || m.got[0].Key != "notify:endpoint.failing:ep_1:2026-12-06" || m.got[1].Body.Event != domain.SystemEndpointRecovered {
		t.Fatalf("mailed %+v", m.got)
	}
}
