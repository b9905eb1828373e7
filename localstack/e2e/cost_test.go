package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
)

// The AWS calls one delivery costs, counted by SDK middleware on the app's
// own clients (the test's setup and polling use other clients). The counts
// are exact: a change that adds a round trip to the hot path fails here.
func TestAWSCallsPerDelivery(t *testing.T) {
	localOnly(t)
	calls := testenv.NewCalls()
	h := start(t, opts{calls: calls})
	_, key := h.account(t)
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
	ev := h.publish(t, key, payout)
	waitStatus(ev.Deliveries[0].ID, domain.StatusDelivered)
	got := calls.Snapshot()
	t.Logf("first-attempt success: %s", calls)
	want := map[string]int{
		// ingest (api function); the key's account and ingest limit are cached (no GetItem,
		// no BatchGetItem) after the first event; UpdateItem: the account's delivery rate
		// limiter and the key's ingest limiter (concurrent with the Query)
		"DynamoDB.Query": 1, "DynamoDB.UpdateItem": 2, "SQS.SendMessageBatch": 1,
		// ingest 1 + claim 1 + record 1
		"DynamoDB.TransactWriteItems": 3,
		// deliver function (and the event source mapping's receive and delete)
		"DynamoDB.BatchGetItem": 1, "SQS.ReceiveMessage": 1, "SQS.DeleteMessageBatch": 1,
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
		sizes[kind] = max(sizes[kind], testenv.ItemSize(it))
	}
	t.Logf("largest item of each kind, bytes (event body %d): %v", len(payout), sizes)

	// The same with one retry (500 then 200): what one retried attempt adds.
	fail = true
	calls.Reset()
	ev = h.publish(t, key, payout)
	waitStatus(ev.Deliveries[0].ID, domain.StatusDelivered)
	retried := calls.Snapshot()
	t.Logf("with one retry: %s", calls)
	extra := map[string]int{
		// the retry's wait is a delayed copy of the message (issue 11), and the
		// received copy is deleted: never a ChangeMessageVisibility
		"SQS.SendMessage": 1, "SQS.DeleteMessageBatch": 1, "SQS.ReceiveMessage": 1, "DynamoDB.BatchGetItem": 1,
		"DynamoDB.UpdateItem":         1, // the retry reserves its own rate-limit slot
		"DynamoDB.TransactWriteItems": 2,
	}
	for op, n := range extra {
		if retried[op]-got[op] != n {
			t.Errorf("a retry adds %d %s, want %d", retried[op]-got[op], op, n)
		}
	}
	if n := retried["SQS.ChangeMessageVisibility"]; n != 0 {
		t.Errorf("a retry asked for %d visibility changes, want none", n)
	}
}
