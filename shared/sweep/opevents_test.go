package sweep_test

import (
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/opevents"
)

// A delivery the sweeper fails and dead-letters (its last attempt was
// claimed and never finished) is stated as delivery.dead_lettered, once.
func TestSweeperStatesItsDeadLetters(t *testing.T) {
	r := newRig(t)
	h := &opevents.Recorder{}
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
	if len(h.Events()) != 1 || h.Events()[0].Type != opevents.DeliveryDeadLettered {
		t.Fatalf("published %+v, want one delivery.dead_lettered", h.Events())
	}
	got := h.Events()[0].Detail.(opevents.DeliveryDeadLetteredDetail)
	if got.DeliveryID != d.ID || got.EndpointID != d.EndpointID || got.AccountID != d.AccountID || got.Reason != "attempts_exhausted" {
		t.Errorf("detail %+v", got)
	}
}
