package runner_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/runner"
	"github.com/gifq/webhooks/localstack/testenv"
)

// The stream poller hands the table's changes over in order, reads a batch
// the handler failed again, and skips it after MaxRetries so that a poison
// batch cannot stall the shard: the next change still arrives.
func TestStreamPollerRetriesThenSkipsAPoisonBatch(t *testing.T) {
	env := testenv.NewWithStream(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	arn, err := emulator.TableStream(ctx, env.DB, env.Table)
	if err != nil || arn == "" {
		t.Fatalf("stream %q: %v", arn, err)
	}
	var mu sync.Mutex
	calls := map[string]int{}
	var order []string
	p := &runner.StreamPoller{Streams: emulator.StreamsClient(env.DynamoURL), StreamARN: arn, BatchSize: 1, Every: 20 * time.Millisecond,
		MaxRetries: 2, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Apply: func(_ context.Context, rs []st.Record) error {
			mu.Lock()
			defer mu.Unlock()
			sk := rs[0].Dynamodb.Keys["sk"].(*st.AttributeValueMemberS).Value
			calls[sk]++
			if sk == "poison" {
				return errors.New("refused")
			}
			order = append(order, sk)
			return nil
		}}
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	time.Sleep(200 * time.Millisecond) // it starts at the shard's latest record
	for _, sk := range []string{"a", "poison", "b"} {
		if _, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table),
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "X"}, "sk": &types.AttributeValueMemberS{Value: sk}}}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), order...)
		poison := calls["poison"]
		mu.Unlock()
		if len(got) == 2 {
			if got[0] != "a" || got[1] != "b" || poison != 3 {
				t.Fatalf("handled %v, poison tried %d times; want [a b] and 3 (1 + 2 retries)", got, poison)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handled %v, poison tried %d times", got, poison)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
}
