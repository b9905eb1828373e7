package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/redrive"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

type listOut struct {
	Data       []deliveryOut `json:"data"`
	NextCursor string        `json:"next_cursor"`
}

type errOut struct {
	Error struct{ Code, Message string } `json:"error"`
}

// scripted answers 200 while ok is set, else the status in fail.
type scripted struct{ ok atomic.Bool }

func (s *scripted) respond(status int) respondFunc {
	return func(int, http.ResponseWriter, *http.Request) (int, string) {
		if s.ok.Load() {
			return 200, ""
		}
		return status, ""
	}
}

func TestDeliveryLogPagesNewestFirstByStatus(t *testing.T) {
	t.Parallel()
	ownSchedule(t, "1h")
	h := start(t, opts{retry: "1h"}) // a failed attempt stays pending for an hour
	_, key := h.account(t)
	var mode atomic.Int32 // 0: 200, 1: 404, 2: 500
	_, ep := h.registerReceiver(t, key, func(int, http.ResponseWriter, *http.Request) (int, string) {
		return []int{200, 404, 500}[mode.Load()], ""
	})
	var ids []string
	for _, m := range []int32{0, 0, 0, 1, 1, 2, 2, 0} {
		mode.Store(m)
		ev := h.publish(t, key, payout)
		ids = append(ids, ev.Deliveries[0].ID)
		h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, func(d deliveryOut) bool { return d.AttemptCount == 1 && len(d.Attempts) == 1 })
	}
	// All, newest first, in pages of 3.
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		var page listOut
		path := "/v1/endpoints/" + ep.ID + "/deliveries?limit=3"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		if code := h.call(t, key, "GET", path, nil, &page); code != 200 || pages > 5 {
			t.Fatalf("page %d: %d", pages, code)
		}
		for _, d := range page.Data {
			all = append(all, d.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(all) != len(ids) {
		t.Fatalf("listed %d deliveries, want %d", len(all), len(ids))
	}
	for i := range ids {
		if all[i] != ids[len(ids)-1-i] {
			t.Fatalf("not newest first: %v vs %v", all, ids)
		}
	}
	for status, want := range map[string]int{"delivered": 4, "failed": 2, "pending": 2} {
		var page listOut
		h.call(t, key, "GET", "/v1/endpoints/"+ep.ID+"/deliveries?status="+status, nil, &page)
		if len(page.Data) != want {
			t.Errorf("%s: %d deliveries, want %d", status, len(page.Data), want)
		}
		for _, d := range page.Data {
			if d.Status != status || d.AttemptCount != 1 {
				t.Errorf("%s list holds %+v", status, d)
			}
			if status == "pending" && (d.NextAttemptAt == "" || d.LastStatus != 500) {
				t.Errorf("pending delivery without its next attempt or last status: %+v", d)
			}
			if status == "failed" && (d.LastStatus != 404 || d.FailReason != "rejected") {
				t.Errorf("failed delivery: %+v", d)
			}
		}
	}
	var e errOut
	for path, code := range map[string]int{
		"/v1/endpoints/" + ep.ID + "/deliveries?status=lost": 400, "/v1/endpoints/" + ep.ID + "/deliveries?limit=0": 400,
		"/v1/endpoints/" + ep.ID + "/deliveries?cursor=bm9wZQ": 400, "/v1/endpoints/ep_01M8NHF254607T1PMTG2C9YGDA/deliveries": 404,
	} {
		if got := h.call(t, key, "GET", path, nil, &e); got != code {
			t.Errorf("%s: %d, want %d", path, got, code)
		}
	}
	_, other := h.account(t)
	if code := h.call(t, other, "GET", "/v1/endpoints/"+ep.ID+"/deliveries", nil, &e); code != 404 {
		t.Errorf("another account's endpoint log: %d", code)
	}
}

func TestEventShowsEveryDeliveryAndCappedResponses(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	big := strings.Repeat("r", 5000)
	h.registerReceiver(t, key, func(int, http.ResponseWriter, *http.Request) (int, string) { return 200, big })
	h.registerReceiver(t, key, always(404))
	ev := h.publish(t, key, payout)
	for _, d := range ev.Deliveries {
		h.waitFor(t, key, d.ID, 15*time.Second, settled)
	}
	var got struct {
		ID         string          `json:"id"`
		Body       json.RawMessage `json:"body"`
		Deliveries []deliveryOut   `json:"deliveries"`
	}
	if code := h.call(t, key, "GET", "/v1/events/"+ev.ID, nil, &got); code != 200 {
		t.Fatalf("GET event: %d", code)
	}
	if string(got.Body) != payout || len(got.Deliveries) != 2 {
		t.Fatalf("event %+v", got)
	}
	statuses := map[string]bool{}
	for _, d := range got.Deliveries {
		statuses[d.Status] = true
		if len(d.Attempts) != 1 {
			t.Fatalf("delivery without its attempt: %+v", d)
		}
		if a := d.Attempts[0]; a.StatusCode == 200 && (len(a.Response) != 1024 || !strings.HasPrefix(big, a.Response)) {
			t.Errorf("response stored as %d bytes, want the first 1024", len(a.Response))
		}
	}
	if !statuses["delivered"] || !statuses["failed"] {
		t.Fatalf("statuses %v", statuses)
	}
	_, other := h.account(t)
	var e errOut
	if code := h.call(t, other, "GET", "/v1/events/"+ev.ID, nil, &e); code != 404 {
		t.Errorf("another account's event: %d", code)
	}
	if code := h.call(t, other, "GET", "/v1/deliveries/"+ev.Deliveries[0].ID, nil, &e); code != 404 {
		t.Errorf("another account's delivery: %d", code)
	}
}

// An item past its TTL that DynamoDB has not deleted yet reads as gone.
func TestExpiredItemsReadAsGone(t *testing.T) {
	t.Parallel()
	localOnly(t)
	h := start(t, opts{})
	acct, key := h.account(t)
	_, ep := h.registerReceiver(t, key, always(200))
	ev := h.publish(t, key, payout)
	id := ev.Deliveries[0].ID
	h.waitFor(t, key, id, 15*time.Second, settled)
	past := &types.AttributeValueMemberN{Value: "1000"}
	evPK, evSK := store.EventItemKey(acct, ev.ID)
	for _, k := range [][2]string{{evPK, evSK}, {"DLV#" + id, "DLV"}} {
		pk, sk := k[0], k[1]
		_, err := h.env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(h.env.Table), UpdateExpression: aws.String("SET #t = :t"),
			Key:                      map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}},
			ExpressionAttributeNames: map[string]string{"#t": "ttl"}, ExpressionAttributeValues: map[string]types.AttributeValue{":t": past},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var e errOut
	for _, path := range []string{"/v1/events/" + ev.ID, "/v1/deliveries/" + id} {
		if code := h.call(t, key, "GET", path, nil, &e); code != 404 {
			t.Errorf("%s: %d after its TTL", path, code)
		}
	}
	var page listOut
	h.call(t, key, "GET", "/v1/endpoints/"+ep.ID+"/deliveries", nil, &page)
	if len(page.Data) != 0 {
		t.Errorf("expired delivery still listed: %+v", page.Data)
	}
	if code := h.call(t, key, "POST", "/v1/deliveries/"+id+"/resend", nil, &e); code != 404 {
		t.Errorf("resend of an expired delivery: %d", code)
	}
}

