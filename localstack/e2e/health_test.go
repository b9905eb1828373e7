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
	"github.com/gifq/webhooks/shared/cost"
	"github.com/gifq/webhooks/shared/domain"
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

// What one sweeper run costs: its marks read and written and 16 index
// queries when nothing came due (it reads no queue: it decides per
// delivery), one read of the deliveries of each shard holding any, one
// conditional write per stuck delivery it moves and at most one SQS
// request (the shards' sends made while one is in flight share the next);
// and a delivery delivered as usual costs the sweeper half a read unit,
// once (cost.SweepDeliveryRead), and no write.
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
	// The shards' marks read and written, one query a shard, no delivery read.
	if got := calls.Snapshot(); got["DynamoDB.Query"] != 16 || got["DynamoDB.GetItem"] != 1 || got["DynamoDB.UpdateItem"] != 1 || len(got) != 3 {
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
	// Per shard holding any, one read of its deliveries; a re-queue each,
	// and the marks.
	if sends := got["SQS.SendMessageBatch"]; got["DynamoDB.Query"] != 16 || got["DynamoDB.BatchGetItem"] > 16 || got["DynamoDB.UpdateItem"] != stuck+1 ||
		sends < stuck/10 || sends > stuck || got["SQS.GetQueueAttributes"] != 0 {
		t.Fatalf("calls %s", calls)
	}
	waitCount(t, "swept deliveries", stuck, 30*time.Second, func() int { return len(rv.requests()) })

	// Delivered deliveries, read by the run whose window passes them.
	if _, err := sweeper.Run(ctx); err != nil { // the re-queued ones' entries, moved to the re-queue
		t.Fatal(err)
	}
	calls.Reset()
	if _, err := sweeper.Run(ctx); err != nil {
		t.Fatal(err)
	}
	idle := calls.ReadUnits()
	const delivered = 20
	var ids []string
	for _, ev := range h.publishMany(t, key, delivered) {
		ids = append(ids, ev.Deliveries[0].ID)
	}
	waitCount(t, "delivered", stuck+delivered, 60*time.Second, func() int { return len(rv.requests()) })
	waitCount(t, "recorded delivered", delivered, 30*time.Second, func() int {
		n := 0
		for _, id := range ids {
			if d, err := h.store.GetDelivery(ctx, id); err == nil && d.Status == domain.StatusDelivered {
				n++
			}
		}
		return n
	})
	time.Sleep(5 * time.Millisecond)
	calls.Reset()
	res, err = sweeper.Run(ctx)
	if err != nil || res.Found != 0 {
		t.Fatalf("a run over delivered deliveries: %+v %v", res, err)
	}
	perDelivery := (calls.ReadUnits() - idle) / delivered
	t.Logf("sweeper read units per delivered delivery: %.3f (%s)", perDelivery, calls)
	if got := calls.Snapshot(); got["DynamoDB.UpdateItem"] != 1 || perDelivery > cost.SweepDeliveryRead+0.05 {
		t.Fatalf("a run over %d delivered deliveries: %s, %.3f read units each, want the marks' write only and at most %g",
			delivered, calls, perDelivery, cost.SweepDeliveryRead+0.05)
	}
}
