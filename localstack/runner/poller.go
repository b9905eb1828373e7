package runner

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS is what the poller calls.
type SQS interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// Poller does what the Lambda SQS event source mapping does: long-polls the
// queue, invokes the handler with batches of up to 10, and deletes the
// messages the handler did not report as batch item failures (all of them
// stay when the invocation fails).
//
// One long poll is waiting at a time, and a batch is received only when an
// invocation is free to take it: the invocations run concurrently, up to
// Concurrency. (One poll loop per invocation was tried first: the SQS
// emulator wakes every waiting long poll for each message sent and all but
// one come back empty, so 32 loops made 24,880 receives for 2,000 messages,
// most of make dev's SQS work; 4 loops still made 930. docs/performance.md.)
type Poller struct {
	SQS         SQS
	QueueURL    string
	QueueARN    string
	Handler     lambda.Handler
	Concurrency int           // concurrent invocations (the mapping's maximum concurrency)
	BatchSize   int32         // at most 10
	Timeout     time.Duration // the function's timeout
	Log         *slog.Logger

	receives, messages atomic.Int64 // ReceiveMessage calls made, messages they returned
}

// Stats are the ReceiveMessage calls made so far and the messages they returned.
func (p *Poller) Stats() (receives, messages int64) { return p.receives.Load(), p.messages.Load() }

// Run polls until ctx ends, then waits for the invocations in flight.
func (p *Poller) Run(ctx context.Context) {
	free := make(chan struct{}, max(p.Concurrency, 1))
	var wg sync.WaitGroup
	for ctx.Err() == nil {
		select {
		case free <- struct{}{}: // an invocation is free
		case <-ctx.Done():
			continue
		}
		msgs, err := p.receive(ctx)
		if err != nil && ctx.Err() == nil {
			p.Log.Warn("poll failed", "error", err)
			sleepCtx(ctx, time.Second)
		}
		if len(msgs) == 0 {
			<-free
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-free; wg.Done() }()
			if err := p.invoke(ctx, msgs); err != nil && ctx.Err() == nil {
				p.Log.Warn("deleting handled messages failed; they return after their visibility timeout", "error", err)
			}
		}()
	}
	wg.Wait()
	p.Log.Info("poller stopped", "receives", p.receives.Load(), "messages", p.messages.Load())
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (p *Poller) receive(ctx context.Context) ([]types.Message, error) {
	out, err := p.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(p.QueueURL), MaxNumberOfMessages: max(min(p.BatchSize, 10), 1), WaitTimeSeconds: 2,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, nil
		}
		return nil, err
	}
	p.receives.Add(1)
	p.messages.Add(int64(len(out.Messages)))
	return out.Messages, nil
}

// invoke hands the handler one batch and deletes what it did not report as failed.
func (p *Poller) invoke(ctx context.Context, msgs []types.Message) error {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		ev.Records = append(ev.Records, toRecord(m, p.QueueARN))
	}
	payload, _ := json.Marshal(ev)
	// The invocation is not cut short by the poller stopping: like Lambda,
	// it runs to the end of its timeout.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Timeout)
	res, err := p.Handler.Invoke(ictx, payload)
	cancel()
	if err != nil {
		p.Log.Error("deliver invocation failed; the batch returns after its visibility timeout", "error", err)
		return nil
	}
	var resp events.SQSEventResponse
	_ = json.Unmarshal(res, &resp)
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var del []types.DeleteMessageBatchRequestEntry
	for _, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(del) == 0 {
		return nil
	}
	_, err = p.SQS.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.QueueURL), Entries: del})
	return err
}

func toRecord(m types.Message, arn string) events.SQSMessage {
	rec := events.SQSMessage{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: map[string]string{}, MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSourceARN: arn, EventSource: "aws:sqs", AWSRegion: "us-east-1",
	}
	for k, v := range m.Attributes {
		rec.Attributes[k] = v
	}
	for k, v := range m.MessageAttributes {
		rec.MessageAttributes[k] = events.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
	}
	return rec
}