// A manual resend is logged as manual and leaves the automatic series alone,
// even when it gets a 2xx while the automatic attempts keep failing.
func TestResendDoesNotCancelAutomaticRetries(t *testing.T) {
	t.Parallel()
	h := start(t, opts{retry: "2s,2s,2s"}) // 4 attempts (a deployed stack: its own schedule)
	acct, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, func(_ int, _ http.ResponseWriter, r *http.Request) (int, string) {
		if r.Header.Get(webhook.HeaderAttempt) == "0" { // manual
			return 200, "manual ok"
		}
		return 500, ""
	})
	ev := h.publish(t, key, payout)
	id := ev.Deliveries[0].ID
	h.waitFor(t, key, id, 10*time.Second, func(d deliveryOut) bool { return d.AttemptCount >= 1 && len(d.Attempts) >= 1 })
	var r struct {
		DeliveryID string `json:"delivery_id"`
		AttemptID  string `json:"attempt_id"`
	}
	if code := h.call(t, key, "POST", "/v1/deliveries/"+id+"/resend", nil, &r); code != 202 || r.DeliveryID != id || !strings.HasPrefix(r.AttemptID, "att_") {
		t.Fatalf("resend: %d %+v", code, r)
	}
	d := h.waitFor(t, key, id, 30*time.Second, settled)
	if d.Status != "failed" || d.AttemptCount != h.attempts || d.FailReason != "attempts_exhausted" {
		t.Fatalf("the automatic series must run to its end (%d attempts): %+v", h.attempts, d)
	}
	manual, auto := 0, 0
	for _, a := range d.Attempts {
		switch a.Kind {
		case "manual":
			manual++
			if a.StatusCode != 200 || a.Number != 0 || a.Outcome != "delivered" || a.Response != "manual ok" {
				t.Errorf("manual attempt %+v", a)
			}
		case "auto":
			auto++
		}
	}
	if manual != 1 || auto != h.attempts || len(rv.requests()) != h.attempts+1 {
		t.Fatalf("%d manual, %d automatic attempts, %d requests; attempts: %+v", manual, auto, len(rv.requests()), d.Attempts)
	}

	// A resend of a failed (or delivered) delivery works too, and one resend
	// message received twice makes one request.
	before := len(rv.requests())
	if code := h.call(t, key, "POST", "/v1/deliveries/"+id+"/resend", nil, &r); code != 202 {
		t.Fatalf("resend of a failed delivery: %d", code)
	}
	dup := queue.Message{Kind: queue.KindResend, DeliveryID: id, EventID: ev.ID, EndpointID: ev.Deliveries[0].EndpointID,
		AccountID: acct, Gen: 1, AttemptID: r.AttemptID}
	if err := queue.New(h.sqs, h.queueURL, h.dlqURL).Send(ctx, dup, 0); err != nil {
		t.Fatal(err)
	}
	waitCount(t, "resend", before+1, 15*time.Second, func() int { return len(rv.requests()) })
	time.Sleep(2 * time.Second)
	if n := len(rv.requests()); n != before+1 {
		t.Fatalf("a duplicated resend made %d requests", n-before)
	}
	if got := h.delivery(t, key, id); got.Status != "failed" || len(got.Attempts) != h.attempts+2 {
		t.Fatalf("after the second resend: %+v", got)
	}
	_, other := h.account(t)
	var e errOut
	if code := h.call(t, other, "POST", "/v1/deliveries/"+id+"/resend", nil, &e); code != 404 {
		t.Errorf("another account's resend: %d", code)
	}
}

