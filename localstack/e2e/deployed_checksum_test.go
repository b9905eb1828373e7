package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Real DynamoDB signs every answer's body with X-Amz-Crc32, and the SDK
// checks it when it closes the body, logging a warning on a mismatch. The
// stack's DynamoDB (moto behind localstack/plugin) must do the same, or
// every call of the deployed functions logs a false warning and the check
// proves nothing: each answer here carries the header and the SDK finds no
// mismatch.
func TestDeployedDynamoDBAnswersCarryTheirChecksum(t *testing.T) {
	deployedOnly(t)
	var mu sync.Mutex
	var warnings, missing []string
	answers := 0
	logger := logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, fmt.Sprintf(string(c)+" "+format, v...))
	})
	seeHeader := middleware.DeserializeMiddlewareFunc("SeeCRC32", func(ctx context.Context, in middleware.DeserializeInput,
		next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleDeserialize(ctx, in)
		if resp, ok := out.RawResponse.(*smithyhttp.Response); ok {
			mu.Lock()
			answers++
			if resp.Header.Get("X-Amz-Crc32") == "" {
				missing = append(missing, fmt.Sprintf("%s %d", middleware.GetOperationName(ctx), resp.StatusCode))
			}
			mu.Unlock()
		}
		return out, md, err
	})
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error { return s.Deserialize.Add(seeHeader, middleware.After) })
	})
	table := aws.String(os.Getenv("E2E_TABLE_NAME"))
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "checksum-test"}, "sk": &types.AttributeValueMemberS{Value: "none"}}
	if _, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: table}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": key["pk"]}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if answers != 3 {
		t.Fatalf("%d answers seen, want 3", answers)
	}
	if len(missing) > 0 {
		t.Errorf("answers without X-Amz-Crc32: %v", missing)
	}
	for _, w := range warnings {
		if strings.Contains(w, "checksum") {
			t.Errorf("the SDK logged: %s", w)
		}
	}
}

// A cancelled TransactWriteItems changes nothing: localstack/plugin keeps
// its undo as copies of the items it names (moto's copy of the whole table,
// made for every transaction under the one lock, came to most of
// LocalStack's CPU over the suite). A put, an update and a delete are undone
// when a condition of the same transaction fails; without one they apply.
func TestDeployedDynamoDBUndoesACancelledTransaction(t *testing.T) {
	deployedOnly(t)
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, table := dynamodb.NewFromConfig(cfg), aws.String(os.Getenv("E2E_TABLE_NAME"))
	run := fmt.Sprintf("undo-test-%d", time.Now().UnixNano())
	key := func(name string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: run + "-" + name}, "sk": &types.AttributeValueMemberS{Value: "x"}}
	}
	item := func(name, v string) map[string]types.AttributeValue {
		it := key(name)
		it["v"] = &types.AttributeValueMemberS{Value: v}
		return it
	}
	for _, name := range []string{"updated", "deleted", "checked"} {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item(name, "before")}); err != nil {
			t.Fatal(err)
		}
	}
	writes := []types.TransactWriteItem{
		{Put: &types.Put{TableName: table, Item: item("put", "new")}},
		{Update: &types.Update{TableName: table, Key: key("updated"), UpdateExpression: aws.String("SET v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberS{Value: "after"}}}},
		{Delete: &types.Delete{TableName: table, Key: key("deleted")}},
	}
	state := func() string {
		var got []string
		for _, name := range []string{"put", "updated", "deleted", "checked"} {
			out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key(name), ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			v := "false" // no item
			if s, ok := out.Item["v"].(*types.AttributeValueMemberS); ok {
				v = s.Value
			}
			got = append(got, name+"="+v)
		}
		return strings.Join(got, " ")
	}
	failing := append(writes, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: table, Key: key("checked"),
		ConditionExpression: aws.String("attribute_not_exists(pk)")}})
	var cancelled *types.TransactionCanceledException
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: failing}); !errors.As(err, &cancelled) {
		t.Fatalf("a transaction whose condition fails: %v, want it cancelled", err)
	}
	if got, want := state(), "put=false updated=before deleted=before checked=before"; got != want {
		t.Fatalf("after the cancelled transaction: %s, want %s", got, want)
	}
	if _, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: writes}); err != nil {
		t.Fatal(err)
	}
	if got, want := state(), "put=new updated=after deleted=false checked=before"; got != want {
		t.Fatalf("after the transaction: %s, want %s", got, want)
	}
}
