package queue

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS is the part of the SQS client the queue uses.
type SQS interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// Limits SQS sets.
const (
	MaxDelay      = 15 * time.Minute // DelaySeconds
	MaxVisibility = 12 * time.Hour   // from the receive
	batchSize     = 10
)

// Queue sends to the delivery queue and the DLQ.
type Queue struct {
	sqs    SQS
	url    *string
	dlqURL *string
}

// New returns a Queue.
func New(client SQS, url, dlqURL string) *Queue {
	return &Queue{sqs: client, url: aws.String(url), dlqURL: aws.String(dlqURL)}
}

// Outgoing is a message to send after a delay.
type Outgoing struct {
	Message Message
	Delay   time.Duration
}

// Send puts one message on the delivery queue, visible after delay (at most 15 min).
func (q *Queue) Send(ctx context.Context, m Message, delay time.Duration) error {
	_, err := q.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.url, MessageBody: aws.String(m.Encode()), DelaySeconds: delaySeconds(delay)})
	return err
}

// SendAll puts messages on the delivery queue, ten to a request. It returns
// the indexes of the messages SQS did not take, with the first error.
func (q *Queue) SendAll(ctx context.Context, msgs []Outgoing) (failed []int, err error) {
	for start := 0; start < len(msgs); start += batchSize {
		end := min(start+batchSize, len(msgs))
		entries := make([]types.SendMessageBatchRequestEntry, 0, end-start)
		for i := start; i < end; i++ {
			entries = append(entries, types.SendMessageBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(msgs[i].Message.Encode()),
				DelaySeconds: delaySeconds(msgs[i].Delay),
			})
		}
		out, sendErr := q.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: q.url, Entries: entries})
		if sendErr != nil {
			for i := start; i < end; i++ {
				failed = append(failed, i)
			}
			if err == nil {
				err = sendErr
			}
			continue
		}
		for _, f := range out.Failed {
			i, _ := strconv.Atoi(aws.ToString(f.Id))
			failed = append(failed, i)
			if err == nil {
				err = fmt.Errorf("sqs refused message: %s %s", aws.ToString(f.Code), aws.ToString(f.Message))
			}
		}
	}
	return failed, err
}

// Hide makes a received message invisible for d (rounded up to whole
// seconds, at most 12 h): with the message reported as a batch failure,
// this is how a retry waits.
func (q *Queue) Hide(ctx context.Context, receipt string, d time.Duration) error {
	secs := int32(math.Ceil(min(d, MaxVisibility).Seconds()))
	_, err := q.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: q.url, ReceiptHandle: aws.String(receipt), VisibilityTimeout: max(secs, 0),
	})
	return err
}

// DeadLetter sends m to the DLQ, with its reason also as message attributes
// so the console can show it.
func (q *Queue) DeadLetter(ctx context.Context, m Message) error {
	return q.deadLetter(ctx, m.Encode(), string(m.Reason), m.DeliveryID)
}

// DeadLetterRaw moves a body we cannot read to the DLQ as it is.
func (q *Queue) DeadLetterRaw(ctx context.Context, body, reason string) error {
	return q.deadLetter(ctx, body, reason, "")
}

func (q *Queue) deadLetter(ctx context.Context, body, reason, deliveryID string) error {
	attrs := map[string]types.MessageAttributeValue{
		"reason": {DataType: aws.String("String"), StringValue: aws.String(reason)},
	}
	if deliveryID != "" {
		attrs["delivery_id"] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(deliveryID)}
	}
	_, err := q.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.dlqURL, MessageBody: aws.String(body), MessageAttributes: attrs})
	return err
}

func delaySeconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	return int32(math.Ceil(min(d, MaxDelay).Seconds()))
}