func TestRecoverRestartsFailedDeliveriesInTheWindow(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	var s scripted
	rv, ep := h.registerReceiver(t, key, s.respond(404))
	var ids []string
	for i := 0; i < 3; i++ {
		ev := h.publish(t, key, payout)
		ids = append(ids, ev.Deliveries[0].ID)
	}
	for _, id := range ids {
		h.waitFor(t, key, id, 15*time.Second, settled)
	}
	time.Sleep(10 * time.Millisecond)
	cut := time.Now()
	late := h.publish(t, key, payout) // after the window: stays failed
	h.waitFor(t, key, late.Deliveries[0].ID, 15*time.Second, settled)
	s.ok.Store(true)

	var res struct {
		Recovered int  `json:"recovered"`
		More      bool `json:"more"`
	}
	body := map[string]string{"since": cut.Add(-time.Hour).Format(time.RFC3339Nano), "until": cut.Format(time.RFC3339Nano)}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", body, &res); code != 202 || res.Recovered != 3 || res.More {
		t.Fatalf("recover: %d %+v", code, res)
	}
	for _, id := range ids {
		d := h.waitFor(t, key, id, 15*time.Second, settled)
		if d.Status != "delivered" || d.Series != 2 || d.AttemptCount != 1 {
			t.Fatalf("recovered delivery %+v", d)
		}
	}
	if d := h.delivery(t, key, late.Deliveries[0].ID); d.Status != "failed" || d.Series != 1 {
		t.Fatalf("a delivery outside the window was recovered: %+v", d)
	}
	if n := len(rv.requests()); n != 7 {
		t.Fatalf("receiver got %d requests, want 4 rejected + 3 recovered", n)
	}
	// Recovering again finds nothing to do in that window.
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", body, &res); code != 202 || res.Recovered != 0 {
		t.Fatalf("second recover: %d %+v", code, res)
	}
	var e errOut
	for b, want := range map[string]int{`{}`: 422, `{"since":"yesterday"}`: 422, `{"since":"2026-11-30T00:00:00Z","until":"tomorrow"}`: 422, `{"since":"2026-11-30T00:00:00Z","until":"2026-11-29T00:00:00Z"}`: 422} {
		if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", b, &e); code != want {
			t.Errorf("recover %s: %d, want %d", b, code, want)
		}
	}
	_, other := h.account(t)
	if code := h.call(t, other, "POST", "/v1/endpoints/"+ep.ID+"/recover", body, &e); code != 404 {
		t.Errorf("another account's recover: %d", code)
	}
}

