package queue_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/queue"
)

// receiveAll takes every visible message of url (ids of their deliveries)
// and their receipts.
func receiveAll(t *testing.T, env *testenv.Env, url string) (ids []string, receipts []string) {
	t.Helper()
	for {
		out, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return ids, receipts
		}
		for _, m := range out.Messages {
			var got queue.Message
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &got); err != nil {
				t.Fatal(err)
			}
			ids, receipts = append(ids, got.DeliveryID), append(receipts, aws.ToString(m.ReceiptHandle))
		}
	}
}

// A message on the slow lane goes to the slow lane's queue, one on the
// paced lane to the paced lane's, the others to the delivery queue, in one
// SendAll; without those lanes, all go to the delivery queue.
func TestSendAllSortsMessagesByLane(t *testing.T) {
	env := testenv.New(t)
	q := queue.New(env.SQS, env.Queues.Delivery, env.Queues.DLQ).WithSlowLane(env.Queues.Slow).WithPacedLane(env.Queues.Paced)
	var out []queue.Outgoing
	for _, id := range []string{"dlv_f1", "dlv_s1", "dlv_p1", "dlv_f2", "dlv_s2"} {
		m := msg(id)
		switch id[4] {
		case 's':
			m.Lane = queue.LaneSlow
		case 'p':
			m.Lane = queue.LanePaced
		}
		out = append(out, queue.Outgoing{Message: m})
	}
	if failed, err := q.SendAll(ctx, out); err != nil || len(failed) > 0 {
		t.Fatalf("failed %v: %v", failed, err)
	}
	fast, _ := receiveAll(t, env, env.Queues.Delivery)
	pacedIDs, _ := receiveAll(t, env, env.Queues.Paced)
	slow, receipts := receiveAll(t, env, env.Queues.Slow)
	if len(fast) != 2 || len(slow) != 2 || fast[0][4] != 'f' || fast[1][4] != 'f' || slow[0][4] != 's' || slow[1][4] != 's' {
		t.Fatalf("delivery queue %v, slow lane %v", fast, slow)
	}
	if len(pacedIDs) != 1 || pacedIDs[0] != "dlv_p1" {
		t.Fatalf("paced lane %v", pacedIDs)
	}
	// A receipt is good only on its own queue: Hide finds it by the
	// record's EventSourceARN.
	arn := "arn:aws:sqs:us-east-1:000000000000:" + env.Queues.Slow[strings.LastIndex(env.Queues.Slow, "/")+1:]
	if err := q.Hide(ctx, arn, receipts[0], time.Second); err != nil {
		t.Fatalf("hiding a slow lane message: %v", err)
	}

	one := queue.New(env.SQS, env.Queues.Delivery, env.Queues.DLQ)
	m, p := msg("dlv_s3"), msg("dlv_p3")
	m.Lane, p.Lane = queue.LaneSlow, queue.LanePaced
	if _, err := one.SendAll(ctx, []queue.Outgoing{{Message: m}, {Message: p}}); err != nil {
		t.Fatal(err)
	}
	if fast, _ := receiveAll(t, env, env.Queues.Delivery); len(fast) != 2 {
		t.Fatalf("one lane: the delivery queue got %v", fast)
	}
}
