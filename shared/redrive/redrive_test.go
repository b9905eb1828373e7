package redrive

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// oneMessageDLQ hands out one message once, then nothing.
type oneMessageDLQ struct {
	body    string
	given   bool
	deleted int
}

func (q *oneMessageDLQ) ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	if q.given {
		return &sqs.ReceiveMessageOutput{}, nil
	}
	q.given = true
	return &sqs.ReceiveMessageOutput{Messages: []types.Message{{MessageId: aws.String("m1"), ReceiptHandle: aws.String("r1"), Body: aws.String(q.body)}}}, nil
}

func (q *oneMessageDLQ) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	q.deleted += len(in.Entries)
	return &sqs.DeleteMessageBatchOutput{}, nil
}

func (q *oneMessageDLQ) ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

type restartCounter struct{ restarts int }

func (s *restartCounter) Restart(context.Context, string, string, int) (domain.Delivery, error) {
	s.restarts++
	return domain.Delivery{}, store.ErrConflict
}
func (s *restartCounter) GetDelivery(context.Context, string) (domain.Delivery, error) {
	return domain.Delivery{Status: domain.StatusDelivered}, nil
}

type sentMessages struct{ sent []queue.Message }

func (q *sentMessages) Send(_ context.Context, m queue.Message, _ time.Duration) error {
	q.sent = append(q.sent, m)
	return nil
}

// A resend message SQS gave up on (maxReceiveCount) is redriven as
// itself, one manual attempt under its id, not as a fresh automatic series.
func TestPoisonedResendIsRedrivenAsItself(t *testing.T) {
	resend := queue.Message{Kind: queue.KindResend, DeliveryID: domain.NewID("dlv"), EventID: domain.NewID("evt"),
		EndpointID: domain.NewID("ep"), AccountID: domain.NewID("acct"), Gen: 2, AttemptID: domain.NewID("att")}
	dlq, st, q := &oneMessageDLQ{body: resend.Encode()}, &restartCounter{}, &sentMessages{}
	r := &Redriver{SQS: dlq, DLQURL: "dlq", Store: st, Queue: q, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Metrics: obs.NewMetrics(io.Discard, false, "t", "t")}
	res, err := r.Handle(context.Background(), Request{Reason: ReasonPoison})
	if err != nil {
		t.Fatal(err)
	}
	if st.restarts != 0 {
		t.Errorf("a poisoned resend restarted the delivery's automatic series %d times", st.restarts)
	}
	if res.Moved != 1 || len(q.sent) != 1 || !reflect.DeepEqual(q.sent[0], resend) || dlq.deleted != 1 {
		t.Fatalf("moved %d, sent %+v, deleted %d; want the resend message back as it was", res.Moved, q.sent, dlq.deleted)
	}
}

// goneStore is a table where the delivery is gone (its TTL passed).
type goneStore struct{ restartCounter }

func (s *goneStore) Restart(context.Context, string, string, int) (domain.Delivery, error) {
	s.restarts++
	return domain.Delivery{}, store.ErrNotFound
}

// A DLQ message of a delivery that is gone is counted as gone, not moved,
// not stale: nothing was restarted.
func TestADeadLetterOfAGoneDeliveryIsCountedGone(t *testing.T) {
	dead := queue.Message{Kind: queue.KindDeadLetter, DeliveryID: domain.NewID("dlv"), EventID: domain.NewID("evt"),
		EndpointID: domain.NewID("ep"), AccountID: domain.NewID("acct"), Gen: 2, Reason: domain.ReasonExhausted}
	dlq, st, q := &oneMessageDLQ{body: dead.Encode()}, &goneStore{}, &sentMessages{}
	r := &Redriver{SQS: dlq, DLQURL: "dlq", Store: st, Queue: q, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Metrics: obs.NewMetrics(io.Discard, false, "t", "t")}
	res, err := r.Handle(context.Background(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gone != 1 || res.Moved != 0 || res.Stale != 0 || len(q.sent) != 0 {
		t.Fatalf("%+v, sent %d: want it counted gone, nothing restarted", res, len(q.sent))
	}
}