func TestEndpointLifecycle(t *testing.T) {
	t.Parallel()
	h := start(t, opts{retry: "1h", sweepEvery: time.Second, sweepGrace: time.Second})
	_, key := h.account(t)
	var s scripted
	rv, ep := h.registerReceiver(t, key, s.respond(500))
	var e errOut

	// PATCH changes what it is given and nothing else.
	type endpointFull struct {
		endpointOut
		Description string   `json:"description"`
		EventTypes  []string `json:"event_types"`
		Disabled    bool     `json:"disabled"`
		Reason      string   `json:"disabled_reason"`
	}
	var got endpointFull
	if code := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"description": "payouts", "event_types": []string{"payout.*"}}, &got); code != 200 ||
		got.Description != "payouts" || len(got.EventTypes) != 1 || got.URL != ep.URL || got.Secret != "" {
		t.Fatalf("patch: %d %+v", code, got)
	}
	for b, want := range map[string]int{`{"url":"ftp://x"}`: 422, `{"event_types":["a b"]}`: 422, `{"colour":"red"}`: 400, `{"disabled":"yes"}`: 400} {
		if code := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, b, &e); code != want {
			t.Errorf("patch %s: %d, want %d", b, code, want)
		}
	}
	// Events outside the filter get no delivery.
	if ev := h.publish(t, key, `{"event":"order.created"}`); len(ev.Deliveries) != 0 {
		t.Fatalf("filtered event fanned out: %+v", ev)
	}

	// Two deliveries wait for a retry an hour away; disabling stops them now.
	var pending []string
	for i := 0; i < 2; i++ {
		ev := h.publish(t, key, payout)
		pending = append(pending, ev.Deliveries[0].ID)
		h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, func(d deliveryOut) bool { return d.AttemptCount >= 1 && len(d.Attempts) >= 1 })
	}
	got = endpointFull{}
	if code := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"disabled": true}, &got); code != 200 || !got.Disabled || got.Reason == "" {
		t.Fatalf("disable: %d %+v", code, got)
	}
	for _, id := range pending {
		// Locally the retry is an hour away: exactly one attempt. A deployed
		// stack retries on its own (1 s) schedule, so more may have run.
		if d := h.delivery(t, key, id); d.Status != "failed" || d.FailReason != "endpoint_disabled" || d.AttemptCount < 1 || (!remote() && d.AttemptCount != 1) {
			t.Fatalf("pending delivery after disabling: %+v", d)
		}
	}
	// New events skip a disabled endpoint; resend is refused; the DLQ gets the stopped ones (via the sweeper).
	if ev := h.publish(t, key, payout); len(ev.Deliveries) != 0 {
		t.Fatalf("a disabled endpoint got a delivery: %+v", ev)
	}
	if code := h.call(t, key, "POST", "/v1/deliveries/"+pending[0]+"/resend", nil, &e); code != 409 || e.Error.Code != "endpoint_disabled" {
		t.Fatalf("resend to a disabled endpoint: %d %+v", code, e)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		dl := h.dlq(t)
		if len(dl[pending[0]]) == 1 && len(dl[pending[1]]) == 1 {
			if dl[pending[0]][0].Reason != "endpoint_disabled" {
				t.Fatalf("DLQ reason %q", dl[pending[0]][0].Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stopped deliveries not dead-lettered: %v", dl)
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := len(rv.requests())

	// Enabled again, the stopped deliveries can be recovered.
	s.ok.Store(true)
	got = endpointFull{}
	if code := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"disabled": false}, &got); code != 200 || got.Disabled || got.Reason != "" {
		t.Fatalf("enable: %d %+v", code, got)
	}
	var res struct{ Recovered int }
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", map[string]string{"since": time.Now().Add(-time.Hour).Format(time.RFC3339)}, &res); code != 202 || res.Recovered != 2 {
		t.Fatalf("recover after enabling: %d %+v", code, res)
	}
	for _, id := range pending {
		if d := h.waitFor(t, key, id, 15*time.Second, settled); d.Status != "delivered" {
			t.Fatalf("recovered delivery %+v", d)
		}
	}
	if n := len(rv.requests()) - before; n != 2 {
		t.Fatalf("%d requests after recovery, want 2", n)
	}

	// Another account sees none of it.
	_, other := h.account(t)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/endpoints/" + ep.ID}, {"PATCH", "/v1/endpoints/" + ep.ID}, {"DELETE", "/v1/endpoints/" + ep.ID},
		{"POST", "/v1/endpoints/" + ep.ID + "/rotate-secret"}, {"GET", "/v1/endpoints/" + ep.ID + "/deliveries"},
	} {
		if code := h.call(t, other, c.method, c.path, `{}`, &e); code != 404 {
			t.Errorf("another account %s %s: %d", c.method, c.path, code)
		}
	}

	// DELETE: gone, its place in the 16 given back, its deliveries still readable.
	if code := h.call(t, key, "DELETE", "/v1/endpoints/"+ep.ID, nil, nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code := h.call(t, key, "GET", "/v1/endpoints/"+ep.ID, nil, &e); code != 404 {
		t.Fatalf("deleted endpoint: %d", code)
	}
	if code := h.call(t, key, "DELETE", "/v1/endpoints/"+ep.ID, nil, &e); code != 404 {
		t.Fatalf("second delete: %d", code)
	}
	if d := h.delivery(t, key, pending[0]); d.Status != "delivered" {
		t.Fatalf("a deleted endpoint's delivery: %+v", d)
	}
	for i := 0; i < 16; i++ {
		h.endpoint(t, key, rv.URL)
	}
}

