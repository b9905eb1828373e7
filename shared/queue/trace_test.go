package queue_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
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
// trace (without Lineage) in its body and as its AWSTraceHeader system
// attribute with the sender's Lineage, so the deliver invocation it starts
// is linked to the sender's trace; a message that has a trace keeps it (a
// retry the worker sends again stays in the event's trace) with the
// current sender's Lineage; an untraced send (make dev) carries none.
func TestSendCarriesTrace(t *testing.T) {
	env := testenv.New(t)
	r := &recorded{SQS: env.SQS, traces: map[string]string{}}
	q := queue.New(r, env.Queues.Delivery, env.Queues.DLQ)
	ingest := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	event := "Root=1-5759e988-000000000000000000000002;Parent=0000000000000002;Sampled=1"
	//lint:ignore SA1029 the runtime's own key: aws-lambda-go sets it as this plain string
	traced := context.WithValue(ctx, "x-amzn-trace-id", ingest+";Lineage=a87bd80c:0") //nolint:staticcheck
	a, b, c := msg(domain.NewID("dlv")), msg(domain.NewID("dlv")), msg(domain.NewID("dlv"))
	b.Trace = event // a retry of another event's delivery, sent by this invocation
	if failed, err := q.SendAll(traced, []queue.Outgoing{{Message: a}, {Message: b}}); err != nil || len(failed) > 0 {
		t.Fatal(failed, err)
	}
	if err := q.Send(ctx, c, 0); err != nil {
		t.Fatal(err)
	}
	if err := q.DeadLetterRaw(traced, "not json", "malformed"); err != nil {
		t.Fatal(err)
	}
	sentA, sentB := a, b
	sentA.Trace = ingest
	want := map[string]string{
		sentA.Encode(): ingest + ";Lineage=a87bd80c:0",
		sentB.Encode(): event + ";Lineage=a87bd80c:0",
		c.Encode():     "",
		"not json":     ingest + ";Lineage=a87bd80c:0",
	}
	for body, h := range want {
		if got, ok := r.traces[body]; !ok || got != h {
			t.Errorf("%s: AWSTraceHeader %q (sent: %v), want %q; sent %v", body, got, ok, h, r.traces)
		}
	}
	// The worker's per-message context (obs.WithTraceHeader(ctx, msg.Trace))
	// re-sends in the event's trace with the invocation's Lineage.
	d := msg(domain.NewID("dlv"))
	//lint:ignore SA1029 the runtime's own key: aws-lambda-go sets it as this plain string
	perMessage := obs.WithTraceHeader(context.WithValue(ctx, "x-amzn-trace-id", "Root=1-5759e988-000000000000000000000009;Parent=0000000000000009;Sampled=1;Lineage=a87bd80c:3"), event) //nolint:staticcheck
	if err := q.Send(perMessage, d, 0); err != nil {
		t.Fatal(err)
	}
	sentD := d
	sentD.Trace = event
	if got := r.traces[sentD.Encode()]; got != event+";Lineage=a87bd80c:3" {
		t.Errorf("per-message context: AWSTraceHeader %q", got)
	}
	// SQS took them, and the body's trace reads back as it was sent.
	res, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(env.Queues.Delivery), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil || len(res.Messages) == 0 {
		t.Fatalf("received %v, %v", res, err)
	}
	for _, m := range res.Messages {
		d, err := queue.Decode(aws.ToString(m.Body))
		if err != nil {
			t.Fatal(err)
		}
		if want, ok := map[string]string{a.DeliveryID: ingest, b.DeliveryID: event, c.DeliveryID: ""}[d.DeliveryID]; ok && d.Trace != want {
			t.Errorf("%s: body trace %q, want %q", d.DeliveryID, d.Trace, want)
		}
	}
}
