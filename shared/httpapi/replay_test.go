package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// deliveriesOf lists an endpoint's deliveries (event ids), all pages.
func (f *fixture) deliveriesOf(t *testing.T, key, ep string) map[string]string {
	t.Helper()
	out := map[string]string{}
	after := ""
	for {
		q := map[string]string{"limit": "100"}
		if after != "" {
			q["cursor"] = after
		}
		a := f.doRequest(t, events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/endpoints/" + ep + "/deliveries",
			QueryStringParameters: q, Headers: map[string]string{"Authorization": "Bearer " + key}})
		if a.status != 200 {
			t.Fatalf("deliveries: %d %s", a.status, a.raw)
		}
		for _, d := range a.body["data"].([]any) {
			m := d.(map[string]any)
			if prev, dup := out[m["event_id"].(string)]; dup {
				t.Errorf("event %s has two deliveries to %s: %s and %s", m["event_id"], ep, prev, m["id"])
			}
			out[m["event_id"].(string)] = m["id"].(string)
		}
		next, _ := a.body["next_cursor"].(string)
		if next == "" {
			return out
		}
		after = next
	}
}

func (f *fixture) replay(t *testing.T, key, ep, body string) answer {
	t.Helper()
	f.now = time.Now() // the events were received after the fixture's clock was set
	return f.do(t, key, "POST", "/v1/endpoints/"+ep+"/replay", body)
}

// An endpoint created after events gets, from replay, those its filter
// matches and only those; a second replay sends nothing twice, and the
// endpoint that had them at ingest gets none. Test events are not replayed.
func TestReplayDeliversMissedEventsOnce(t *testing.T) {
	f := newFixture(t, nil)
	old := f.endpoint(t, f.keyA) // payout.*
	paid := map[string]bool{}
	for i, typ := range []string{"payout.paid", "order.paid", "payout.failed", "order.refunded", "payout.paid"} {
		a := f.do(t, f.keyA, "POST", "/v1/events", fmt.Sprintf(`{"event":%q,"n":%d}`, typ, i))
		if a.status != 202 {
			t.Fatalf("event: %d %s", a.status, a.raw)
		}
		if strings.HasPrefix(typ, "payout.") {
			paid[a.body["id"].(string)] = true
		}
	}
	if a := f.do(t, f.keyA, "POST", "/v1/endpoints/"+old+"/test-event", ""); a.status != 202 {
		t.Fatalf("test event: %d %s", a.status, a.raw)
	}
	late := f.endpoint(t, f.keyA) // payout.*, created after the events
	all := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/all","event_types":["*"]}`).body["id"].(string)
	since := `{"since":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`

	f.calls.Reset()
	a := f.replay(t, f.keyA, late, since)
	if a.status != 202 || a.body["replayed"] != 3.0 || a.body["scanned"] != 5.0 || a.body["more"] != false || a.body["next_cursor"] != nil {
		t.Fatalf("replay: %d %s", a.status, a.raw)
	}
	if f.calls.Count("SQS.SendMessageBatch") == 0 {
		t.Errorf("the replayed deliveries were not queued: %v", f.calls.Snapshot())
	}
	got := f.deliveriesOf(t, f.keyA, late)
	if len(got) != 3 {
		t.Errorf("late endpoint has %d deliveries, want 3: %v", len(got), got)
	}
	for ev := range got {
		if !paid[ev] {
			t.Errorf("late endpoint got %s, not a payout event", ev)
		}
	}
	// The event shows its new delivery.
	for ev, dlv := range got {
		e := f.do(t, f.keyA, "GET", "/v1/events/"+ev, "")
		if !strings.Contains(e.raw, dlv) {
			t.Errorf("event %s does not list its replayed delivery %s: %s", ev, dlv, e.raw)
		}
		break
	}

	for _, ep := range []string{late, old} {
		again := f.replay(t, f.keyA, ep, since)
		if again.status != 202 || again.body["replayed"] != 0.0 {
			t.Errorf("replay to %s again: %d %s", ep, again.status, again.raw)
		}
	}
	if got2 := f.deliveriesOf(t, f.keyA, late); len(got2) != 3 {
		t.Errorf("after a second replay: %d deliveries", len(got2))
	}
	if a := f.replay(t, f.keyA, all, since); a.body["replayed"] != 5.0 {
		t.Errorf("replay to * (the test event is not replayed): %s", a.raw)
	}
	// Another account's key does not reach the endpoint.
	if a := f.replay(t, f.keyB, late, since); a.status != 404 {
		t.Errorf("another account: %d %s", a.status, a.raw)
	}
}

