package runner

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
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
type Poller struct {
	SQS         SQS
	QueueURL    string
	QueueARN    string
	Handler     lambda.Handler
	Concurrency int           // concurrent invocations (the mapping's maximum concurrency)
	BatchSize   int32         // at most 10
	Timeout     time.Duration // the function's timeout
	Log         *slog.Logger
}

// Run polls until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := 0; i < max(p.Concurrency, 1); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := p.pollOnce(ctx); err != nil && ctx.Err() == nil {
					p.Log.Warn("poll failed", "error", err)
					time.Sleep(time.Second)
				}
			}
		}()
	}
	wg.Wait()
}

func (p *Poller) pollOnce(ctx context.Context) error {
	out, err := p.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(p.QueueURL), MaxNumberOfMessages: max(min(p.BatchSize, 10), 1), WaitTimeSeconds: 2,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	if len(out.Messages) == 0 {
		return nil
	}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(out.Messages))}
	for _, m := range out.Messages {
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
	for _, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(del) > 0 {
		_, err = p.SQS.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.QueueURL), Entries: del})
	}
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
