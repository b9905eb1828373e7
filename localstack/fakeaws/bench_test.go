package fakeaws_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/fakeaws"
)

// BenchmarkFakeCall is what one SDK call costs this process against the
// fake, one call at a time, through the app's HTTP client (app.AWSHTTPClient,
// as emulator.Config sets) and the functions' endpoint cache: ours-µs/op is the SDK, net/http's client side
// and the runtime; server-µs/op the fake's share (fakeaws.ReportCPU). A
// delivery's calls times ours-µs/op is the part of BenchmarkDelivery that
// only fewer or cheaper calls lower (docs/performance.md "Our CPU per
// delivery"). "GetItem/canned" answers every request with the same bytes
// without reading it: the server's floor, and a check that ours-µs/op does
// not depend on what the server does.
func BenchmarkFakeCall(b *testing.B) {
	ctx := context.Background()
	item := map[string]types.AttributeValue{ // a delivery's size, as BenchmarkAWSCall
		"pk": &types.AttributeValueMemberS{Value: "DLV#dlv_2Qx7bench"}, "sk": &types.AttributeValueMemberS{Value: "DLV"},
		"status": &types.AttributeValueMemberS{Value: "pending"}, "gen": &types.AttributeValueMemberN{Value: "1"},
		"endpoint_id": &types.AttributeValueMemberS{Value: "ep_2Qx7bench"}, "event_id": &types.AttributeValueMemberS{Value: "evt_2Qx7bench"},
		"event_type": &types.AttributeValueMemberS{Value: "payout.fulfilled"}, "attempts": &types.AttributeValueMemberN{Value: "0"},
	}
	key := map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]}
	table := aws.String("gifq-bench")

	f := fakeaws.New()
	defer f.Close()
	db, _, _ := clients(f.URL)
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item}); err != nil {
		b.Fatal(err)
	}
	get := func(db *dynamodb.Client) func() error {
		return func() error {
			out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key, ConsistentRead: aws.Bool(true)})
			if err == nil && out.Item["status"] == nil {
				err = fmt.Errorf("no item: %v", out.Item)
			}
			return err
		}
	}
	b.Run("GetItem", func(b *testing.B) { perCall(b, get(db)) })
	b.Run("UpdateItem", func(b *testing.B) { // a claim's shape: conditional, no return values
		perCall(b, func() error {
			_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key,
				UpdateExpression:          aws.String("SET attempts = attempts + :one, claim = :c, lease_until = :lease, updated_at = :now"),
				ConditionExpression:       aws.String("#st = :pending AND gen = :gen AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
				ExpressionAttributeNames:  map[string]string{"#st": "status"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}, ":c": &types.AttributeValueMemberS{Value: "clm_1"}, ":lease": &types.AttributeValueMemberN{Value: "1764500000000"}, ":now": &types.AttributeValueMemberN{Value: "1764499990000"}, ":pending": &types.AttributeValueMemberS{Value: "pending"}, ":gen": &types.AttributeValueMemberN{Value: "1"}},
			})
			return err
		})
	})

	canned := []byte(`{"Item":{"pk":{"S":"DLV#dlv_2Qx7bench"},"sk":{"S":"DLV"},"status":{"S":"pending"},"gen":{"N":"1"},"endpoint_id":{"S":"ep_2Qx7bench"},"event_id":{"S":"evt_2Qx7bench"},"event_type":{"S":"payout.fulfilled"},"attempts":{"N":"0"}}}`)
	fixed := fakeaws.StartServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write(canned)
	}))
	defer fixed.Close()
	cannedDB, _, _ := clients(fixed.URL)
	b.Run("GetItem/canned", func(b *testing.B) { perCall(b, get(cannedDB)) })
}

func perCall(b *testing.B, call func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	fakeaws.ReportCPU(b, func() {
		for range b.N {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
