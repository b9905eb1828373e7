package sweep_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
)

// A lost send on a busy deployment: one delivery whose message was lost,
// another account's message visible on the delivery queue at every sweep
// (a busy queue always has one), eight sweeps over two hours. The sweeper
// decides per delivery, so the delivery is re-queued and the real worker
// delivers it with one POST; the copies the sweeps left behind (and a late
// copy of the original send) are stale generations, dropped with no
// second attempt. Deciding from the queue's backlog, it was re-queued 0
// times and ended event_expired weeks later with 0 attempts.
func TestALostSendIsRequeuedAndDeliveredOnABusyQueue(t *testing.T) {
	r := newRig(t)
	var posts atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		posts.Add(1)
	}))
	defer rcv.Close()

	busy := r.deliveries(t, 1)[0] // another account's, its message waiting
	if err := r.q.Send(ctx, queue.For(busy), 0); err != nil {
		t.Fatal(err)
	}
	r.url = rcv.URL
	lost := r.deliveries(t, 1)[0] // its send lost

	start := time.Now()
	requeued := 0
	for sweep := 1; sweep <= 8; sweep++ {
		r.sw.Now = func() time.Time { return start.Add(time.Duration(sweep) * 15 * time.Minute) }
		if r.queued(t) == 0 {
			t.Fatalf("sweep %d: the queue is not busy", sweep)
		}
		res, err := r.sw.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		requeued += res.Requeued
	}
	if requeued == 0 {
		t.Fatal("8 sweeps over 2 h on a busy queue re-queued the lost delivery 0 times")
	}

	cfg := config.Defaults()
	cfg.TableName, cfg.QueueURL, cfg.DLQURL = r.env.Table, r.env.Queues.Delivery, r.env.Queues.DLQ
	cfg.AllowPrivateEndpoints, cfg.AllowedSchemes = true, []string{"http", "https"}
	cfg.Metrics = false
	a := app.New(cfg, r.env.DB, r.env.SQS, io.Discard, "deliver")
	w := a.Worker()
	// Everything on the queue, and a late copy of the lost send (its
	// generation, older than the sweeper's), to the worker as Lambda would.
	late := queue.For(lost)
	if err := r.q.Send(ctx, late, 0); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		out, err := r.env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &r.env.Queues.Delivery,
			MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		var ev events.SQSEvent
		for _, m := range out.Messages {
			var body queue.Message
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &body); err != nil {
				t.Fatal(err)
			}
			if body.DeliveryID != lost.ID {
				continue // the busy account's: not this test's receiver
			}
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), Body: aws.ToString(m.Body),
				ReceiptHandle: aws.ToString(m.ReceiptHandle), Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
			if _, err := r.env.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &r.env.Queues.Delivery, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Handle(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.st.GetDelivery(ctx, lost.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != domain.StatusDelivered || got.Attempts != 1 {
		t.Fatalf("the lost delivery: %s after %d attempts, want delivered after 1", got.Status, got.Attempts)
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("%d POSTs to the lost delivery's endpoint, want 1 (stale copies make no attempt)", n)
	}
}
