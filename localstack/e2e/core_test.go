package e2e

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/signing"
)

func TestHappyPathSignedAndByteIdentical(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, ep := h.registerReceiver(t, key, always(204))
	// Whitespace and key order must survive: the body is delivered as posted.
	body := "{ \"event\": \"payout.fulfilled\",\n  \"payout_type\": \"crypto\", \"data\": {\"id\": \"po_9\"}, \"note\": \"caf\u00e9\" }"
	ev := h.publish(t, key, body)
	if len(ev.Deliveries) != 1 || ev.Deliveries[0].EndpointID != ep.ID || ev.Event != "payout.fulfilled" {
		t.Fatalf("accepted %+v", ev)
	}
	d := h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, settled)
	if d.Status != "delivered" || d.AttemptCount != 1 || len(d.Attempts) != 1 || d.Attempts[0].StatusCode != 204 {
		t.Fatalf("delivery %+v", d)
	}
	got := rv.requests()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	r := got[0]
	if !bytes.Equal(r.body, []byte(body)) {
		t.Fatalf("body changed:\n%q\n%q", r.body, body)
	}
	if r.verified != nil {
		t.Fatalf("signature does not verify: %v (%s)", r.verified, r.header.Get(signing.Header))
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json", webhook.HeaderEvent: "payout.fulfilled", webhook.HeaderEventID: ev.ID, webhook.HeaderAttempt: "1",
	} {
		if v := r.header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if !strings.HasPrefix(r.header.Get(webhook.HeaderDelivery), "att_") || !strings.HasPrefix(r.header.Get("User-Agent"), "gifq-webhooks/") {
		t.Errorf("headers %v", r.header)
	}
}

func TestRetriesUntilSuccessOnAttemptThree(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, func(n int, _ http.ResponseWriter, _ *http.Request) (int, string) {
		if n < 3 {
			return 500, "boom"
		}
		return 200, "ok"
	})
	ev := h.publish(t, key, payout)
	d := h.waitFor(t, key, ev.Deliveries[0].ID, 30*time.Second, settled)
	if d.Status != "delivered" || d.AttemptCount != 3 || len(d.Attempts) != 3 {
		t.Fatalf("delivery %+v", d)
	}
	for i, want := range []int{500, 500, 200} {
		if a := d.Attempts[i]; a.StatusCode != want || a.Number != i+1 {
			t.Errorf("attempt %d: %+v", i+1, a)
		}
	}
	if d.Attempts[0].Response != "boom" {
		t.Errorf("response body not logged: %+v", d.Attempts[0])
	}
	got := rv.requests()
	if len(got) != 3 {
		t.Fatalf("receiver got %d requests", len(got))
	}
	ids := map[string]bool{}
	sigs := map[string]bool{}
	for i, r := range got {
		if !bytes.Equal(r.body, []byte(payout)) {
			t.Errorf("attempt %d body %q", i+1, r.body)
		}
		if r.verified != nil {
			t.Errorf("attempt %d signature: %v", i+1, r.verified)
		}
		if r.header.Get(webhook.HeaderAttempt) != []string{"1", "2", "3"}[i] {
			t.Errorf("attempt %d header %s", i+1, r.header.Get(webhook.HeaderAttempt))
		}
		ids[r.header.Get(webhook.HeaderDelivery)] = true
		sigs[r.header.Get(signing.Header)] = true
		if r.header.Get(webhook.HeaderEventID) != ev.ID {
			t.Errorf("event id header changed on attempt %d", i+1)
		}
	}
	if len(ids) != 3 || len(sigs) != 3 {
		t.Fatalf("want 3 different X-Gifq-Delivery and signatures, got %d and %d", len(ids), len(sigs))
	}
	// The waits follow the schedule (1 s here): no attempt came early.
	for i := 1; i < 3; i++ {
		if gap := got[i].at.Sub(got[i-1].at); gap < time.Second {
			t.Errorf("attempt %d came %s after the previous one, before the 1 s wait", i+1, gap)
		}
	}
}

