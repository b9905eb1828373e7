package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
)

// An endpoint that has failed without a single success for longer than
// ENDPOINT_DISABLE_AFTER (5 days by default) is disabled on its next
// failure, with the reason on the endpoint, and gets no new deliveries.
func TestEndpointFailingForDaysIsDisabled(t *testing.T) {
	t.Parallel()
	localOnly(t)
	h := start(t, opts{retry: "1h"})
	acct, key := h.account(t)
	_, ep := h.registerReceiver(t, key, always(503))
	sixDaysAgo := time.Now().Add(-6 * 24 * time.Hour).UnixMilli()
	_, err := h.env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(h.env.Table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "ACCT#" + acct}, "sk": &types.AttributeValueMemberS{Value: "EP#" + ep.ID}},
		UpdateExpression:          aws.String("SET failing_since = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberN{Value: strconv.FormatInt(sixDaysAgo, 10)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ev := h.publish(t, key, payout)
	h.waitFor(t, key, ev.Deliveries[0].ID, 15*time.Second, func(d deliveryOut) bool { return len(d.Attempts) == 1 })
	var got struct {
		Disabled bool   `json:"disabled"`
		Reason   string `json:"disabled_reason"`
		Failing  string `json:"failing_since"`
	}
	h.call(t, key, "GET", "/v1/endpoints/"+ep.ID, nil, &got)
	if !got.Disabled || !strings.Contains(got.Reason, "failing") || got.Failing == "" {
		t.Fatalf("endpoint after failing for six days: %+v", got)
	}
	if next := h.publish(t, key, payout); len(next.Deliveries) != 0 {
		t.Fatalf("a disabled endpoint got a new delivery")
	}
	// Enabling it clears the history: the clock starts again.
	got.Reason, got.Failing = "", ""
	h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"disabled": false}, &got)
	if got.Disabled || got.Failing != "" {
		t.Fatalf("after enabling: %+v", got)
	}
}

// What one sweeper run costs: 16 index queries when nothing is stuck (it
// reads no queue: it decides per delivery), plus one conditional write per
// stuck delivery it moves and at most one SQS request (the shards' sends
// made while one is in flight share the next).
func TestSweeperCostPerRun(t *testing.T) {
	t.Parallel()
	localOnly(t)
	h := start(t, opts{sweepGrace: time.Millisecond})
	acct, key := h.account(t)
	rv, ep := h.registerReceiver(t, key, always(200))
	calls := testenv.NewCalls()
	db, q := h.env.CountedClients(calls)
	sweeper := app.New(h.app.Config, db, q, testLog{t}, "sweeper").Sweeper()

	res, err := sweeper.Run(ctx)
	if err != nil || res.Found != 0 {
		t.Fatalf("idle sweep: %+v %v", res, err)
	}
	if got := calls.Snapshot(); got["DynamoDB.Query"] != 16 || len(got) != 1 {
		t.Fatalf("idle sweep calls: %s", calls)
	}
	t.Logf("idle run: %s", calls)

	const stuck = 50
	for i := 0; i < stuck; i++ {
		pendingWithoutMessage(t, h, acct, ep.ID)
	}
	time.Sleep(5 * time.Millisecond)
	calls.Reset()
	res, err = sweeper.Run(ctx)
	if err != nil || res.Found != stuck || res.Requeued != stuck {
		t.Fatalf("sweep: %+v %v", res, err)
	}
	got := calls.Snapshot()
	t.Logf("run with %d stuck: %s", stuck, calls)
	if sends := got["SQS.SendMessageBatch"]; got["DynamoDB.Query"] != 16 || got["DynamoDB.UpdateItem"] != stuck || sends < stuck/10 || sends > stuck ||
		got["SQS.GetQueueAttributes"] != 0 {
		t.Fatalf("calls %s", calls)
	}
	waitCount(t, "swept deliveries", stuck, 30*time.Second, func() int { return len(rv.requests()) })
}
