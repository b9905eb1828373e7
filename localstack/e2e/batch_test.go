package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/ratelimit"
)

type batchOut struct {
	Accepted int `json:"accepted"`
	Refused  int `json:"refused"`
	Results  []struct {
		Index    int       `json:"index"`
		Status   int       `json:"status"`
		Replayed bool      `json:"replayed"`
		Event    *eventOut `json:"event"`
		Error    *struct {
			Code string `json:"code"`
		} `json:"error"`
	} `json:"results"`
}

// POST /v1/events/batch: each event accepted or refused on its own, with the
// single route's status and code; every accepted event is delivered with its
// bytes; a repeated idempotency key answers the first event.
func TestBatchIngestDeliversEachAcceptedEvent(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(200))
	body := `{"events":[
		{"body": {"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_1"}} },
		{"body": {"no_event": true}},
		{"body": {"event":"payout.fulfilled","data":{"id":"po_2"}}, "idempotency_key": "k-2"},
		{"body": {"event":"payout.fulfilled","data":{"id":"po_2"}}, "idempotency_key": "k-2"},
		{"body": {"event":"payout.fulfilled","data":{"id":"po_3"}}, "idempotency_key": "k-2"},
		{"body": "not an object"}
	]}`
	var out batchOut
	if code := h.call(t, key, "POST", "/v1/events/batch", body, &out); code != 200 {
		t.Fatalf("batch: %d %+v", code, out)
	}
	want := []struct {
		status int
		code   string
	}{{202, ""}, {422, "invalid_event"}, {202, ""}, {202, ""}, {409, "idempotency_key_reused"}, {400, "invalid_json"}}
	if out.Accepted != 3 || out.Refused != 3 || len(out.Results) != len(want) {
		t.Fatalf("answer %+v", out)
	}
	for i, w := range want {
		r := out.Results[i]
		if r.Index != i || r.Status != w.status || (w.code == "") != (r.Error == nil) || r.Error != nil && r.Error.Code != w.code {
			t.Errorf("result %d: %+v, want %d %s", i, r, w.status, w.code)
		}
	}
	if !out.Results[3].Replayed || out.Results[3].Event.ID != out.Results[2].Event.ID {
		t.Errorf("the repeated key did not answer the first event: %+v", out.Results[3])
	}
	for _, i := range []int{0, 2} {
		dlv := out.Results[i].Event.Deliveries[0].ID
		if d := h.waitFor(t, key, dlv, 15*time.Second, settled); d.Status != "delivered" {
			t.Errorf("event %d: %+v", i, d)
		}
	}
	got := rv.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(got))
	}
	bodies := string(got[0].body) + "|" + string(got[1].body)
	for _, b := range []string{`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_1"}}`, `{"event":"payout.fulfilled","data":{"id":"po_2"}}`} {
		if !strings.Contains(bodies, b) {
			t.Errorf("no delivery carried %s byte for byte: %s", b, bodies)
		}
	}
	for i, r := range got {
		if r.verified != nil {
			t.Errorf("request %d: %v", i, r.verified)
		}
	}
}

// The batch as a whole is refused when its envelope is wrong.
func TestBatchEnvelopeErrors(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	many := `{"events":[` + strings.Repeat(`{"body":{"event":"a"}},`, 100) + `{"body":{"event":"a"}}]}`
	for _, c := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"events":[]}`, 422, "invalid_batch"},
		{many, 422, "invalid_batch"},
		{`[{"body":{"event":"a"}}]`, 400, "invalid_json"},
		{`{"events":[{"body":{"event":"a"},"extra":1}]}`, 400, "invalid_json"},
		{`{"events":[{"body":{"event":"a"}}]} trailing`, 400, "invalid_json"},
		{`{"events":[{"body":{"event":"a","pad":"` + strings.Repeat("x", 5<<20) + `"}}]}`, 413, "body_too_large"},
	} {
		var e errOut
		if code := h.call(t, key, "POST", "/v1/events/batch", c.body, &e); code != c.status || e.Error.Code != c.code {
			t.Errorf("%.60s: %d %+v, want %d %s", c.body, code, e, c.status, c.code)
		}
	}
	var e errOut
	if code := h.call(t, "", "POST", "/v1/events/batch", `{}`, &e); code != 401 {
		t.Errorf("no key: %d", code)
	}
}

// A batch takes one ingest token per event from its API key: a batch larger
// than the key's burst can never fit (422), one that fits is accepted whole,
// and the next request finds the bucket empty (429).
func TestBatchCountsEveryEventAgainstTheKeysLimit(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	acct, key := h.account(t)
	if err := h.store.SetAccountIngestLimit(ctx, acct, ratelimit.Limit{Rate: 0.001, Burst: 5}); err != nil {
		t.Fatal(err)
	}
	batch := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"events":[`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"body":{"event":"payout.fulfilled","n":%d}}`, i)
		}
		return b.String() + `]}`
	}
	var e errOut
	if code := h.call(t, key, "POST", "/v1/events/batch", batch(6), &e); code != 422 || e.Error.Code != "batch_exceeds_burst" {
		t.Fatalf("6 events with a burst of 5: %d %+v, want 422 batch_exceeds_burst", code, e)
	}
	var out batchOut
	if code := h.call(t, key, "POST", "/v1/events/batch", batch(5), &out); code != 200 || out.Accepted != 5 {
		t.Fatalf("5 events with a burst of 5: %d %+v, want all 5 accepted", code, out)
	}
	e = errOut{}
	if code := h.call(t, key, "POST", "/v1/events/batch", batch(1), &e); code != 429 || e.Error.Code != "rate_limited" {
		t.Fatalf("one more event: %d %+v, want 429 rate_limited", code, e)
	}
	if code := h.call(t, key, "POST", "/v1/events", `{"event":"payout.fulfilled"}`, &e); code != 429 {
		t.Fatalf("the single route after the batch emptied the bucket: %d, want 429", code)
	}
}