func TestAlways500MeansEightAttemptsThenDLQ(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(503))
	ev := h.publish(t, key, payout)
	id := ev.Deliveries[0].ID
	d := h.waitFor(t, key, id, 60*time.Second, settled)
	if d.Status != "failed" || d.AttemptCount != 8 || len(d.Attempts) != 8 || d.FailReason != "attempts_exhausted" || d.LastStatus != 503 {
		t.Fatalf("delivery %+v", d)
	}
	time.Sleep(2 * time.Second) // nothing more may come
	if n := len(rv.requests()); n != 8 {
		t.Fatalf("receiver got %d requests, want exactly 8", n)
	}
	dl := h.dlqOf(t, id)
	if len(dl) != 1 || dl[0].Reason != "attempts_exhausted" || dl[0].Attempts != 8 || dl[0].LastStatus != 503 || dl[0].Kind != queue.KindDeadLetter {
		t.Fatalf("DLQ messages for %s: %+v", id, dl)
	}
}

func TestRejectedByReceiverMeansOneAttemptThenDLQ(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	for _, status := range []int{404, 400, 410, 429} {
		_, key := h.account(t)
		rv, _ := h.registerReceiver(t, key, always(status))
		ev := h.publish(t, key, payout)
		id := ev.Deliveries[0].ID
		d := h.waitFor(t, key, id, 15*time.Second, settled)
		if d.Status != "failed" || d.AttemptCount != 1 || d.FailReason != "rejected" || d.LastStatus != status {
			t.Fatalf("%d: delivery %+v", status, d)
		}
		time.Sleep(1500 * time.Millisecond) // longer than the retry wait: no second attempt
		if n := len(rv.requests()); n != 1 {
			t.Fatalf("%d: receiver got %d requests, want 1", status, n)
		}
		if dl := h.dlqOf(t, id); len(dl) != 1 || dl[0].Reason != "rejected" || dl[0].LastStatus != status {
			t.Fatalf("%d: DLQ %+v", status, dl)
		}
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	target := h.receiver(t, always(200))
	h.registerReceiver(t, key, func(_ int, w http.ResponseWriter, _ *http.Request) (int, string) {
		w.Header().Set("Location", target.URL)
		return http.StatusFound, ""
	})
	ev := h.publish(t, key, payout)
	d := h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, settled)
	if d.Status != "failed" || d.LastStatus != 302 || d.AttemptCount != 1 {
		t.Fatalf("delivery %+v", d)
	}
	if n := len(target.requests()); n != 0 {
		t.Fatalf("the redirect target got %d requests", n)
	}
}

func TestDuplicateQueueMessagesCauseNoExtraAttempt(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	acct, key := h.account(t)
	var inFlight, maxInFlight int
	var mu sync.Mutex
	rv, ep := h.registerReceiver(t, key, func(int, http.ResponseWriter, *http.Request) (int, string) {
		mu.Lock()
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		mu.Unlock()
		time.Sleep(300 * time.Millisecond) // keep the attempt open while duplicates arrive
		mu.Lock()
		inFlight--
		mu.Unlock()
		return 200, ""
	})
	ev := h.publish(t, key, payout)
	// Five more copies of the delivery's message, as SQS may deliver (or a
	// sweeper re-queue may add), while the first is being handled.
	dup := queue.Message{Kind: queue.KindDeliver, DeliveryID: ev.Deliveries[0].ID, EventID: ev.ID,
		EndpointID: ep.ID, AccountID: acct, Gen: 1}
	q := queue.New(h.sqs, h.queueURL, h.dlqURL)
	for i := 0; i < 5; i++ {
		if err := q.Send(ctx, dup, 0); err != nil {
			t.Fatal(err)
		}
	}
	d := h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, settled)
	time.Sleep(3 * time.Second) // let every copy be received and dropped
	if n := len(rv.requests()); n != 1 || maxInFlight != 1 {
		t.Fatalf("receiver got %d requests (max %d at once), want exactly 1", n, maxInFlight)
	}
	if d = h.delivery(t, key, d.ID); d.AttemptCount != 1 || len(d.Attempts) != 1 || d.Status != "delivered" {
		t.Fatalf("delivery %+v", d)
	}
}