// A rotated endpoint's deliveries carry two signatures during the grace
// period (old and new secret each verify), then only the new one.
func TestRotateSecretSignsWithBothDuringGrace(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, ep := h.registerReceiver(t, key, always(200))
	var rot struct {
		Secret    string `json:"secret"`
		ExpiresAt string `json:"previous_secret_expires_at"`
	}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", nil, &rot); code != 200 ||
		!strings.HasPrefix(rot.Secret, signing.SecretPrefix) || rot.Secret == ep.Secret || rot.ExpiresAt == "" {
		t.Fatalf("rotate: %d %+v", code, rot)
	}
	if exp, _ := time.Parse(time.RFC3339Nano, rot.ExpiresAt); time.Until(exp) < 23*time.Hour {
		t.Fatalf("the old secret expires at %s, want in 24 h", rot.ExpiresAt)
	}
	ev := h.publish(t, key, payout)
	h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, settled)
	r := rv.requests()[0]
	sig := r.header.Get(signing.Header)
	if strings.Count(sig, "v1=") != 2 {
		t.Fatalf("during the grace: %s", sig)
	}
	for _, secret := range []string{ep.Secret, rot.Secret} {
		if err := signing.Verify(r.body, sig, []string{secret}, signing.Options{}); err != nil {
			t.Errorf("does not verify with one of the secrets: %v", err)
		}
	}
	// A third live secret is refused; stopping the previous one now and
	// rotating with no grace leaves only the newest secret signing.
	var refused errOut
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", `{"expire_previous_after_seconds":0}`, &refused); code != 409 ||
		refused.Error.Code != "previous_secret_live" {
		t.Fatalf("rotation while the previous secret signs: %d %+v", code, refused)
	}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", `{"expire_previous_after_seconds":0,"expire_previous_now":true}`, &rot); code != 200 {
		t.Fatalf("second rotation: %d", code)
	}
	ev = h.publish(t, key, payout)
	h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, settled)
	r = rv.requests()[1]
	sig = r.header.Get(signing.Header)
	if strings.Count(sig, "v1=") != 1 || signing.Verify(r.body, sig, []string{rot.Secret}, signing.Options{}) != nil ||
		signing.Verify(r.body, sig, []string{ep.Secret}, signing.Options{}) == nil {
		t.Fatalf("after the grace: %s", sig)
	}
	var e errOut
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", `{"expire_previous_after_seconds":999999999}`, &e); code != 422 {
		t.Fatalf("too long a grace: %d", code)
	}
}

