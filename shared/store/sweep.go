package store

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/schema"
)

// SweepPage is one page of the sweeper index.
type SweepPage struct {
	IDs   []string
	DueAt []int64 // each id's due time (unix ms), in the index's order
	Next  Cursor  // nil on the last page
}

// Cursor is where a query continues (DynamoDB's LastEvaluatedKey).
type Cursor = map[string]types.AttributeValue

// DueForSweep queries one shard of the sparse sweeper index for deliveries
// due before `before` (unix ms), oldest first: pending ones nobody moved on,
// and failed ones whose DLQ message was not sent. Only deliveries that still
// need work are in the index, so the cost follows the backlog, not the table.
func (s *Store) DueForSweep(ctx context.Context, shard int, before int64, limit int32, start Cursor) (SweepPage, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: s.table, IndexName: aws.String(schema.IndexSweep),
		KeyConditionExpression:    aws.String("sweep_shard = :s AND due_at < :before"),
		ExpressionAttributeValues: item{":s": str(strconv.Itoa(shard)), ":before": num(before)},
		Limit:                     aws.Int32(limit), ExclusiveStartKey: start,
	})
	if err != nil {
		return SweepPage{}, err
	}
	page := SweepPage{Next: out.LastEvaluatedKey}
	for _, it := range out.Items {
		pk := stringAttr(it, "pk")
		page.IDs = append(page.IDs, pk[len(deliveryPK("")):])
		due, _ := strconv.ParseInt(numberAttr(it, "due_at"), 10, 64)
		page.DueAt = append(page.DueAt, due)
	}
	return page, nil
}

// Requeue hands an overdue pending delivery to a new queue message: it bumps
// gen (an older message of it is then dropped as a duplicate, making no
// attempt) and sets requeued_at to at (the sweeper's now); due_at stays, so
// the delivery stays as overdue as it is until an attempt moves it. It is
// conditioned on the delivery being due before `before` and not re-queued
// since then (one extra message a grace at most), having attempts left, not
// being within lifecycle.ExpiryMargin of its TTL, and no live lease;
// otherwise ErrConflict with the delivery as it is (ErrNotFound: gone), so
// the caller can see why.
func (s *Store) Requeue(ctx context.Context, id string, before, at int64, maxAttempts int) (domain.Delivery, error) {
	now := domain.Millis(s.now())
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression: aws.String("SET gen = gen + :one, requeued_at = :at, updated_at = :now"),
		ConditionExpression: aws.String("#st = :pending AND due_at < :before AND attempts < :max AND #ttl > :soon" +
			" AND (attribute_not_exists(requeued_at) OR requeued_at < :before)" +
			" AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#ttl": "ttl"},
		ExpressionAttributeValues: item{":one": num(1), ":now": num(now), ":before": num(before), ":at": num(at),
			":soon": num(s.now().Add(lifecycle.ExpiryMargin).Unix()),
			":max":  num(int64(maxAttempts)), ":pending": str(domain.StatusPending)},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if isConditionFailed(err) {
		d, uerr := conditionItem(err)
		if uerr != nil {
			return d, uerr
		}
		return d, ErrConflict
	}
	return unmarshalDelivery(out, err)
}

// PushDue moves a pending delivery's due time later (a deferral the sweeper
// must not mistake for a stuck delivery). ErrConflict when the delivery
// moved on or is already due later.
func (s *Store) PushDue(ctx context.Context, id string, gen int, until int64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression:          aws.String("SET due_at = :until"),
		ConditionExpression:       aws.String("#st = :pending AND gen = :gen AND due_at < :until"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":until": num(until), ":gen": num(int64(gen)), ":pending": str(domain.StatusPending)},
	})
	if isConditionFailed(err) {
		return ErrConflict
	}
	return err
}
