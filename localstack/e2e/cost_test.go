package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/cost"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// The AWS calls one delivery costs, counted by SDK middleware on the app's
// own clients (the test's setup and polling use other clients). The counts
// are exact: a change that adds a round trip to the hot path fails here.
func TestAWSCallsPerDelivery(t *testing.T) {
	localOnly(t)
	t.Run("cap=on", func(t *testing.T) { testAWSCallsPerDelivery(t, true, nil) })
	t.Run("cap=off", func(t *testing.T) { testAWSCallsPerDelivery(t, false, nil) })
	// The cap only while an endpoint is slow: a healthy one's attempts cost
	// what they do with no cap (lifecycle.CapNow).
	t.Run("cap=whenSlow", func(t *testing.T) { testAWSCallsPerDelivery(t, false, map[string]string{"ENDPOINT_CAP": "whenSlow"}) })
	// The other two shapes docs/cost.md prices, cap on, at the default rate.
	t.Run("fanout5", func(t *testing.T) { testUnitsPerShape(t, 1, 5, cost.MaxFanOut5WriteUnits) })
	t.Run("batch100", func(t *testing.T) { testUnitsPerShape(t, 100, 1, cost.MaxBatch100WriteUnits) })
}

// testUnitsPerShape posts events (one request: POST /v1/events when 1,
// the batch route otherwise) to endpoints receivers, waits until every
// delivery is delivered, and holds the write units per delivery (failed
// conditional writes included: testenv.ConditionFailed) to at most max.
func testUnitsPerShape(t *testing.T, events, endpoints int, max float64) {
	calls := testenv.NewCalls()
	h := start(t, opts{calls: calls, noScheduler: true, maxInFlight: 5, env: map[string]string{"SWEEP_GRACE": "5m"}})
	_, key := h.account(t)
	for i := 0; i < endpoints; i++ {
		h.registerReceiver(t, key, always(200))
	}
	h.publish(t, key, payout) // warms the key cache and the limiter's state for the account
	time.Sleep(2 * time.Second)
	calls.Reset()
	var ids []string
	if events == 1 {
		for _, d := range h.publish(t, key, payout).Deliveries {
			ids = append(ids, d.ID)
		}
	} else {
		items := make([]string, events)
		for i := range items {
			items[i] = `{"body":` + payout + `}`
		}
		var out batchOut
		if code := h.call(t, key, "POST", "/v1/events/batch", `{"events":[`+strings.Join(items, ",")+`]}`, &out); code != 200 || out.Accepted != events {
			t.Fatalf("batch: %d, %d accepted", code, out.Accepted)
		}
		for _, r := range out.Results {
			for _, d := range r.Event.Deliveries {
				ids = append(ids, d.ID)
			}
		}
	}
	deadline := time.Now().Add(time.Duration(len(ids)/5+30) * time.Second) // the account's 5/s, and some
	for _, id := range ids {
		for {
			if d, err := h.store.GetDelivery(ctx, id); err == nil && d.Status == domain.StatusDelivered {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery %s not delivered", id)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // the poller's delete follows the invocation
	n := float64(len(ids))
	units := calls.WriteUnits() / n
	t.Logf("%d events to %d endpoints: %s", events, endpoints, calls)
	t.Logf("write units per delivery: %.2f (failed conditional writes among them: %d)", units, calls.Count(testenv.ConditionFailed))
	t.Logf("read units per delivery: %.2f", calls.ReadUnits()/n)
	t.Logf("calls per delivery: %.2f", float64(calls.Total())/n)
	if units > max {
		t.Errorf("write units per delivery = %.2f, want at most %g", units, max)
	}
}

// maxLogBytesPerDelivery bounds what one delivery logs at info: the api's
// request line (342 B here); a plain success logs no line of its own (the
// attempt is in the table). CloudWatch Logs bills each byte.
const maxLogBytesPerDelivery = 400

func testAWSCallsPerDelivery(t *testing.T, capped bool, env map[string]string) {
	calls := testenv.NewCalls()
	logs := &lockedBuffer{}
	// Info, as the stack logs (the harness's default is warn), and the
	// stack's sweep grace (the harness's is 2 s), which decides whether a
	// retry moves its sweep index entry (lifecycle.KeepsDue).
	o := opts{calls: calls, noScheduler: true, maxInFlight: -1, logs: logs, env: map[string]string{"LOG_LEVEL": "info", "SWEEP_GRACE": "5m"}} // ENDPOINT_MAX_IN_FLIGHT=0: no cap
	if capped || env != nil {
		o.maxInFlight = 5 // the shipped default
	}
	for k, v := range env {
		o.env[k] = v
	}
	h := start(t, o)
	acct, key := h.account(t)
	var fail bool
	h.registerReceiver(t, key, func(int, http.ResponseWriter, *http.Request) (int, string) {
		if fail {
			fail = false
			return 500, ""
		}
		return 200, ""
	})
	waitStatus := func(id string, status domain.Status) {
		deadline := time.Now().Add(15 * time.Second)
		for {
			if d, err := h.store.GetDelivery(ctx, id); err == nil && d.Status == status {
				time.Sleep(300 * time.Millisecond) // the poller's delete follows the invocation
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery %s not %s", id, status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// One event, one endpoint, delivered on the first attempt.
	h.publish(t, key, payout) // warms the key cache and the limiter's state for the account
	time.Sleep(time.Second)
	calls.Reset()
	logs.Reset()
	billed := h.local.DeliverBilled()
	ev := h.publish(t, key, payout)
	waitStatus(ev.Deliveries[0].ID, domain.StatusDelivered)
	got := calls.Snapshot()
	// No paid sleeping on the way of a lone event (this machine's speed, emulators included).
	t.Logf("billed deliver time per delivery: %v", (h.local.DeliverBilled() - billed).Round(time.Millisecond))
	// The log lines one delivery writes at info, every function's (the api's
	// request line and the worker's one line for the attempt), as CloudWatch
	// Logs would ingest them (EMF metrics are flushed per batch, apart).
	logBytes := len(logs.String())
	t.Logf("log bytes per delivery: %d", logBytes)
	if logBytes > maxLogBytesPerDelivery {
		t.Errorf("log bytes per delivery = %d, want at most %d:\n%s", logBytes, maxLogBytesPerDelivery, logs.String())
	}
	units, readUnits := calls.WriteUnits(), calls.ReadUnits()
	t.Logf("first-attempt success: %s", calls)
	perDelivery(t, "", calls)
	if capped && (units != cost.SingleWriteUnits || readUnits != cost.SingleReadUnits) {
		t.Errorf("%g write and %g read units; shared/cost prices %d and %d: change both together",
			units, readUnits, cost.SingleWriteUnits, cost.SingleReadUnits)
	}
	// The per-endpoint cap adds two writes to the slot item: the take
	// before the claim and the release after the record. Without it, the
	// worker reads the endpoint again as it claims (with it, the
	// take is conditioned on the endpoint's route as loaded).
	slotWrites, reread := 0, 1
	if capped {
		slotWrites, reread = cost.SlotWrites, 0
	}
	want := map[string]int{
		// ingest (api function); the key's account and ingest limit are cached (no GetItem,
		// no BatchGetItem) after the first event; UpdateItem: the account's delivery rate
		// limiter, whose write takes the key's ingest tokens too
		"DynamoDB.Query": 1, "SQS.SendMessageBatch": 1,
		// ingest: the deliveries, then the event (its conditional put is the commit
		// point); no transaction
		"DynamoDB.BatchWriteItem": 1,
		// deliver function (and the event source mapping's receive and delete): one read
		// of the endpoint and its slot item (the event's body and the delivery as ingest
		// wrote it ride in ingest's message; the claim's write returns the item);
		// without the cap, the endpoint again alongside the claim; PutItem: ingest's
		// event (the attempt is logged on the delivery's item by the outcome's write)
		"DynamoDB.BatchGetItem": 1, "DynamoDB.GetItem": reread, "DynamoDB.PutItem": 1,
		"SQS.ReceiveMessage": 1, "SQS.DeleteMessageBatch": 1,
		// ingest's booking (with the key's take), the claim, the outcome, and the slot's take and release
		"DynamoDB.UpdateItem": 1 + 2 + slotWrites,
	}
	// Write units, as the emulator reports them consumed (table and index
	// entries): ingest 1 (the booking, with the key's take) + 1 + 1
	// (delivery, event: its item is keyed by the account's day and its id,
	// the listing by time's own key, so no index entry) + 2 index entries
	// (log, sweep) = 5; claim 1 (no index entry changes); the
	// outcome with the attempt logged on the delivery's item 1 (the sweep
	// index entry stays: the sweeper skips a final delivery); the slots
	// 1 + 1 (docs/cost.md).
	if wantUnits := float64(cost.SingleWriteUnits - cost.SlotWrites + slotWrites); units != wantUnits {
		t.Errorf("write units per delivery = %g, want %g", units, wantUnits)
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s = %d, want %d", op, got[op], n)
		}
	}
	for op := range got {
		if _, ok := want[op]; !ok && op != "SQS.ReceiveMessage(empty)" && op != testenv.MessagesReceived {
			t.Errorf("unexpected call %s = %d", op, got[op])
		}
	}

	// The items one event and its delivery leave behind, at their billed size.
	out, err := h.env.DB.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(h.env.Table)})
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{}
	for _, it := range out.Items {
		sk := it["sk"].(*types.AttributeValueMemberS).Value
		kind, _, _ := strings.Cut(sk, "#")
		if strings.HasPrefix(sk, "evt_") {
			kind = "EVT" // an event, under its account's day and its id
		}
		sizes[kind] = max(sizes[kind], store.ItemSize(it))
	}
	t.Logf("largest item of each kind, bytes (event body %d): %v", len(payout), sizes)

	// The same with one retry (500 then 200): what one retried attempt adds.
	fail = true
	calls.Reset()
	ev = h.publish(t, key, payout)
	waitStatus(ev.Deliveries[0].ID, domain.StatusDelivered)
	retried := calls.Snapshot()
	t.Logf("with one retry: %s", calls)
	perDelivery(t, " (a 500, then a 200)", calls)
	// A retry (its own rate-limit slot, claim, attempt, outcome, slot). The
	// endpoint's health is not written: a first attempt's 500 on a healthy
	// endpoint is a blip (lifecycle.Blip), and the 200 has nothing to clear.
	extra := map[string]int{
		// the retry's wait is a delayed copy of the message, and the
		// received copy is deleted: never a ChangeMessageVisibility
		"SQS.SendMessageBatch": 1, "SQS.SendMessage": 0, "SQS.DeleteMessageBatch": 1, "SQS.ReceiveMessage": 1, "SQS.ChangeMessageVisibility": 0,
		// the retry's attempt too fits on the delivery's item
		"DynamoDB.BatchGetItem": 1, "DynamoDB.GetItem": reread, "DynamoDB.PutItem": 0,
		"DynamoDB.UpdateItem":         1 + 2 + slotWrites,
		"DynamoDB.TransactWriteItems": 0, "DynamoDB.BatchWriteItem": 0,
	}
	for op, n := range extra {
		if retried[op]-got[op] != n {
			t.Errorf("a retry adds %d %s, want %d", retried[op]-got[op], op, n)
		}
	}
	// Units: the rate limiter 1, the claim 1, the outcome with the attempt 1 (the
	// sweep entry is not moved for a retry a second on: lifecycle.KeepsDue), the
	// slots; no health write (a blip).
	retryUnits := calls.WriteUnits() - units
	t.Logf("write units a retry adds: %g", retryUnits)
	if wantUnits := float64(cost.RetryWriteUnits - cost.SlotWrites + slotWrites); retryUnits != wantUnits {
		t.Errorf("a retry adds %g write units, want %g", retryUnits, wantUnits)
	}
	// Reads: the attempt's load (delivery, endpoint, slot item: a retry's
	// message carries the body but not the delivery) and, without the cap,
	// the endpoint's re-read before the claim.
	if retryReads := calls.ReadUnits() - readUnits; retryReads != float64(cost.RetryReadUnits+reread) {
		t.Errorf("a retry adds %g read units, want %d", retryReads, cost.RetryReadUnits+reread)
	}
	if n := retried["SQS.ChangeMessageVisibility"]; n != 0 {
		t.Errorf("a retry asked for %d visibility changes, want none", n)
	}

	// A 2 KB body: stored compressed (store's packBody). A 2 KB payout's
	// item comes out at about 1 KB, just under or over it depending on the
	// Go release's compress/flate (972-985 B with 1.27, 1,040-1,070 with
	// 1.26), so the test holds the units to the item as stored rather than
	// to one release's output: the event item's own units beside the small
	// body's, whatever the toolchain (shared/cost budgets 2 KB at one more).
	for _, c := range []struct {
		name string
		body string
	}{
		{" (2 KB body)", string(testenv.PayoutBody(2000))},
		{" (2 KB body that does not compress)", `{"event":"payout.fulfilled","data":{"pad":"` + noise(2000) + `"}}`},
	} {
		calls.Reset()
		ev = h.publish(t, key, c.body)
		waitStatus(ev.Deliveries[0].ID, domain.StatusDelivered)
		perDelivery(t, c.name, calls)
		pk, sk := store.EventItemKey(acct, ev.ID)
		it, err := h.env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(h.env.Table),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil || it.Item == nil {
			t.Fatalf("%s: the event's item: %v", c.name, err)
		}
		size := store.ItemSize(it.Item)
		extra := float64((size+1023)/1024 - 1) // the event item's units past the small body's one
		t.Logf("%s: the event's item %d bytes", c.name, size)
		if big := calls.WriteUnits(); big != units+extra {
			t.Errorf("%s: %g write units, want %g (the event item of %d bytes: %g more)", c.name, big, units+extra, size, extra)
		}
		if c.name == " (2 KB body)" && calls.WriteUnits() > units+1 {
			t.Errorf("%s: %g write units, more than shared/cost's budget of one more than a small body's", c.name, calls.WriteUnits())
		}
	}
}

// noise is n characters that do not compress (JSON-safe).
func noise(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// perDelivery prints what one delivery cost, in the lines docs/cost.md
// quotes: write units, read units, AWS requests.
func perDelivery(t *testing.T, what string, calls *testenv.Calls) {
	t.Logf("write units per delivery%s: %g", what, calls.WriteUnits())
	t.Logf("read units per delivery%s: %g", what, calls.ReadUnits())
	t.Logf("calls per delivery%s: %d", what, calls.Total())
}
