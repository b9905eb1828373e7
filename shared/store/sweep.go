package store

import (
	"context"
	"strconv"
	"strings"

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

// DueForSweep queries one shard of the sweeper index for entries due in
// [from, before) (unix ms), oldest first. A delivery's entry stays in the
// index once it is delivered (removing it would cost a write unit at every
// outcome), so the sweeper reads a moving window of due times, each entry
// about once (SweepMarks), and reads the deliveries to tell the final ones,
// which need nothing.
func (s *Store) DueForSweep(ctx context.Context, shard int, from, before int64, limit int32, start Cursor) (SweepPage, error) {
	if before <= from {
		return SweepPage{}, nil // an empty window (DynamoDB refuses a BETWEEN whose bounds are reversed)
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: s.table, IndexName: aws.String(schema.IndexSweep),
		KeyConditionExpression:    aws.String("sweep_shard = :s AND due_at BETWEEN :from AND :last"),
		ExpressionAttributeValues: item{":s": str(strconv.Itoa(shard)), ":from": num(from), ":last": num(before - 1)},
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

const (
	pkSweepMarks = "SWEEP"
	skSweepMarks = "MARKS"
)

// SweepMarks reads, per shard of the sweeper index, the due time (unix ms)
// up to which the sweeper has read it; a shard never swept is absent.
func (s *Store) SweepMarks(ctx context.Context) (map[int]int64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: key(pkSweepMarks, skSweepMarks), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	marks := map[int]int64{}
	for shard := 0; shard < schema.SweepShards; shard++ {
		if v := numberAttr(out.Item, sweepMarkAttr(shard)); v != "" {
			marks[shard], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return marks, nil
}

// SetSweepMarks writes the shards' marks (one write for all of them). A
// mark may move back (a clock that went back): that only reads entries
// again.
func (s *Store) SetSweepMarks(ctx context.Context, marks map[int]int64) error {
	if len(marks) == 0 {
		return nil
	}
	var set []string
	vals := item{}
	for shard, m := range marks {
		a := sweepMarkAttr(shard)
		set = append(set, a+" = :"+a)
		vals[":"+a] = num(m)
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(pkSweepMarks, skSweepMarks),
		UpdateExpression: aws.String("SET " + strings.Join(set, ", ")), ExpressionAttributeValues: vals,
	})
	return err
}

func sweepMarkAttr(shard int) string { return "m" + strconv.Itoa(shard) }

// Requeue hands an overdue pending delivery to a new queue message: it bumps
// gen (an older message of it is then dropped as a duplicate, making no
// attempt), sets requeued_at and due_at to at (the sweeper's now), which
// puts its index entry in a later sweep's window, a grace on: that message
// is given its grace before it too is taken for lost. overdue_from keeps
// the due time of the first re-queue until an attempt removes it (the
// oldest-overdue metric). It is conditioned on the delivery being due
// before `before` and not re-queued since then (one extra message a grace
// at most), having attempts left, not being within lifecycle.ExpiryMargin
// of its TTL, and no live lease; otherwise ErrConflict with the delivery as
// it is (ErrNotFound: gone), so the caller can see why. A retry of this
// re-queue's write that finds it taken (ownWrite) is re-queued, not a
// conflict, so that its message is sent.
func (s *Store) Requeue(ctx context.Context, id string, before, at int64, maxAttempts int) (domain.Delivery, error) {
	now, w := domain.Millis(s.now()), newWriteID()
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression: aws.String("SET gen = gen + :one, requeued_at = :at, overdue_from = if_not_exists(overdue_from, due_at)," +
			" due_at = :at, updated_at = :now, " + writeID + " = :w"),
		ConditionExpression: aws.String("#st = :pending AND due_at < :before AND attempts < :max AND #ttl > :soon" +
			" AND (attribute_not_exists(requeued_at) OR requeued_at < :before)" +
			" AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeNames: map[string]string{"#st": "status", "#ttl": "ttl"},
		ExpressionAttributeValues: item{":one": num(1), ":now": num(now), ":before": num(before), ":at": num(at), ":w": str(w),
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
		if ownWrite(err, w) {
			return d, nil
		}
		return d, ErrConflict
	}
	return unmarshalDelivery(out, err)
}

// Revisit moves the index entry of a delivery that still needs work, but
// that the sweeper found it could not move (a live lease or DLQ claim), to
// at, so that a later sweep's window reads it again. Nothing when it is
// final meanwhile or already due at or after at.
func (s *Store) Revisit(ctx context.Context, id string, at int64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression: aws.String("SET overdue_from = if_not_exists(overdue_from, due_at), due_at = :at"),
		ConditionExpression: aws.String("attribute_exists(sweep_shard) AND due_at < :at AND" +
			" (#st = :pending OR dlq_pending = :true)"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":at": num(at), ":pending": str(domain.StatusPending), ":true": boolean(true)},
	})
	if isConditionFailed(err) {
		return nil
	}
	return err
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
