package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"
)

// A test event of a chosen type carries the catalog's example of it, so a
// receiver tests the body it will really get; a type with no example (or
// none in the catalog) sends the webhook.test body; a bad name is refused.
func TestTypedTestEventCarriesTheCatalogExample(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	f.eventType(t, f.keyA, `{"name":"payout.fulfilled","example":{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_1"}}}`)
	f.eventType(t, f.keyA, `{"name":"payout.failed"}`)
	body := func(a map[string]any) map[string]any {
		t.Helper()
		ds := a["deliveries"].([]any)
		id := a["id"].(string)
		ev, err := f.app.Store.GetEvent(context.Background(), f.acctA, id)
		if err != nil || len(ds) != 1 {
			t.Fatalf("event %s: %v %v", id, err, ds)
		}
		var m map[string]any
		if err := json.Unmarshal(ev.Body, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/test-event", `{"event_type":"payout.fulfilled"}`)
	if a.status != 202 || a.body["event"] != "payout.fulfilled" {
		t.Fatalf("typed test event: %d %s", a.status, a.raw)
	}
	if b := body(a.body); b["payout_type"] != "crypto" || b["data"].(map[string]any)["id"] != "po_1" {
		t.Errorf("body %v, want the catalog example", b)
	}
	for _, in := range []string{`{"event_type":"payout.failed"}`, `{"event_type":"never.heard.of"}`, `{}`, ``} {
		a := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/test-event", in)
		if a.status != 202 || a.body["event"] != "webhook.test" || body(a.body)["endpoint_id"] != ep {
			t.Errorf("%s: %d %s", in, a.status, a.raw)
		}
	}
	if a := f.do(t, f.keyA, "POST", "/v1/endpoints/"+ep+"/test-event", `{"event_type":" bad"}`); a.status != 422 {
		t.Errorf("a bad type: %d %s", a.status, a.raw)
	}
}
