package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/queue"
)

// takeDeadLetter receives the stack's DLQ until it finds the dead letter of
// delivery id, deletes it and returns its body; every other message is made
// visible again at once (other tests read the DLQ too).
func takeDeadLetter(t *testing.T, h *harness, id string) string {
	t.Helper()
	dlqMu.Lock()
	defer dlqMu.Unlock()
	deadline := time.Now().Add(30 * time.Second * time.Duration(h.slower))
	for time.Now().Before(deadline) {
		res, err := h.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(h.dlqURL), MaxNumberOfMessages: 10, VisibilityTimeout: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		var body string
		for _, m := range res.Messages {
			if msg, err := queue.Decode(aws.ToString(m.Body)); err == nil && msg.DeliveryID == id && body == "" {
				body = aws.ToString(m.Body)
				if _, err := h.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(h.dlqURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			_, _ = h.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(h.dlqURL), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
		}
		if body != "" {
			return body
		}
	}
	t.Fatalf("no dead letter for %s in the DLQ", id)
	return ""
}

func queueArn(t *testing.T, h *harness, url string) string {
	t.Helper()
	out, err := h.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes[string(types.QueueAttributeNameQueueArn)]
}

// The runbook's first redrive is the SQS console's "Start DLQ
// redrive -> Redrive to a custom destination" with the stack's
// DeliveryQueueArn output ("redrive to source" fails: the app writes its
// dead letters with SendMessage, so SQS recorded no source). That console
// action is SQS's StartMessageMoveTask with a DestinationArn. Here a dead
// letter of the deployed stack is moved that way into the delivery queue
// and the deliver function gives the delivery a fresh series, delivered.
// The move runs from a DLQ of this test's own (a task moves a whole queue,
// and the stack's DLQ holds the other tests' dead letters too).
func TestDeployedMoveTaskToTheDeliveryQueueRestartsTheDelivery(t *testing.T) {
	deployedOnly(t)
	h := start(t, opts{})
	_, key := h.account(t)
	var fixed atomic.Bool
	_, _ = h.registerReceiver(t, key, func(int, http.ResponseWriter, *http.Request) (int, string) {
		if fixed.Load() {
			return 200, ""
		}
		return 404, ""
	})
	ev := h.publish(t, key, payout)
	id := ev.Deliveries[0].ID
	if d := h.waitFor(t, key, id, 30*time.Second, settled); d.Status != "failed" {
		t.Fatalf("delivery %+v, want failed", d)
	}
	body := takeDeadLetter(t, h, id)

	// A DLQ of this test's own, holding that dead letter (StartMessageMoveTask
	// takes a queue that is some queue's dead-letter target).
	name := fmt.Sprintf("e2e-move-%d", time.Now().UnixNano())
	dlq, err := h.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	dlqArn := queueArn(t, h, aws.ToString(dlq.QueueUrl))
	policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqArn, "maxReceiveCount": 5})
	src, err := h.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
		Attributes: map[string]string{string(types.QueueAttributeNameRedrivePolicy): string(policy)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = h.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: src.QueueUrl})
		_, _ = h.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: dlq.QueueUrl})
	})
	if _, err := h.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: dlq.QueueUrl, MessageBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}

	fixed.Store(true)
	if _, err := h.sqs.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqArn),
		DestinationArn: aws.String(queueArn(t, h, h.queueURL))}); err != nil {
		t.Fatalf("StartMessageMoveTask to the delivery queue: %v", err)
	}
	d := h.waitFor(t, key, id, 60*time.Second, func(d deliveryOut) bool { return d.Series == 2 && settled(d) })
	if d.Status != "delivered" {
		t.Fatalf("the moved dead letter's delivery: %+v, want delivered in series 2", d)
	}
	t.Logf("moved to the delivery queue: delivery %s delivered in series %d", id, d.Series)
}
