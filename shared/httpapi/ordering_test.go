package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func (f *fixture) postKeyed(t *testing.T, key, orderingKey, body string) answer {
	t.Helper()
	return f.doRequest(t, events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/events", Body: body,
		Headers: map[string]string{"Authorization": "Bearer " + key, "Ordering-Key": orderingKey}})
}

// A keyed event gets the next number of its account's key; a bad key is a
// 422 and writes nothing.
func TestOrderingKeyNumbersEvents(t *testing.T) {
	f := newFixture(t, nil)
	f.endpoint(t, f.keyA)
	for i, want := range []int64{1, 2} {
		a := f.postKeyed(t, f.keyA, "order-7", `{"event":"a.b"}`)
		if a.status != 202 {
			t.Fatalf("post %d: %d %s", i, a.status, a.raw)
		}
		ev, err := f.app.Store.GetEvent(ctx, f.acctA, a.body["id"].(string))
		if err != nil || ev.OrderingKey != "order-7" || ev.Seq != want {
			t.Fatalf("event %d: key %q seq %d, %v", i, ev.OrderingKey, ev.Seq, err)
		}
		got := f.do(t, f.keyA, "GET", "/v1/events/"+ev.ID, "")
		if got.body["ordering_key"] != "order-7" || got.body["sequence"] != float64(want) {
			t.Fatalf("GET shows %s", got.raw)
		}
	}
	if a := f.postKeyed(t, f.keyA, "other", `{"event":"a.b"}`); a.status != 202 {
		t.Fatalf("other key: %d %s", a.status, a.raw)
	} else if ev, _ := f.app.Store.GetEvent(ctx, f.acctA, a.body["id"].(string)); ev.Seq != 1 {
		t.Fatalf("another key counts on its own: %d", ev.Seq)
	}
	before := f.do(t, f.keyA, "GET", "/v1/events", "").raw
	for _, bad := range []string{"", strings.Repeat("k", 129), "tab\there", "é"} {
		if a := f.postKeyed(t, f.keyA, bad, `{"event":"a.b"}`); a.status != 422 || a.code() != "invalid_ordering_key" {
			t.Fatalf("%q: %d %s", bad, a.status, a.raw)
		}
	}
	if after := f.do(t, f.keyA, "GET", "/v1/events", "").raw; after != before {
		t.Fatalf("a refused key wrote something:\n%s\n%s", before, after)
	}
	if a := f.postKeyed(t, f.keyA, strings.Repeat("k", 128), `{"event":"a.b"}`); a.status != 202 {
		t.Fatalf("128 bytes: %d %s", a.status, a.raw)
	}
}

// An endpoint opts in to ordered delivery in its settings, at registration
// or by PATCH, and out again; the other settings stay.
func TestOrderedSetting(t *testing.T) {
	f := newFixture(t, nil)
	created := f.do(t, f.keyA, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:9/hook","settings":{"ordered":true,"timeout_seconds":5}}`)
	if s := fmt.Sprint(created.body["settings"]); created.status != 201 || s != `map[headers:map[] ordered:true timeout_seconds:5]` {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	id := created.body["id"].(string)
	if ep, err := f.app.Store.GetEndpoint(ctx, f.acctA, id); err != nil || !ep.Settings.Ordered {
		t.Fatalf("stored %+v %v", ep.Settings, err)
	}
	a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"ordered":false}}`)
	if s := fmt.Sprint(a.body["settings"]); a.status != 200 || s != `map[headers:map[] timeout_seconds:5]` {
		t.Fatalf("PATCH: %d %s", a.status, a.raw)
	}
	if a := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+id, `{"settings":{"ordered":"yes"}}`); a.status/100 != 4 {
		t.Fatalf("a string: %d %s", a.status, a.raw)
	}
}

// A batch's entries take an ordering_key: one key's events are numbered in
// the batch's order, after the key's earlier events; a bad key is refused
// in its own result.
func TestBatchOrderingKey(t *testing.T) {
	f := newFixture(t, nil)
	f.endpoint(t, f.keyA)
	f.postKeyed(t, f.keyA, "k", `{"event":"a.b"}`) // number 1
	a := f.do(t, f.keyA, "POST", "/v1/events/batch", `{"events":[
		{"body":{"event":"a.b","i":0},"ordering_key":"k"},
		{"body":{"event":"a.b","i":1}},
		{"body":{"event":"a.b","i":2},"ordering_key":"k"},
		{"body":{"event":"a.b","i":3},"ordering_key":"`+strings.Repeat("k", 129)+`"}]}`)
	if a.status != 200 {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	results := a.body["results"].([]any)
	for i, want := range []int64{2, 0, 3} {
		id := results[i].(map[string]any)["event"].(map[string]any)["id"].(string)
		ev, err := f.app.Store.GetEvent(ctx, f.acctA, id)
		if err != nil || ev.Seq != want {
			t.Fatalf("entry %d: seq %d, want %d (%v)", i, ev.Seq, want, err)
		}
	}
	if r := results[3].(map[string]any); r["status"].(float64) != 422 || !strings.Contains(fmt.Sprint(r["error"]), "invalid_ordering_key") {
		t.Fatalf("a key too long: %v", r)
	}
}
