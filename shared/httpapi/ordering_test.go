package httpapi_test

import (
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
