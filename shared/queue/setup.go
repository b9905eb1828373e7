package queue

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/schema"
)

// Admin is the part of the client that creates queues.
type Admin interface {
	CreateQueue(context.Context, *sqs.CreateQueueInput, ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// URLs are the queues' addresses.
type URLs struct {
	Delivery, Slow, Paced, DLQ string
}

// DLQAttributes and DeliveryAttributes are schema.Queues as SQS attributes.
func DLQAttributes() map[string]string {
	return map[string]string{"MessageRetentionPeriod": secs(schema.Queues.DLQRetention.Seconds())}
}

// DeliveryAttributes is the delivery queue's attributes, redriving to dlqARN.
func DeliveryAttributes(dlqARN string) map[string]string {
	redrive, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": schema.Queues.MaxReceiveCount})
	return map[string]string{
		"VisibilityTimeout":      secs(schema.Queues.VisibilityTimeout.Seconds()),
		"MessageRetentionPeriod": secs(schema.Queues.Retention.Seconds()),
		"RedrivePolicy":          string(redrive),
	}
}

func secs(f float64) string { return strconv.Itoa(int(f)) }

// CreateQueues creates (or finds) prefix-deliveries, its slow lane
// prefix-deliveries-slow, its paced lane prefix-deliveries-paced and
// prefix-dlq, with the redrive policy from the three to the DLQ.
func CreateQueues(ctx context.Context, c Admin, prefix string) (URLs, error) {
	dlq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-" + schema.Queues.DLQTag), Attributes: DLQAttributes()})
	if err != nil {
		return URLs{}, err
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return URLs{}, err
	}
	urls := URLs{DLQ: aws.ToString(dlq.QueueUrl)}
	for tag, url := range map[string]*string{schema.Queues.DeliveryQueueTag: &urls.Delivery, schema.Queues.SlowQueueTag: &urls.Slow, schema.Queues.PacedQueueTag: &urls.Paced} {
		q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{
			QueueName:  aws.String(prefix + "-" + tag),
			Attributes: DeliveryAttributes(attrs.Attributes[string(types.QueueAttributeNameQueueArn)]),
		})
		if err != nil {
			return URLs{}, err
		}
		*url = aws.ToString(q.QueueUrl)
	}
	return urls, nil
}