// The three ways a dead letter comes back: the redrive function (with its
// filters and dry run), the SQS console's redrive (messages moved back as
// they are), and a poison message SQS moved after maxReceiveCount.
func TestDLQRedrivePaths(t *testing.T) {
	t.Parallel()
	localOnly(t) // invokes the redrive handler and moves messages itself
	h := start(t, opts{})
	acct, key := h.account(t)
	var a, b scripted
	rvA, epA := h.registerReceiver(t, key, a.respond(404))
	_, epB := h.registerReceiver(t, key, b.respond(400))
	var events []eventOut
	for i := 0; i < 3; i++ {
		ev := h.publish(t, key, payout)
		events = append(events, ev)
		for _, d := range ev.Deliveries {
			h.waitFor(t, key, d.ID, 15*time.Second, settled)
		}
	}
	waitDLQ := func(n int) {
		deadline := time.Now().Add(10 * time.Second)
		for len(h.dlq(t)) < n {
			if time.Now().After(deadline) {
				t.Fatalf("DLQ has %d deliveries, want %d", len(h.dlq(t)), n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitDLQ(6)
	a.ok.Store(true)
	b.ok.Store(true)
	rd := h.app.Redriver()

	// 1. The redrive function: a dry run counts, a filtered run moves only its matches.
	res, err := rd.Handle(ctx, redrive.Request{MaxMessages: 100, DryRun: true, EndpointID: epA.ID})
	if err != nil || res.Matched != 3 || res.Moved != 0 || res.Examined != 6 {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if n := len(h.dlq(t)); n != 6 {
		t.Fatalf("a dry run changed the DLQ: %d left", n)
	}
	res, err = rd.Handle(ctx, redrive.Request{MaxMessages: 100, EndpointID: epA.ID, Reason: "rejected"})
	if err != nil || res.Moved != 3 || res.Left != 3 {
		t.Fatalf("redrive endpoint A: %+v %v", res, err)
	}
	for _, ev := range events {
		for _, d := range ev.Deliveries {
			got := h.waitFor(t, key, d.ID, 15*time.Second, func(d deliveryOut) bool { return d.Status != "pending" && d.Series > 0 })
			if d.EndpointID == epA.ID && (got.Status != "delivered" || got.Series != 2) {
				t.Fatalf("redriven delivery %+v", got)
			}
			if d.EndpointID == epB.ID && (got.Status != "failed" || got.Series != 1) {
				t.Fatalf("a delivery outside the filter moved: %+v", got)
			}
		}
	}
	if n := len(h.dlq(t)); n != 3 {
		t.Fatalf("%d deliveries left in the DLQ, want endpoint B's 3", n)
	}

	// 2. The console's "Start DLQ redrive": SQS moves the messages back to the
	// delivery queue unchanged (fauxqs lacks the move-task API, so the test
	// moves them the same way); each, and a second copy of one, arrives as a
	// dead letter and restarts its delivery once.
	moved := h.moveDLQToQueue(t)
	if moved != 3 {
		t.Fatalf("moved %d", moved)
	}
	var copyOf queue.Message
	for _, ev := range events {
		for _, d := range ev.Deliveries {
			if d.EndpointID == epB.ID {
				h.waitFor(t, key, d.ID, 15*time.Second, func(d deliveryOut) bool { return d.Series == 2 && d.Status == "delivered" })
				copyOf = queue.Message{Kind: queue.KindDeadLetter, DeliveryID: d.ID, EventID: ev.ID, EndpointID: epB.ID, AccountID: acct, Gen: 1, Reason: "rejected"}
			}
		}
	}
	q := queue.New(h.sqs, h.queueURL, h.dlqURL)
	if err := q.Send(ctx, copyOf, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if got := h.delivery(t, key, copyOf.DeliveryID); got.Series != 2 {
		t.Fatalf("a second copy of a redriven dead letter restarted it again: %+v", got)
	}

	// 3. A poison message: SQS moved a delivery's message to the DLQ after
	// maxReceiveCount, so its delivery is still pending with no message
	// moving it: the redrive function sends a fresh copy back.
	lostMsg := queue.For(pendingWithoutMessage(t, h, acct, epA.ID))
	if err := q.DeadLetterRaw(ctx, lostMsg.Encode(), ""); err != nil {
		t.Fatal(err)
	}
	before := len(rvA.requests())
	res, err = rd.Handle(ctx, redrive.Request{MaxMessages: 10, Reason: redrive.ReasonPoison})
	if err != nil || res.Moved != 1 {
		t.Fatalf("poison redrive: %+v %v", res, err)
	}
	if d := h.waitFor(t, key, lostMsg.DeliveryID, 15*time.Second, settled); d.Status != "delivered" || d.Series != 1 {
		t.Fatalf("poisoned delivery %+v", d)
	}
	if len(rvA.requests()) != before+1 {
		t.Fatalf("poison redrive made %d requests", len(rvA.requests())-before)
	}
	// The same poison message again is stale now: removed, nothing sent.
	if err := q.DeadLetterRaw(ctx, lostMsg.Encode(), ""); err != nil {
		t.Fatal(err)
	}
	if res, err = rd.Handle(ctx, redrive.Request{MaxMessages: 10, Reason: redrive.ReasonPoison}); err != nil || res.Stale != 1 || res.Moved != 0 {
		t.Fatalf("stale poison: %+v %v", res, err)
	}
}

// moveDLQToQueue does what SQS's console redrive does: every DLQ message to
// the delivery queue, body unchanged.
func (h *harness) moveDLQToQueue(t *testing.T) int {
	t.Helper()
	moved := 0
	for {
		out, err := h.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(h.dlqURL), MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return moved
		}
		for _, m := range out.Messages {
			if _, err := h.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(h.queueURL), MessageBody: m.Body}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(h.dlqURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
			moved++
		}
	}
}

// pendingWithoutMessage writes an event and its pending delivery to the
// table, and sends no queue message for it.
func pendingWithoutMessage(t *testing.T, h *harness, acct, endpointID string) domain.Delivery {
	t.Helper()
	now := time.Now()
	ev := domain.Event{ID: domain.NewID("evt"), AccountID: acct, Type: "payout.fulfilled", Body: []byte(payout),
		ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: endpointID, AccountID: acct, EventType: ev.Type,
		Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: now.UnixMilli(), CreatedAt: now.UnixMilli(), ExpiresAt: ev.ExpiresAt}
	ev.DeliveryIDs = []string{d.ID}
	if _, err := h.store.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: []domain.Delivery{d}, DueAt: []int64{now.UnixMilli()}}); err != nil {
		t.Fatal(err)
	}
	return d
}
