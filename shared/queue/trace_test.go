package queue_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
)

// recorded passes every call to the emulator and keeps each message's
// AWSTraceHeader as sent, by body. (The SQS emulator, fauxqs, drops system
// attributes, so the request is where the attribute is seen; SQS keeps it
// and Lambda hands it to the deliver invocation.)
type recorded struct {
	queue.SQS
	mu     sync.Mutex
	traces map[string]string
}

func header(a map[string]types.MessageSystemAttributeValue) string {
	return aws.ToString(a[string(types.MessageSystemAttributeNameForSendsAWSTraceHeader)].StringValue)
}

func (r *recorded) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	r.mu.Lock()
	for _, e := range in.Entries {
		r.traces[aws.ToString(e.MessageBody)] = header(e.MessageSystemAttributes)
	}
	r.mu.Unlock()
	return r.SQS.SendMessageBatch(ctx, in, o...)
}

func (r *recorded) SendMessage(ctx context.Context, in *sqs.SendMessageInput, o ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	r.mu.Lock()
	r.traces[aws.ToString(in.MessageBody)] = header(in.MessageSystemAttributes)
	r.mu.Unlock()
	return r.SQS.SendMessage(ctx, in, o...)
}

// TestSendCarriesTrace: a message sent under a traced context carries the
// trace header as its AWSTraceHeader system attribute, so the deliver
// invocation it starts joins the sender's trace; a message with a trace of
// its own keeps it, and an untraced send (make dev) carries none.
func TestSendCarriesTrace(t *testing.T) {
	env := testenv.New(t)
	r := &recorded{SQS: env.SQS, traces: map[string]string{}}
	q := queue.New(r, env.Queues.Delivery, env.Queues.DLQ)
	ingest := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=a87bd80c:0"
	other := "Root=1-5759e988-000000000000000000000002;Parent=0000000000000002;Sampled=1"
	traced := obs.WithTraceHeader(ctx, ingest)
	a, b, c := msg("dlv_a"), msg("dlv_b"), msg("dlv_c")
	if failed, err := q.SendAll(traced, []queue.Outgoing{{Message: a}, {Message: b, Trace: other}}); err != nil || len(failed) > 0 {
		t.Fatal(failed, err)
	}
	if err := q.Send(ctx, c, 0); err != nil {
		t.Fatal(err)
	}
	if err := q.DeadLetterRaw(traced, "not json", "malformed"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{a.Encode(): ingest, b.Encode(): other, c.Encode(): "", "not json": ingest}
	for body, h := range want {
		if got, ok := r.traces[body]; !ok || got != h {
			t.Errorf("%s: AWSTraceHeader %q (sent: %v), want %q", body, got, ok, h)
		}
	}
	// SQS took them: the attribute is a valid request.
	res, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(env.Queues.Delivery), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil || len(res.Messages) == 0 {
		t.Fatalf("received %v, %v", res, err)
	}
}
