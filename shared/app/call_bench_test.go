//go:build emulators

package app_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
)

// The garbage collector runs as in the functions; the emulators start only
// for a benchmark run (testenv.BenchMain).
func TestMain(m *testing.M) {
	app.TuneGC(os.Getenv) // the garbage collector as the functions run it
	testenv.BenchMain(m)
}

// BenchmarkAWSCall is what one AWS call costs this process: its CPU (user and
// system, getrusage) per call, cpu-µs/op, with eight calls in flight as in a
// busy make dev or deliver batch, against the emulators. "sdk" is the call
// the functions make, through the SDK and app.AWSHTTPClient; "http" sends the
// same request's bytes through the same HTTP client without the SDK (no
// middleware, no signing, the answer read but not decoded). Their difference
// is the SDK's work per call; "http" is net/http's and the loopback's. A
// call's cost times a delivery's calls is a floor under the CPU per
// delivery that only fewer calls can lower (docs/performance.md, "Our CPU
// per delivery").
func BenchmarkAWSCall(b *testing.B) {
	ctx := context.Background()
	env := testenv.New(b)
	item := map[string]types.AttributeValue{ // a delivery's size
		"pk": &types.AttributeValueMemberS{Value: "DLV#dlv_2Qx7bench"}, "sk": &types.AttributeValueMemberS{Value: "DLV"},
		"status": &types.AttributeValueMemberS{Value: "pending"}, "gen": &types.AttributeValueMemberN{Value: "1"},
		"endpoint_id": &types.AttributeValueMemberS{Value: "ep_2Qx7bench"}, "event_id": &types.AttributeValueMemberS{Value: "evt_2Qx7bench"},
		"event_type": &types.AttributeValueMemberS{Value: "payout.fulfilled"}, "attempts": &types.AttributeValueMemberN{Value: "0"},
	}
	if _, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: item}); err != nil {
		b.Fatal(err)
	}
	get := &dynamodb.GetItemInput{TableName: aws.String(env.Table), Key: map[string]types.AttributeValue{
		"pk": item["pk"], "sk": item["sk"]}}

	b.Run("GetItem/sdk", func(b *testing.B) {
		perCall(b, func() error {
			out, err := env.DB.GetItem(ctx, get)
			if err == nil && out.Item["status"] == nil {
				err = fmt.Errorf("no item: %v", out.Item)
			}
			return err
		})
	})
	b.Run("GetItem/http", func(b *testing.B) {
		body := []byte(fmt.Sprintf(`{"TableName":%q,"Key":{"pk":{"S":"DLV#dlv_2Qx7bench"},"sk":{"S":"DLV"}}}`, env.Table))
		client := app.AWSHTTPClient()
		perCall(b, func() error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, env.DynamoURL, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", "DynamoDB_20120810.GetItem")
			req.Header.Set("X-Amz-Date", "20261202T000000Z")
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20261202/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && (resp.StatusCode != http.StatusOK || !bytes.Contains(got, []byte(`"pending"`))) {
				err = fmt.Errorf("%d %s", resp.StatusCode, got)
			}
			return err
		})
	})
	b.Run("SendMessageBatch/sdk", func(b *testing.B) { // queue.Send: a one-message batch
		perCall(b, func() error {
			out, err := env.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(env.Queues.Delivery),
				Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("0"), MessageBody: aws.String(`{"delivery_id":"dlv_2Qx7bench","gen":1}`)}}})
			if err == nil && len(out.Successful) != 1 {
				err = fmt.Errorf("not sent: %+v", out.Failed)
			}
			return err
		})
	})
}

// perCall runs call b.N times, eight at a time, and reports this process's
// CPU per call.
func perCall(b *testing.B, call func() error) {
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ReportAllocs()
	start := testenv.CPUTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := call(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(testenv.CPUTime()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}