// A window larger than one call is covered by calls that go on from
// next_cursor: 150 missed events take two calls, nothing twice, and a third
// pass over the whole window makes nothing.
func TestReplayIsBoundedAndResumable(t *testing.T) {
	f := newFixture(t, nil)
	var items []string
	for i := 0; i < 75; i++ {
		items = append(items, fmt.Sprintf(`{"body":{"event":"payout.paid","n":%d}}`, i))
	}
	for range 2 {
		if a := f.do(t, f.keyA, "POST", "/v1/events/batch", `{"events":[`+strings.Join(items, ",")+`]}`); a.status != 200 || a.body["accepted"] != 75.0 {
			t.Fatalf("batch: %d %.300s", a.status, a.raw)
		}
	}
	ep := f.endpoint(t, f.keyA)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	first := f.replay(t, f.keyA, ep, `{"since":"`+since+`"}`)
	cursor, _ := first.body["next_cursor"].(string)
	if first.status != 202 || first.body["replayed"] != 100.0 || first.body["more"] != true || cursor == "" {
		t.Fatalf("first call: %d %s", first.status, first.raw)
	}
	second := f.replay(t, f.keyA, ep, `{"since":"`+since+`","cursor":"`+cursor+`"}`)
	if second.status != 202 || second.body["replayed"] != 50.0 || second.body["more"] != false {
		t.Fatalf("second call: %d %s", second.status, second.raw)
	}
	if got := f.deliveriesOf(t, f.keyA, ep); len(got) != 150 {
		t.Errorf("%d deliveries, want 150", len(got))
	}
	third := f.replay(t, f.keyA, ep, `{"since":"`+since+`"}`)
	if third.body["replayed"] != 0.0 || third.body["more"] != false {
		t.Errorf("whole window again: %s", third.raw)
	}
}

// Bad windows are refused with 422 (past the retention, since after until,
// a cursor that is not one), a disabled endpoint with 409; none writes.
func TestReplayRefusesBadWindows(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.paid"}`)
	now := time.Now().UTC()
	for _, c := range []struct{ body, code string }{
		{`{"since":"` + now.Add(-31*24*time.Hour).Format(time.RFC3339) + `"}`, "window_past_retention"},
		{`{"since":"0001-01-01T00:00:00Z"}`, "window_past_retention"},
		{`{"since":"` + now.Format(time.RFC3339) + `","until":"` + now.Add(-time.Hour).Format(time.RFC3339) + `"}`, "invalid_window"},
		{`{}`, "invalid_window"},
		{`{"since":"yesterday"}`, "invalid_window"},
		{`{"since":"` + now.Add(-time.Hour).Format(time.RFC3339) + `","until":"2026-13-01"}`, "invalid_window"},
		{`{"since":"` + now.Add(-time.Hour).Format(time.RFC3339) + `","cursor":"dlv_x"}`, "invalid_cursor"},
	} {
		f.calls.Reset()
		a := f.replay(t, f.keyA, ep, c.body)
		if a.status != 422 || a.code() != c.code {
			t.Errorf("%s: %d %s, want 422 %s", c.body, a.status, a.raw, c.code)
		}
		if strings.Contains(c.body, "yesterday") && !strings.Contains(a.raw, "since must be an RFC 3339 time") {
			t.Errorf("a malformed since is named: %s", a.raw)
		}
		if f.calls.WriteUnits() != 0 || f.calls.Count("SQS.SendMessageBatch") != 0 {
			t.Errorf("%s wrote: %v", c.body, f.calls.Snapshot())
		}
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, `{"disabled":true}`); a.status != 200 {
		t.Fatal(a.raw)
	}
	if a := f.replay(t, f.keyA, ep, `{"since":"`+now.Add(-time.Hour).Format(time.RFC3339)+`"}`); a.status != 409 || a.code() != "endpoint_disabled" {
		t.Errorf("disabled: %d %s", a.status, a.raw)
	}
}

// A malformed time in recover's window is valid JSON: a 422 naming the
// field, not a 400 invalid_json.
func TestRecoverNamesAMalformedTime(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	for body, field := range map[string]string{
		`{"since":"yesterday"}`:                                 "since",
		`{"since":"2026-11-30T00:00:00Z","until":"30/11/2026"}`: "until",
	} {
		a := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/recover", body)
		if a.status != 422 || a.code() != "invalid_window" || !strings.Contains(a.raw, field+" must be an RFC 3339 time") {
			t.Errorf("%s: %d %s", body, a.status, a.raw)
		}
	}
}