func TestIdempotentIngest(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(200))
	first := h.publish(t, key, payout, "Idempotency-Key", "payout-42")
	var again eventOut
	code := h.call(t, key, "POST", "/v1/events", payout, &again, "Idempotency-Key", "payout-42")
	if code != 202 || again.ID != first.ID || len(again.Deliveries) != 1 || again.Deliveries[0].ID != first.Deliveries[0].ID {
		t.Fatalf("repeat: %d %+v, first %+v", code, again, first)
	}
	var e struct{ Error struct{ Code string } }
	if code := h.call(t, key, "POST", "/v1/events", `{"event":"payout.fulfilled","other":1}`, &e, "Idempotency-Key", "payout-42"); code != 409 || e.Error.Code != "idempotency_key_reused" {
		t.Fatalf("same key, other body: %d %+v", code, e)
	}
	h.waitFor(t, key, first.Deliveries[0].ID, 15*time.Second, settled)
	time.Sleep(time.Second)
	if n := len(rv.requests()); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	// A different account may use the same key for its own event.
	_, key2 := h.account(t)
	other := h.publish(t, key2, payout, "Idempotency-Key", "payout-42")
	if other.ID == first.ID {
		t.Fatal("idempotency keys leaked across accounts")
	}
}

func TestIngestValidationChangesNothing(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	acct, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(200))
	big := `{"event":"payout.fulfilled","pad":"` + strings.Repeat("x", 256<<10) + `"}`
	cases := []struct {
		name, key, body string
		status          int
		code            string
	}{
		{"malformed JSON", key, `{"event":"payout.fulfilled"`, 400, "invalid_json"},
		{"not an object", key, `["event"]`, 400, "invalid_json"},
		{"empty body", key, ``, 400, "invalid_json"},
		{"no event field", key, `{"payout_type":"crypto"}`, 422, "invalid_event"},
		{"event not a string", key, `{"event":42}`, 422, "invalid_event"},
		{"event with spaces", key, `{"event":"payout fulfilled"}`, 422, "invalid_event"},
		{"event twice", key, `{"event":"payout.fulfilled","event":"payout.failed"}`, 422, "invalid_event"},
		{"too big", key, big, 413, "body_too_large"},
		{"no key", "", payout, 401, "missing_api_key"},
		{"wrong key", "gifq_not-a-real-key", payout, 401, "invalid_api_key"},
	}
	for _, c := range cases {
		var e struct {
			Error struct{ Code, Message string }
		}
		if code := h.call(t, c.key, "POST", "/v1/events", c.body, &e); code != c.status || e.Error.Code != c.code || e.Error.Message == "" {
			t.Errorf("%s: %d %+v, want %d %s", c.name, code, e, c.status, c.code)
		}
	}
	// Exactly 256 KiB is accepted.
	exact := `{"event":"payout.fulfilled","pad":"` + strings.Repeat("x", 256<<10-len(`{"event":"payout.fulfilled","pad":""}`)) + `"}`
	if len(exact) != 256<<10 {
		t.Fatalf("test body is %d bytes", len(exact))
	}
	ev := h.publish(t, key, exact)
	h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, settled)
	if got := rv.requests(); len(got) != 1 || len(got[0].body) != 256<<10 {
		t.Fatalf("receiver got %d requests; nothing but the valid event may have been delivered", len(got))
	}
	// The 17th endpoint is refused and nothing is stored.
	for i := 1; i < 16; i++ {
		h.endpoint(t, key, rv.URL+"?n="+string(rune('a'+i)))
	}
	var e struct{ Error struct{ Code string } }
	if code := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": rv.URL}, &e); code != 409 || e.Error.Code != "endpoint_limit" {
		t.Fatalf("17th endpoint: %d %+v", code, e)
	}
	var eps struct{ Data []endpointOut }
	h.call(t, key, "GET", "/v1/endpoints", nil, &eps)
	if len(eps.Data) != 16 {
		t.Fatalf("%d endpoints after the refusal", len(eps.Data))
	}
	if a, _ := h.store.GetAccount(ctx, acct); a.EndpointCount != 16 {
		t.Fatalf("endpoint count %d", a.EndpointCount)
	}
}
