package httpapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Test events, resends, recovers and replays count against the API key's ingest
// limit, in the same bucket as POST /v1/events: past it each answers 429
// with Retry-After and queues nothing. Another key of the account has its own.
func TestTestEventsResendsAndRecoversCountAgainstTheKeyLimit(t *testing.T) {
	f := newFixture(t, map[string]string{"INGEST_RATE_PER_SECOND": "0.001", "INGEST_BURST": "5"})
	ep := f.endpoint(t, f.keyA)
	since := `{"since":"` + f.now.Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`
	ev := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.paid"}`) // 1
	if ev.status != 202 {
		t.Fatalf("event: %d %s", ev.status, ev.raw)
	}
	dlv := ev.body["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	for _, c := range [][3]string{
		{"POST", "/v1/endpoints/" + ep + "/test-event", ""}, // 2
		{"POST", "/v1/deliveries/" + dlv + "/resend", ""},   // 3
		{"POST", "/v1/endpoints/" + ep + "/recover", since}, // 4
		{"POST", "/v1/endpoints/" + ep + "/replay", since},  // 5
	} {
		if r := f.do(t, f.keyA, c[0], c[1], c[2]); r.status != 202 {
			t.Fatalf("%s %s within the limit: %d %s", c[0], c[1], r.status, r.raw)
		}
	}
	before := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep+"/deliveries", "").raw
	for _, c := range [][3]string{
		{"POST", "/v1/endpoints/" + ep + "/test-event", ""},
		{"POST", "/v1/deliveries/" + dlv + "/resend", ""},
		{"POST", "/v1/endpoints/" + ep + "/recover", since},
		{"POST", "/v1/endpoints/" + ep + "/replay", since},
		{"POST", "/v1/events", `{"event":"payout.paid"}`},
	} {
		f.calls.Reset()
		r := f.do(t, f.keyA, c[0], c[1], c[2])
		if r.status != 429 || r.code() != "rate_limited" || r.headers["Retry-After"] == "" {
			t.Errorf("%s %s past the limit: %d %v %s", c[0], c[1], r.status, r.headers, r.raw)
		}
		if calls := f.calls.String(); strings.Contains(calls, "SQS") || strings.Contains(calls, "Write") {
			t.Errorf("%s %s past the limit wrote or queued: %s", c[0], c[1], calls)
		}
	}
	if after := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep+"/deliveries", "").raw; after != before {
		t.Errorf("refused calls changed the deliveries:\n%s\n%s", before, after)
	}
	_, key2, err := f.app.Store.CreateAPIKey(ctx, f.acctA)
	if err != nil {
		t.Fatal(err)
	}
	if r := f.do(t, key2, "POST", "/v1/deliveries/"+dlv+"/resend", ""); r.status != 202 {
		t.Errorf("another key of the account: %d %s", r.status, r.raw)
	}
}

