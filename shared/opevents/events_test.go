package opevents

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
)

var at = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func detailJSON(t *testing.T, e Event) map[string]any {
	t.Helper()
	b, err := json.Marshal(e.Detail)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFacts(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://r.example/h", Disabled: true,
		DisabledReason: "the receiver answered 410 Gone", BreakerFails: 5, BreakerOpenUntil: at.Add(time.Minute).UnixMilli(),
		Secrets: []domain.Secret{{Value: "whsec_new", CreatedAt: at.UnixMilli()}, {Value: "whsec_old", CreatedAt: 1, ExpiresAt: at.Add(time.Hour).UnixMilli()}}}
	d := domain.Delivery{ID: "dlv_1", EventID: "evt_1", EndpointID: "ep_1", AccountID: "acct_1", EventType: "order.paid",
		FailReason: domain.ReasonExhausted, Attempts: 8, FailedAt: at.UnixMilli()}
	cases := []struct {
		e    Event
		typ  Type
		want map[string]any
	}{
		{Disabled(ep, ByReceiver, at), EndpointDisabled, map[string]any{"account_id": "acct_1", "endpoint_id": "ep_1",
			"url": "https://r.example/h", "reason": "the receiver answered 410 Gone", "by": "receiver", "disabled_at": "2026-12-02T10:00:00Z"}},
		{DeadLettered(d, at.Add(time.Second)), DeliveryDeadLettered, map[string]any{"account_id": "acct_1", "endpoint_id": "ep_1",
			"delivery_id": "dlv_1", "event_id": "evt_1", "event_type": "order.paid", "reason": "attempts_exhausted",
			"attempts": 8.0, "failed_at": "2026-12-02T10:00:00Z"}},
		{BreakerOpen(ep, lifecycle.BreakerChange{On: lifecycle.BreakerTripped, OpenUntil: at.Add(30 * time.Second).UnixMilli()}, at),
			BreakerOpened, map[string]any{"account_id": "acct_1", "endpoint_id": "ep_1",
				"consecutive_failures": 6.0, "open_until": "2026-12-02T10:00:30Z"}},
		{BreakerClose(ep, at), BreakerClosed, map[string]any{"account_id": "acct_1", "endpoint_id": "ep_1", "closed_at": "2026-12-02T10:00:00Z"}},
		{Rotated(ep, at), SecretRotated, map[string]any{"account_id": "acct_1", "endpoint_id": "ep_1",
			"rotated_at": "2026-12-02T10:00:00Z", "previous_secret_expires_at": "2026-12-02T11:00:00Z"}},
	}
	for _, c := range cases {
		if c.e.Type != c.typ || !c.e.At.Equal(c.e.At) {
			t.Errorf("%s: type %s", c.typ, c.e.Type)
		}
		if got := detailJSON(t, c.e); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s detail:\n got %v\nwant %v", c.typ, got, c.want)
		}
	}
	// A secret never leaves in an event.
	if b, _ := json.Marshal(Rotated(ep, at).Detail); bytes.Contains(b, []byte("whsec_")) {
		t.Errorf("secret_rotated carries a secret: %s", b)
	}
	// A rotation with no previous secret left says nothing of one.
	one := ep
	one.Secrets = ep.Secrets[:1]
	if _, has := detailJSON(t, Rotated(one, at))["previous_secret_expires_at"]; has {
		t.Error("previous_secret_expires_at without a previous secret")
	}
}

