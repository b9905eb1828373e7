package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/notify"
)

// An endpoint that starts failing makes the account's notification endpoint
// (one that names endpoint.* in its filter) receive a signed
// endpoint.failing, then endpoint.recovered once it answers again; each
// once, and the failing endpoint's own event is delivered in the end.
func TestNotificationEndpointHearsOfFailingAndRecovery(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	notes, _ := h.registerReceiver(t, key, always(200), "endpoint.*")
	// 500 twice (the first a blip, the second sets failing_since), then 200.
	flaky, ep := h.registerReceiver(t, key, func(n int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if n <= 2 {
			return 500, "down"
		}
		return 200, ""
	})
	ev := h.publish(t, key, payout)
	if len(ev.Deliveries) != 1 || ev.Deliveries[0].EndpointID != ep.ID {
		t.Fatalf("the notification endpoint takes no ordinary event: %+v", ev.Deliveries)
	}
	h.waitFor(t, key, ev.Deliveries[0].ID, time.Minute, func(d deliveryOut) bool { return d.Status == "delivered" })
	var got []notify.Body
	deadline := time.Now().Add(time.Minute)
	for len(got) < 2 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		got = got[:0]
		for _, r := range notes.requests() {
			if r.verified != nil {
				t.Fatalf("a notice that does not verify with the notification endpoint's secret: %v", r.verified)
			}
			var b notify.Body
			if err := json.Unmarshal(r.body, &b); err != nil {
				t.Fatalf("notice %s: %v", r.body, err)
			}
			if r.header.Get("X-Gifq-Event") != b.Event {
				t.Errorf("X-Gifq-Event %q for a body of %q", r.header.Get("X-Gifq-Event"), b.Event)
			}
			got = append(got, b)
		}
	}
	if len(got) != 2 || got[0].Event != "endpoint.failing" || got[1].Event != "endpoint.recovered" {
		t.Fatalf("notices: %+v (the flaky endpoint saw %d requests)", got, len(flaky.requests()))
	}
	failing, recovered := got[0], got[1]
	if failing.Endpoint.ID != ep.ID || failing.LastStatus != 500 || failing.FailingSince == "" || failing.Recover == nil ||
		failing.Recover.Path != "/v1/endpoints/"+ep.ID+"/recover" {
		t.Errorf("endpoint.failing: %+v", failing)
	}
	// The notice states the failure when the worker recorded it; the
	// endpoint's failing_since is the store's clock at the same write.
	began, err1 := time.Parse(time.RFC3339, failing.FailingSince)
	since, err2 := time.Parse(time.RFC3339, recovered.FailingSince)
	if err1 != nil || err2 != nil || since.Sub(began).Abs() > 5*time.Second {
		t.Errorf("failing since %s, recovered says %s", failing.FailingSince, recovered.FailingSince)
	}
	if recovered.Endpoint.ID != ep.ID || recovered.RecoveredAt == "" ||
		recovered.Recover.Body["until"] != recovered.RecoveredAt {
		t.Errorf("endpoint.recovered: %+v", recovered)
	}
	// The notices are events of the account, in its log like any other.
	var nv struct {
		Event      string `json:"event"`
		Deliveries []struct {
			Status string `json:"status"`
		} `json:"deliveries"`
	}
	id := notes.requests()[0].header.Get("X-Gifq-Event-Id")
	if code := h.call(t, key, "GET", "/v1/events/"+id, nil, &nv); code != 200 || nv.Event != "endpoint.failing" ||
		len(nv.Deliveries) != 1 || nv.Deliveries[0].Status != "delivered" {
		t.Errorf("GET the notice's event %s: %d %+v", id, code, nv)
	}
	// A producer may not send a system event.
	if code := h.call(t, key, "POST", "/v1/events", `{"event":"endpoint.failing"}`, nil); code != 422 {
		t.Errorf("a producer's endpoint.failing: %d, want 422", code)
	}
}
