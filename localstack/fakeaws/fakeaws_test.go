package fakeaws_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	kmstypes "github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/fakeaws"
	"github.com/gifq/webhooks/shared/app"
)

// clients are SDK clients on the fake; the DynamoDB client resolves its
// endpoint as the functions' does (app.CacheDynamoDBEndpoints), and an
// answer the SDK cannot parse fails at once (no retries).
func clients(url string) (*dynamodb.Client, *sqs.Client, *kms.Client) {
	cfg := emulator.Config()
	cfg.RetryMaxAttempts = 1
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = &url }, app.CacheDynamoDBEndpoints),
		sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = &url }),
		kms.NewFromConfig(cfg, func(o *kms.Options) { o.BaseEndpoint = &url })
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

func str(t *testing.T, it map[string]types.AttributeValue, name string) string {
	t.Helper()
	switch v := it[name].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case nil:
		return "<none>"
	}
	t.Fatalf("%s: %T", name, it[name])
	return ""
}

// The SDK's clients parse every answer the deliver path gets from the fake,
// and the fake keeps what was written: puts, updates (SET with arithmetic
// and if_not_exists, REMOVE, ADD), batches and transactions.
func TestTheSDKParsesTheFakesAnswers(t *testing.T) {
	f := fakeaws.New()
	defer f.Close()
	db, q, k := clients(f.URL)
	ctx := context.Background()
	table := aws.String("t")
	key := map[string]types.AttributeValue{"pk": s("DLV#1"), "sk": s("DLV")}

	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		Item: map[string]types.AttributeValue{"pk": s("DLV#1"), "sk": s("DLV"), "status": s("pending"), "attempts": n("0"), "claim": s("x")}}); err != nil {
		t.Fatal(err)
	}
	up, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key,
		UpdateExpression:          aws.String("SET attempts = attempts + :one, #st = :st, throttles = if_not_exists(throttles, :zero) + :one REMOVE claim ADD hits :one"),
		ConditionExpression:       aws.String("#st = :pending"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1"), ":zero": n("0"), ":st": s("delivered"), ":pending": s("pending")},
		ReturnValues:              types.ReturnValueAllNew})
	if err != nil {
		t.Fatal(err)
	}
	if got := [...]string{str(t, up.Attributes, "attempts"), str(t, up.Attributes, "status"), str(t, up.Attributes, "throttles"),
		str(t, up.Attributes, "claim"), str(t, up.Attributes, "hits")}; got != [...]string{"1", "delivered", "1", "<none>", "1"} {
		t.Errorf("updated item: attempts, status, throttles, claim, hits = %v", got)
	}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil || str(t, got.Item, "status") != "delivered" {
		t.Fatalf("GetItem: %v, %v", got, err)
	}
	if miss, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: map[string]types.AttributeValue{"pk": s("none"), "sk": s("DLV")}}); err != nil || miss.Item != nil {
		t.Errorf("GetItem of a missing item: %v, %v", miss.Item, err)
	}

	if _, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": {
		{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"pk": s("EP#1"), "sk": s("EP"), "url": s("http://x")}}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: table, Item: map[string]types.AttributeValue{"pk": s("EV#1"), "sk": s("EV"), "body": s("{}")}}},
		{Update: &types.Update{TableName: table, Key: map[string]types.AttributeValue{"pk": s("EP#1"), "sk": s("EP")},
			UpdateExpression: aws.String("SET gen = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": n("2")}}},
	}}); err != nil {
		t.Fatal(err)
	}
	bg, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: []map[string]types.AttributeValue{
		key, {"pk": s("EP#1"), "sk": s("EP")}, {"pk": s("EV#1"), "sk": s("EV")}, {"pk": s("none"), "sk": s("x")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if items := bg.Responses["t"]; len(items) != 3 {
		t.Errorf("BatchGetItem found %d items, want 3: %v", len(items), items)
	}

	body := `{"delivery_id":"dlv_1","gen":1}`
	if out, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(f.URL + "/q"), MessageBody: aws.String(body)}); err != nil || out.MessageId == nil {
		t.Errorf("SendMessage: %v, %v", out, err) // the SDK checks the answer's MD5 of the body
	}
	if out, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(f.URL + "/q"), Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("0"), MessageBody: aws.String(body)}, {Id: aws.String("1"), MessageBody: aws.String(body + " ")}}}); err != nil || len(out.Successful) != 2 {
		t.Errorf("SendMessageBatch: %v, %v", out, err)
	}
	if out, err := q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(f.URL + "/q"), Entries: []sqstypes.DeleteMessageBatchRequestEntry{
		{Id: aws.String("0"), ReceiptHandle: aws.String("r")}}}); err != nil || len(out.Successful) != 1 {
		t.Errorf("DeleteMessageBatch: %v, %v", out, err)
	}
	if _, err := q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(f.URL + "/q"), ReceiptHandle: aws.String("r")}); err != nil {
		t.Error(err)
	}

	dk, err := k.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String("alias/k"), KeySpec: kmstypes.DataKeySpecAes256})
	if err != nil || len(dk.Plaintext) != 32 {
		t.Fatalf("GenerateDataKey: %v, %v", dk, err)
	}
	dec, err := k.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: dk.CiphertextBlob})
	if err != nil || !bytes.Equal(dec.Plaintext, dk.Plaintext) {
		t.Errorf("Decrypt: %v, %v", dec, err)
	}

	// What is not faked fails as AWS fails, not silently.
	if _, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: table}); err == nil {
		t.Error("Scan: no error from an operation the fake does not have")
	}
	if c := f.Calls(); c["DynamoDB.UpdateItem"] != 1 || c["SQS.SendMessageBatch"] != 1 || c["KMS.Decrypt"] != 1 {
		t.Errorf("calls: %s", f.CallsString())
	}
}

// ServerShare tells the servers' CPU from the caller's: a server that burns
// CPU on each request shows as most of the profile.
func TestServerShare(t *testing.T) {
	if testing.Short() {
		t.Skip("profiles for a second")
	}
	srv := fakeaws.StartServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
		}
	}))
	defer srv.Close()
	share, ok := fakeaws.ServerShare(func() {
		for range 300 {
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}
	})
	if !ok || share < 0.7 || share > 1 {
		t.Errorf("server share %.2f (ok %v), want most of the CPU", share, ok)
	}
}
