package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/schema"
)

// Park is a wait kept in the table instead of in the queue: a delivery
// whose next look is further away than SQS's 15-minute delay. The scheduler
// (sweep.Scheduler) sends its message again shortly before Until, delayed to
// Until exactly, carrying the rate-limit slot the parked message carried.
type Park struct {
	Until    int64 `dynamodbav:"park_until"`              // unix ms: when the delivery's message is due again
	Gen      int   `dynamodbav:"park_gen"`                // the generation that parked it; a newer one makes the park stale
	SlotAt   int64 `dynamodbav:"park_slot_at,omitempty"`  // the message's rate-limit slot (queue.Message.SlotAt)
	SlotFor  int   `dynamodbav:"park_slot_for,omitempty"` // and the attempt count it was reserved at
	Deferred int   `dynamodbav:"park_deferred,omitempty"` // the message's put-back count
}

const parkAttrs = "park_until, park_shard, park_gen, park_slot_at, park_slot_for, park_deferred"

// ParkDelivery keeps a pending delivery's wait in the table: its due time
// moves to p.Until (so the sweeper does not take it for stuck) and it enters
// the sparse park index. Conditioned on the delivery being pending in
// generation p.Gen (the parking message's): ErrConflict when it moved on, in
// which case the message was superseded. And on the item outliving the wait
// by lifecycle.ExpiryMargin: ErrOutlives when it would not (a rate backlog
// longer than the retention), so that the caller fails the delivery as
// expired instead of parking it past the TTL, where it would vanish without
// a dead letter. Parking again (a duplicate of the same message) writes the
// same values.
func (s *Store) ParkDelivery(ctx context.Context, id string, p Park) error {
	vals := item{":until": num(p.Until), ":shard": str(sweepShard(id)), ":gen": num(int64(p.Gen)),
		":sa": num(p.SlotAt), ":sf": num(int64(p.SlotFor)), ":df": num(int64(p.Deferred)), ":pending": str(domain.StatusPending),
		":untilsec": num(time.UnixMilli(p.Until).Add(lifecycle.ExpiryMargin).Unix())}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression: aws.String("SET park_until = :until, park_shard = :shard, park_gen = :gen, park_slot_at = :sa," +
			" park_slot_for = :sf, park_deferred = :df, due_at = :until"),
		ConditionExpression:                 aws.String("#st = :pending AND gen = :gen AND #ttl > :untilsec"),
		ExpressionAttributeNames:            map[string]string{"#st": "status", "#ttl": "ttl"},
		ExpressionAttributeValues:           vals,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		var d domain.Delivery
		if attributevalue.UnmarshalMap(ccf.Item, &d) == nil && d.Status == domain.StatusPending && d.Gen == p.Gen {
			return ErrOutlives
		}
		return ErrConflict
	}
	return err
}

// ParkedPage is one page of the park index.
type ParkedPage struct {
	IDs  []string
	Next Cursor // nil on the last page
}

// ParkedBefore queries one shard of the sparse park index for deliveries
// parked until before `before` (unix ms).
func (s *Store) ParkedBefore(ctx context.Context, shard int, before int64, limit int32, start Cursor) (ParkedPage, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: s.table, IndexName: aws.String(schema.IndexPark),
		KeyConditionExpression:    aws.String("park_shard = :s AND park_until < :before"),
		ExpressionAttributeValues: item{":s": str(strconv.Itoa(shard)), ":before": num(before)},
		Limit:                     aws.Int32(limit), ExclusiveStartKey: start,
	})
	if err != nil {
		return ParkedPage{}, err
	}
	page := ParkedPage{Next: out.LastEvaluatedKey}
	for _, it := range out.Items {
		page.IDs = append(page.IDs, stringAttr(it, "pk")[len(deliveryPK("")):])
	}
	return page, nil
}

// Unpark hands a parked delivery due before `before` to a new queue message:
// it bumps gen (like Requeue: any older message is then dropped) and leaves
// the park index, in one conditional write that exactly one scheduler run
// wins. It returns the delivery as it is now and the park it had. A park
// gone stale (the delivery moved on under a newer generation, or is no
// longer pending) is cleared and ErrConflict returned, as it is when another
// run unparked it first.
//
// If the caller dies before sending the message, nothing is lost: the due
// time is the park's, so the sweeper re-queues it after its grace. A
// retry of this unpark's write that finds it taken (ownWrite) is unparked,
// not a conflict.
func (s *Store) Unpark(ctx context.Context, id string, before int64) (domain.Delivery, Park, error) {
	now, w := domain.Millis(s.now()), newWriteID()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression:         aws.String("SET gen = gen + :one, updated_at = :now, " + writeID + " = :w REMOVE " + parkAttrs),
		ConditionExpression:      aws.String("#st = :pending AND park_until < :before AND park_gen = gen"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":one": num(1), ":now": num(now), ":before": num(before), ":pending": str(domain.StatusPending),
			":w": str(w)},
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var d domain.Delivery
	var p Park
	if isConditionFailed(err) {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) && ccf.Item != nil {
			_ = attributevalue.UnmarshalMap(ccf.Item, &d)
			_ = attributevalue.UnmarshalMap(ccf.Item, &p)
			_, parked := ccf.Item["park_until"]
			if parked && (d.Status != domain.StatusPending || p.Gen != d.Gen) {
				s.clearStalePark(ctx, id, p)
			}
			if ownWrite(err, w) {
				// This unpark's own write, taken before a retry of it failed
				// its condition (the SDK retries a write whose answer was
				// lost): unparked, and its message is to be sent, at the
				// park's time (its due time); the slot it carried is gone.
				return d, Park{Until: d.DueAt, Gen: d.Gen - 1}, nil
			}
		}
		return d, p, ErrConflict
	}
	if err != nil {
		return d, p, err
	}
	if err := attributevalue.UnmarshalMap(out.Attributes, &d); err != nil {
		return d, p, err
	}
	if err := attributevalue.UnmarshalMap(out.Attributes, &p); err != nil {
		return d, p, err
	}
	d.Gen++
	d.UpdatedAt = now
	return d, p, nil
}

// clearStalePark takes a park that no longer applies out of the index, if
// it is still the one read.
func (s *Store) clearStalePark(ctx context.Context, id string, p Park) {
	_, _ = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression:          aws.String("REMOVE " + parkAttrs),
		ConditionExpression:       aws.String("park_until = :u AND park_gen = :g AND (#st <> :pending OR gen <> :g)"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":u": num(p.Until), ":g": num(int64(p.Gen)), ":pending": str(domain.StatusPending)},
	})
}