// TestLogLines: make dev's publisher writes one JSON line per event in the
// shape a rule's target receives (source, detail-type, detail).
func TestLogLines(t *testing.T) {
	var buf bytes.Buffer
	l := Log{Log: slog.New(slog.NewJSONHandler(&buf, nil))}
	d := domain.Delivery{ID: "dlv_1", AccountID: "acct_1", FailReason: domain.ReasonRejected}
	l.Publish(context.Background(), DeadLettered(d, at), BreakerClose(domain.Endpoint{ID: "ep_1"}, at))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	var first struct {
		Source     string         `json:"source"`
		DetailType string         `json:"detail-type"`
		Detail     map[string]any `json:"detail"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Source != Source || first.DetailType != "delivery.dead_lettered" || first.Detail["delivery_id"] != "dlv_1" || first.Detail["reason"] != "rejected" {
		t.Errorf("line: %s", lines[0])
	}
}

// TestDocumented: docs/operational-events.md has a section per detail-type
// that names every field of its detail.
func TestDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/operational-events.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	details := map[Type]any{EndpointDisabled: EndpointDisabledDetail{}, DeliveryDeadLettered: DeliveryDeadLetteredDetail{},
		BreakerOpened: BreakerOpenedDetail{}, BreakerClosed: BreakerClosedDetail{}, SecretRotated: SecretRotatedDetail{},
		EndpointFailing: EndpointFailingDetail{}, EndpointDisabling: EndpointDisablingDetail{}, EndpointRecovered: EndpointRecoveredDetail{},
		EndpointCreated: EndpointChangedDetail{}, EndpointUpdated: EndpointChangedDetail{}, EndpointDeleted: EndpointChangedDetail{},
		EndpointAuthFailed: EndpointAuthFailedDetail{}}
	if len(details) != len(Types) {
		t.Fatalf("%d details for %d types", len(details), len(Types))
	}
	for _, typ := range Types {
		head := "## `" + string(typ) + "`"
		i := strings.Index(doc, head)
		if i < 0 {
			t.Errorf("no section %q", head)
			continue
		}
		section := doc[i+len(head):]
		if j := strings.Index(section, "\n## "); j >= 0 {
			section = section[:j]
		}
		rt := reflect.TypeOf(details[typ])
		for k := 0; k < rt.NumField(); k++ {
			name := strings.Split(rt.Field(k).Tag.Get("json"), ",")[0]
			if !strings.Contains(section, `"`+name+`"`) {
				t.Errorf("%s: the schema does not name %q", typ, name)
			}
		}
	}
}

// The worker's outcomes as facts: a trip opens, a probe's answer closes, a
// 410 or the failing-too-long rule disables (once: not an endpoint already
// disabled); other outcomes state nothing.
func TestAfterAttempt(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://r.example/h", BreakerFails: 4, FailingSince: at.Add(-time.Hour).UnixMilli()}
	fresh := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://r.example/h"}
	types := func(es []Event) []Type {
		var out []Type
		for _, e := range es {
			out = append(out, e.Type)
		}
		return out
	}
	trip := lifecycle.BreakerChange{On: lifecycle.BreakerTripped, OpenUntil: at.Add(30 * time.Second).UnixMilli()}
	cases := []struct {
		name string
		ep   domain.Endpoint
		o    lifecycle.Outcome
		want []Type
	}{
		{"a retry", ep, lifecycle.Outcome{Status: domain.StatusPending, Breaker: lifecycle.BreakerChange{On: lifecycle.BreakerFailed, Count: true}}, nil},
		{"tripped", ep, lifecycle.Outcome{Status: domain.StatusPending, Breaker: trip}, []Type{BreakerOpened}},
		{"probe failed: still open", ep, lifecycle.Outcome{Breaker: lifecycle.BreakerChange{On: lifecycle.BreakerProbeBad, OpenUntil: 1}}, nil},
		{"probe answered", ep, lifecycle.Outcome{Status: domain.StatusDelivered, Breaker: lifecycle.BreakerChange{On: lifecycle.BreakerProbeOK, Close: true}}, []Type{BreakerClosed}},
		{"an answer resets the count only", ep, lifecycle.Outcome{Breaker: lifecycle.BreakerChange{On: lifecycle.BreakerAnswered, Close: true}}, nil},
		{"410", ep, lifecycle.Outcome{Status: domain.StatusFailed, DisableEndpoint: lifecycle.GoneReason}, []Type{EndpointDisabled}},
		{"410, already disabled", domain.Endpoint{ID: "ep_1", Disabled: true}, lifecycle.Outcome{DisableEndpoint: lifecycle.GoneReason}, nil},
		{"first failure", fresh, lifecycle.Outcome{Status: domain.StatusPending}, []Type{EndpointFailing}},
		{"first failure rejected", fresh, lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected}, []Type{EndpointFailing}},
		{"a blip", fresh, lifecycle.Outcome{Status: domain.StatusPending, Blip: true}, nil},
		{"410 on a healthy endpoint: disabled only", fresh, lifecycle.Outcome{Status: domain.StatusFailed, DisableEndpoint: lifecycle.GoneReason}, []Type{EndpointDisabled}},
		{"another failure", ep, lifecycle.Outcome{Status: domain.StatusPending}, nil},
		{"recovered", ep, lifecycle.Outcome{Status: domain.StatusDelivered, Healthy: true}, []Type{EndpointRecovered}},
		{"a success on a healthy endpoint", fresh, lifecycle.Outcome{Status: domain.StatusDelivered, Healthy: true}, nil},
		{"a disabled endpoint's failure", domain.Endpoint{ID: "ep_1", Disabled: true}, lifecycle.Outcome{Status: domain.StatusFailed}, nil},
	}
	for _, c := range cases {
		if got := types(AfterAttempt(c.ep, domain.Attempt{}, c.o, at)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	gone := AfterAttempt(ep, domain.Attempt{}, lifecycle.Outcome{DisableEndpoint: lifecycle.GoneReason}, at)[0].Detail.(EndpointDisabledDetail)
	if gone.By != ByReceiver || gone.Reason != lifecycle.GoneReason {
		t.Errorf("410: %+v", gone)
	}
	long := AfterAttempt(ep, domain.Attempt{}, lifecycle.Outcome{DisableEndpoint: "failing without a success since 2026-11-27T10:00:00Z"}, at)[0].Detail.(EndpointDisabledDetail)
	if long.By != ByFailures || !strings.HasPrefix(long.Reason, "failing without") {
		t.Errorf("failing too long: %+v", long)
	}
	failing := AfterAttempt(fresh, domain.Attempt{StatusCode: 503}, lifecycle.Outcome{Status: domain.StatusPending}, at)[0].Detail.(EndpointFailingDetail)
	if failing.FailingSince != "2026-12-02T10:00:00Z" || failing.LastStatus != 503 || failing.URL != fresh.URL {
		t.Errorf("failing: %+v", failing)
	}
	rec := AfterAttempt(ep, domain.Attempt{StatusCode: 200}, lifecycle.Outcome{Status: domain.StatusDelivered, Healthy: true}, at)[0].Detail.(EndpointRecoveredDetail)
	if rec.FailingSince != "2026-12-02T09:00:00Z" || rec.RecoveredAt != "2026-12-02T10:00:00Z" {
		t.Errorf("recovered: %+v", rec)
	}
	refused := AfterAttempt(ep, domain.Attempt{DeliveryID: "dlv_1", ErrorClass: "oauth_invalid_client"}, lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected}, at)
	if len(refused) != 1 || refused[0].Type != EndpointAuthFailed || refused[0].Detail.(EndpointAuthFailedDetail) != (EndpointAuthFailedDetail{
		AccountID: "acct_1", EndpointID: "ep_1", DeliveryID: "dlv_1", Error: "oauth_invalid_client", FailedAt: "2026-12-02T10:00:00Z"}) {
		t.Errorf("invalid_client: %+v", refused)
	}
	authFailing := ep
	authFailing.AuthFailingSince = 1
	if got := AfterAttempt(authFailing, domain.Attempt{ErrorClass: "oauth_invalid_client"}, lifecycle.Outcome{Status: domain.StatusFailed, FailReason: domain.ReasonRejected}, at); len(got) != 0 {
		t.Errorf("invalid_client on an endpoint whose auth was failing already: %+v", got)
	}
	if got := AfterAttempt(ep, domain.Attempt{ErrorClass: "oauth_token_unavailable"}, lifecycle.Outcome{Status: domain.StatusPending}, at); len(got) != 0 {
		t.Errorf("a token endpoint's 5xx: %+v", got)
	}
	opened := AfterAttempt(ep, domain.Attempt{}, lifecycle.Outcome{Breaker: trip}, at)[0].Detail.(BreakerOpenedDetail)
	if opened.ConsecutiveFailures != 5 || opened.OpenUntil != "2026-12-02T10:00:30Z" {
		t.Errorf("opened: %+v", opened)
	}
}

func TestEndpointDisabledShowsTheURLWithoutItsQuery(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://user:pw@r.example/hooks/in?token=sk_live_secret#frag"}
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, e := range []Event{Disabled(ep, ByAPI, at), AfterAttempt(ep, domain.Attempt{}, lifecycle.Outcome{DisableEndpoint: lifecycle.GoneReason}, at)[0]} {
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Detail.(EndpointDisabledDetail).URL; got != "https://r.example/hooks/in" {
			t.Errorf("url %q, want scheme, host and path only", got)
		}
		for _, secret := range []string{"sk_live_secret", "token", "pw", "frag"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("the event carries %q: %s", secret, raw)
			}
		}
	}
}

type warner struct {
	won   bool
	err   error
	calls int
}

func (w *warner) WarnDisabling(context.Context, domain.Endpoint, time.Time) (bool, error) {
	w.calls++
	return w.won, w.err
}

// A recorded attempt near its endpoint's disable warns once per failing
// period: endpoint.disabling is published by the attempt that wins the
// mark, not by one that lost it or could not write it; an attempt whose
// outcome does not warn does not try.
func TestRecordedWarnsOnlyWhenItWinsTheMark(t *testing.T) {
	ep := domain.Endpoint{ID: "ep_1", AccountID: "acct_1", URL: "https://r.example/h", FailingSince: at.Add(-100 * time.Hour).UnixMilli()}
	a := domain.Attempt{ID: "att_1", DeliveryID: "dlv_1", ErrorClass: "timeout"}
	warn := lifecycle.Outcome{Status: domain.StatusPending, WarnDisabling: true}
	for _, c := range []struct {
		name  string
		o     lifecycle.Outcome
		w     warner
		calls int
		want  bool
	}{
		{"won the mark", warn, warner{won: true}, 1, true},
		{"another attempt won it", warn, warner{}, 1, false},
		{"the mark not written", warn, warner{err: context.DeadlineExceeded}, 1, false},
		{"not near its disable", lifecycle.Outcome{Status: domain.StatusPending}, warner{won: true}, 0, false},
	} {
		rec := &Recorder{}
		var logged bytes.Buffer
		r := Recorded{Publisher: rec, Warner: &c.w, Log: slog.New(slog.NewJSONHandler(&logged, nil)), DisableAfter: 120 * time.Hour}
		r.Publish(context.Background(), ep, a, c.o, at)
		got := false
		for _, e := range rec.Events() {
			got = got || e.Type == EndpointDisabling
		}
		if got != c.want || c.w.calls != c.calls {
			t.Errorf("%s: disabling published %v after %d marks, want %v after %d", c.name, got, c.w.calls, c.want, c.calls)
		}
		if (c.w.err != nil) != strings.Contains(logged.String(), "could not mark") {
			t.Errorf("%s: log %q", c.name, logged.String())
		}
	}
}
