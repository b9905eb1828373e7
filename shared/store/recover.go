package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/schema"
)

// FailedDeliveryIDs lists an endpoint's failed deliveries created between
// since and until (unix ms, inclusive), oldest first, at most limit, after
// the delivery id after when it is not empty. Delivery ids begin with their
// creation time, so the window is a key range.
func (s *Store) FailedDeliveryIDs(ctx context.Context, endpointID string, since, until int64, after string, limit int) ([]string, error) {
	var ids []string
	var start Cursor
	if after != "" {
		start = key(deliveryPK(after), skDelivery)
		start["gsi2pk"], start["gsi2sk"] = str(endpointStatusPK(endpointID, domain.StatusFailed)), str(after)
	}
	for len(ids) < limit {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: s.table, IndexName: aws.String(schema.IndexEndpointStatus),
			KeyConditionExpression: aws.String("gsi2pk = :pk AND gsi2sk BETWEEN :lo AND :hi"),
			ExpressionAttributeValues: item{":pk": str(endpointStatusPK(endpointID, domain.StatusFailed)),
				":lo": str(domain.IDBound("dlv", since, false)), ":hi": str(domain.IDBound("dlv", until, true))},
			ExclusiveStartKey: start, Limit: aws.Int32(int32(min(limit-len(ids), 500))),
		})
		if err != nil {
			return nil, err
		}
		for _, it := range out.Items {
			ids = append(ids, stringAttr(it, "gsi2sk"))
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	return ids, nil
}

// Restart gives a failed delivery a fresh series of attempts: pending again,
// attempts back to 0, a new gen so that older queue messages are dropped.
// With gen >= 0 it only restarts that generation (a DLQ message restarting
// the failure it reported); with gen < 0 any failed delivery. ErrNotFound:
// the delivery is gone or within lifecycle.ExpiryMargin of its TTL;
// ErrConflict: it is not failed (in that generation).
func (s *Store) Restart(ctx context.Context, id, endpointID string, gen int) (domain.Delivery, error) {
	now := domain.Millis(s.now())
	cond := "#st = :failed AND #ttl > :nowsec"
	vals := item{":failed": str(domain.StatusFailed), ":pending": str(domain.StatusPending), ":now": num(now),
		":zero": num(0), ":one": num(1), ":nowsec": num(s.now().Add(lifecycle.ExpiryMargin).Unix()), ":shard": str(sweepShard(id))}
	if gen >= 0 {
		cond += " AND gen = :gen"
		vals[":gen"] = num(int64(gen))
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression: aws.String("SET #st = :pending, attempts = :zero, series = series + :one, gen = gen + :one," +
			" next_attempt_at = :now, due_at = :now, sweep_shard = :shard, updated_at = :now, series_at = :now" +
			" REMOVE gsi2pk, fail_reason, failed_at, dlq_pending, dlq_claim_until, claim, claim_attempt, lease_until, throttles, requeued_at, overdue_from"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#st": "status", "#ttl": "ttl"},
		ExpressionAttributeValues: vals,
		ReturnValues:              types.ReturnValueAllNew,
		// Refused: the item as it was tells a delivery gone (expired or
		// deleted: nothing to restart, ever) from one that moved on.
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if isConditionFailed(err) {
		d, uerr := conditionItem(err) // ErrNotFound: no item
		if uerr == nil && lifecycle.NearExpiry(d.ExpiresAt, s.now()) {
			uerr = ErrNotFound
		}
		if uerr != nil {
			return d, uerr
		}
		return d, ErrConflict
	}
	return unmarshalDelivery(out, err)
}
