package sweep_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/opevents"
)

type heard struct {
	mu     sync.Mutex
	events []opevents.Event
}

func (h *heard) Publish(_ context.Context, events ...opevents.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, events...)
}

// A delivery the sweeper fails and dead-letters (its last attempt was
// claimed and never finished) is stated as delivery.dead_lettered, once.
func TestSweeperStatesItsDeadLetters(t *testing.T) {
	r := newRig(t)
	h := &heard{}
	r.sw.OpEvents = h
	d := r.deliveries(t, 1)[0]
	if _, err := r.env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(r.env.Table), Key: map[string]dbtypes.AttributeValue{
			"pk": &dbtypes.AttributeValueMemberS{Value: "DLV#" + d.ID}, "sk": &dbtypes.AttributeValueMemberS{Value: "DLV"}},
		UpdateExpression:          aws.String("SET attempts = :n"),
		ExpressionAttributeValues: map[string]dbtypes.AttributeValue{":n": &dbtypes.AttributeValueMemberN{Value: strconv.Itoa(8)}},
	}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.sw.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(h.events) != 1 || h.events[0].Type != opevents.DeliveryDeadLettered {
		t.Fatalf("published %+v, want one delivery.dead_lettered", h.events)
	}
	got := h.events[0].Detail.(opevents.DeliveryDeadLetteredDetail)
	if got.DeliveryID != d.ID || got.EndpointID != d.EndpointID || got.AccountID != d.AccountID || got.Reason != "attempts_exhausted" {
		t.Errorf("detail %+v", got)
	}
}