// A portal session has its own limit on its requests, reads and writes
// alike: past it, 429 with Retry-After; other sessions and the API key go on.
func TestPortalSessionHasItsOwnLimit(t *testing.T) {
	f := newFixture(t, map[string]string{"PORTAL_RATE_PER_SECOND": "0.001", "PORTAL_BURST": "3"})
	ep := f.endpoint(t, f.keyA)
	_, token, _ := f.session(t, f.keyA, "")
	for i := 0; i < 3; i++ {
		if r := f.do(t, token, "GET", "/v1/endpoints", ""); r.status != 200 {
			t.Fatalf("request %d within the limit: %d %s", i+1, r.status, r.raw)
		}
	}
	r := f.do(t, token, "GET", "/v1/endpoints/"+ep, "")
	if r.status != 429 || r.code() != "rate_limited" || r.headers["Retry-After"] == "" || !strings.Contains(r.raw, "portal session") {
		t.Fatalf("a read past the limit: %d %v %s", r.status, r.headers, r.raw)
	}
	if r := f.do(t, token, "PATCH", "/v1/endpoints/"+ep, `{"description":"flood"}`); r.status != 429 {
		t.Errorf("a write past the limit: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep, ""); r.status != 200 || r.body["description"] != "orders" {
		t.Errorf("the API key after the session's flood: %d %s", r.status, r.raw)
	}
	_, other, _ := f.session(t, f.keyA, "")
	if r := f.do(t, other, "GET", "/v1/endpoints", ""); r.status != 200 {
		t.Errorf("another session: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "gifqp_x", "GET", "/v1/endpoints", ""); r.status != 401 {
		t.Errorf("a bad token is refused before the limit: %d", r.status)
	}
	// Signing out is never limited, and the session is then refused as ended.
	if r := f.do(t, token, "DELETE", "/v1/portal/sessions/current", ""); r.status != 204 {
		t.Errorf("signing out past the limit: %d %s", r.status, r.raw)
	}
	if r := f.do(t, token, "GET", "/v1/endpoints", ""); r.status != 401 {
		t.Errorf("after signing out: %d %s", r.status, r.raw)
	}
}

// Whatever a portal session makes is charged to the key that minted it: a
// key at 429 cannot go on sending test events, resends or recovers through
// sessions it mints, and a session's sends spend its key's budget.
func TestPortalSessionSpendsItsKeysIngestBudget(t *testing.T) {
	f := newFixture(t, map[string]string{"INGEST_RATE_PER_SECOND": "0.001", "INGEST_BURST": "3"})
	ep := f.endpoint(t, f.keyA)
	since := `{"since":"` + f.now.Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`
	ev := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.paid"}`) // 1
	if ev.status != 202 {
		t.Fatalf("event: %d %s", ev.status, ev.raw)
	}
	dlv := ev.body["deliveries"].([]any)[0].(map[string]any)["id"].(string)
	_, token, _ := f.session(t, f.keyA, "")
	for i := 2; i <= 3; i++ { // the session spends the key's last two
		if r := f.do(t, token, "POST", "/v1/endpoints/"+ep+"/test-event", ""); r.status != 202 {
			t.Fatalf("session's test event %d within the key's limit: %d %s", i, r.status, r.raw)
		}
	}
	if r := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.paid"}`); r.status != 429 {
		t.Fatalf("the key after its session spent its budget: %d %s", r.status, r.raw)
	}
	before := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep+"/deliveries", "").raw
	_, fresh, _ := f.session(t, f.keyA, "") // a session minted while the key is at 429
	for _, tok := range []string{token, fresh} {
		for _, c := range [][3]string{
			{"POST", "/v1/endpoints/" + ep + "/test-event", ""},
			{"POST", "/v1/deliveries/" + dlv + "/resend", ""},
			{"POST", "/v1/endpoints/" + ep + "/recover", since},
		} {
			f.calls.Reset()
			r := f.do(t, tok, c[0], c[1], c[2])
			if r.status != 429 || r.code() != "rate_limited" || r.headers["Retry-After"] == "" || !strings.Contains(r.raw, "opened this portal session") {
				t.Errorf("%s %s through a session of a key at 429: %d %s", c[0], c[1], r.status, r.raw)
			}
			if calls := f.calls.String(); strings.Contains(calls, "SQS") {
				t.Errorf("%s %s through a session of a key at 429 queued: %s", c[0], c[1], calls)
			}
		}
	}
	if after := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep+"/deliveries", "").raw; after != before {
		t.Errorf("deliveries changed while the key was at 429:\n%s\n%s", before, after)
	}
	if r := f.do(t, fresh, "GET", "/v1/endpoints/"+ep, ""); r.status != 200 {
		t.Errorf("a session's reads are not the key's ingest: %d %s", r.status, r.raw)
	}
}

// Management writes have a per-key limit (MANAGEMENT_RATE_PER_SECOND,
// MANAGEMENT_BURST): past it a PATCH (each an sts:AssumeRole for an AWS
// endpoint) is 429 and changes nothing, reads go on, another key has its
// own bucket, a portal session's writes count in its key's, and revoking
// sessions is never limited.
func TestManagementWritesHaveAPerKeyLimit(t *testing.T) {
	f := newFixture(t, map[string]string{"MANAGEMENT_RATE_PER_SECOND": "0.001", "MANAGEMENT_BURST": "4"})
	ep := f.endpoint(t, f.keyA) // 1
	for i := 2; i <= 3; i++ {
		if r := f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, fmt.Sprintf(`{"description":"v%d"}`, i)); r.status != 200 {
			t.Fatalf("write %d within the limit: %d %s", i, r.status, r.raw)
		}
	}
	_, token, _ := f.session(t, f.keyA, "") // 4: minting a session is a write
	for _, tok := range []string{f.keyA, token} {
		f.calls.Reset()
		r := f.do(t, tok, "PATCH", "/v1/endpoints/"+ep, `{"description":"flood"}`)
		if r.status != 429 || r.code() != "rate_limited" || r.headers["Retry-After"] == "" || !strings.Contains(r.raw, "management writes") {
			t.Errorf("a write past the limit: %d %v %s", r.status, r.headers, r.raw)
		}
		if strings.Contains(f.calls.String(), "TransactWriteItems") {
			t.Errorf("a refused write wrote: %s", f.calls.String())
		}
	}
	if r := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep, ""); r.status != 200 || r.body["description"] != "v3" {
		t.Errorf("a read past the limit: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyA, "POST", "/v1/events", `{"event":"payout.paid"}`); r.status != 202 {
		t.Errorf("an event is not a management write: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyB, "POST", "/v1/endpoints", `{"url":"https://example.com/b"}`); r.status != 201 {
		t.Errorf("another key's write: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyA, "DELETE", "/v1/portal/sessions", ""); r.status != 200 {
		t.Errorf("revoking sessions past the limit: %d %s", r.status, r.raw)
	}
}
