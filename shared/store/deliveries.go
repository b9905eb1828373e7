package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/schema"
)

// deliveryItem is a delivery with its keys: the endpoint log index, the
// status index's sort key (its partition key, gsi2pk, is set only when the
// delivery fails: the status index holds failed deliveries alone), and the
// sweeper index while it still needs work.
func deliveryItem(d domain.Delivery, dueAt int64) (item, error) {
	extra := key(deliveryPK(d.ID), skDelivery)
	extra["gsi1pk"] = str(endpointLogPK(d.EndpointID))
	extra["gsi1sk"] = str(d.ID)
	if d.Status == domain.StatusFailed {
		extra["gsi2pk"] = str(endpointStatusPK(d.EndpointID, d.Status))
	}
	extra["gsi2sk"] = str(d.ID)
	d.DueAt = 0
	if d.Status == domain.StatusPending {
		extra["sweep_shard"] = str(sweepShard(d.ID))
		d.DueAt = dueAt
	}
	return marshal(d, extra)
}

// GetDelivery reads a delivery; an expired one is ErrNotFound.
func (s *Store) GetDelivery(ctx context.Context, id string) (domain.Delivery, error) {
	var d domain.Delivery
	if err := s.get(ctx, key(deliveryPK(id), skDelivery), &d); err != nil {
		return d, err
	}
	if domain.Expired(d.ExpiresAt, s.now()) {
		return domain.Delivery{}, ErrNotFound
	}
	return d, nil
}

// GetDeliveries reads several deliveries (one event's), skipping expired ones.
func (s *Store) GetDeliveries(ctx context.Context, ids []string) ([]domain.Delivery, error) {
	return s.getDeliveries(ctx, ids, true)
}

// GetDeliveriesEventually is GetDeliveries eventually consistent (half the
// read units): for the sweeper, whose entries are a grace old, and for
// which a stale item is an older state that its conditional writes refuse.
func (s *Store) GetDeliveriesEventually(ctx context.Context, ids []string) ([]domain.Delivery, error) {
	return s.getDeliveries(ctx, ids, false)
}

func (s *Store) getDeliveries(ctx context.Context, ids []string, consistent bool) ([]domain.Delivery, error) {
	var out []domain.Delivery
	for start := 0; start < len(ids); start += maxBatchGet {
		end := min(start+maxBatchGet, len(ids))
		keys := make([]item, 0, end-start)
		for _, id := range ids[start:end] {
			keys = append(keys, key(deliveryPK(id), skDelivery))
		}
		items, err := s.batchGetAs(ctx, keys, consistent)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			var d domain.Delivery
			if err := attributevalue.UnmarshalMap(it, &d); err != nil {
				return nil, err
			}
			if !domain.Expired(d.ExpiresAt, s.now()) {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// DeliveryPage is one page of an endpoint's delivery log.
type DeliveryPage struct {
	Deliveries []domain.Delivery
	After      string // where the next page starts (the last delivery id looked at); "" on the last page
}

// maxScanPerPage bounds how many log entries one page of a pending or
// delivered filter looks at: such a page may hold fewer than limit
// deliveries (none, even) and still have a next page.
const maxScanPerPage = 500

// ListEndpointDeliveries reads an endpoint's deliveries newest first, all of
// them or those in one status; after is the last delivery id of the previous
// page. Both endpoint indexes hold keys only (no claim or outcome rewrites
// them): a page is a Query of the keys and one BatchGetItem of the
// deliveries. All: the log index. Failed: the status index, which only
// failed deliveries enter. Pending and delivered: the log index, filtered on
// the deliveries read, at most maxScanPerPage entries a page.
func (s *Store) ListEndpointDeliveries(ctx context.Context, endpointID string, status domain.Status, limit int32, after string) (DeliveryPage, error) {
	if status == "" || status == domain.StatusFailed {
		pkAttr, skAttr, index, pk := "gsi1pk", "gsi1sk", schema.IndexEndpointLog, endpointLogPK(endpointID)
		if status == domain.StatusFailed {
			pkAttr, skAttr, index, pk = "gsi2pk", "gsi2sk", schema.IndexEndpointStatus, endpointStatusPK(endpointID, status)
		}
		ids, last, err := s.indexPage(ctx, index, pkAttr, skAttr, pk, limit, after)
		if err != nil {
			return DeliveryPage{}, err
		}
		ds, err := s.deliveriesInOrder(ctx, ids, status)
		return DeliveryPage{Deliveries: ds, After: last}, err
	}
	var page DeliveryPage
	for scanned := 0; ; {
		want := limit - int32(len(page.Deliveries))
		ids, last, err := s.indexPage(ctx, schema.IndexEndpointLog, "gsi1pk", "gsi1sk", endpointLogPK(endpointID), min(max(want, 25), 100), after)
		if err != nil {
			return page, err
		}
		ds, err := s.deliveriesInOrder(ctx, ids, "")
		if err != nil {
			return page, err
		}
		byID := make(map[string]domain.Delivery, len(ds))
		for _, d := range ds {
			byID[d.ID] = d
		}
		for i, id := range ids {
			if d, ok := byID[id]; ok && d.Status == status {
				page.Deliveries = append(page.Deliveries, d)
				if int32(len(page.Deliveries)) == limit {
					page.After = id
					if i == len(ids)-1 {
						page.After = last // "" when nothing follows
					}
					return page, nil
				}
			}
		}
		scanned += len(ids)
		page.After, after = last, last
		if last == "" || scanned >= maxScanPerPage {
			return page, nil
		}
	}
}

// indexPage queries one page of an endpoint index, newest first: the
// delivery ids, and the last one when more may follow.
func (s *Store) indexPage(ctx context.Context, index, pkAttr, skAttr, pk string, limit int32, after string) ([]string, string, error) {
	in := &dynamodb.QueryInput{TableName: s.table, IndexName: aws.String(index), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(limit),
		KeyConditionExpression: aws.String(pkAttr + " = :pk"), ExpressionAttributeValues: item{":pk": str(pk)}}
	if after != "" {
		in.ExclusiveStartKey = item{"pk": str(deliveryPK(after)), "sk": str(skDelivery), pkAttr: str(pk), skAttr: str(after)}
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, "", err
	}
	ids := make([]string, 0, len(out.Items))
	for _, it := range out.Items {
		ids = append(ids, stringAttr(it, skAttr))
	}
	last := ""
	if out.LastEvaluatedKey != nil {
		last = stringAttr(out.LastEvaluatedKey, skAttr)
	}
	return ids, last, nil
}

// deliveriesInOrder reads the deliveries of ids (one BatchGetItem per 100)
// and returns them in the order of ids, leaving out expired ones and, with
// status set, ones no longer in it (the index is eventually consistent).
func (s *Store) deliveriesInOrder(ctx context.Context, ids []string, status domain.Status) ([]domain.Delivery, error) {
	got, err := s.GetDeliveries(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]domain.Delivery, len(got))
	for _, d := range got {
		byID[d.ID] = d
	}
	out := make([]domain.Delivery, 0, len(ids))
	for _, id := range ids {
		if d, ok := byID[id]; ok && (status == "" || d.Status == status) {
			out = append(out, d)
		}
	}
	return out, nil
}

// FailWithoutAttempt ends a pending delivery that can no longer be attempted
// (endpoint disabled or deleted, event expired, attempts used up by a worker
// that died). It is conditioned on the delivery being pending in gen with no
// live lease, and marks it for the DLQ. With sendDLQ the caller will send
// the DLQ message itself and takes the DLQ claim; without, whoever comes
// next (its queue message, or the sweeper) sends it.
//
// When seen still carries a claim (its worker died, the lease ran out), the
// attempt that claim made is logged as interrupted in the same transaction:
// the last attempt of a series lost to a crash shows in the log too.
func (s *Store) FailWithoutAttempt(ctx context.Context, seen domain.Delivery, reason domain.FailReason, sendDLQ bool) (domain.Delivery, error) {
	now := domain.Millis(s.now())
	claimUntil := int64(0)
	if sendDLQ {
		claimUntil = now + dlqClaimFor
	}
	in := &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(seen.ID), skDelivery),
		UpdateExpression: aws.String("SET #st = :failed, fail_reason = :reason, failed_at = :now, updated_at = :now," +
			" dlq_pending = :true, dlq_claim_until = :dlqc, due_at = :now, gsi2pk = :g2 REMOVE claim, claim_attempt, lease_until"),
		ConditionExpression:      aws.String("#st = :pending AND gen = :gen AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":failed": str(domain.StatusFailed), ":reason": str(reason), ":now": num(now),
			":true": boolean(true), ":dlqc": num(claimUntil), ":g2": str(endpointStatusPK(seen.EndpointID, domain.StatusFailed)),
			":pending": str(domain.StatusPending), ":gen": num(int64(seen.Gen))},
		ReturnValues: types.ReturnValueAllNew,
	}
	if a := lifecycle.Interrupted(seen, domain.NewID("att")); a != nil {
		put, err := s.attemptPut(*a)
		if err != nil {
			return seen, err
		}
		r, err := s.transact(ctx,
			part{"delivery", types.TransactWriteItem{Update: &types.Update{TableName: in.TableName, Key: in.Key, UpdateExpression: in.UpdateExpression,
				ConditionExpression: in.ConditionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
				ExpressionAttributeValues: in.ExpressionAttributeValues}}},
			part{"interrupted", types.TransactWriteItem{Put: put}},
		)
		switch {
		case err != nil:
			return seen, err
		case r == nil:
			var d domain.Delivery
			return d, s.get(ctx, key(deliveryPK(seen.ID), skDelivery), &d)
		case r.has("delivery"):
			return seen, ErrConflict
		}
		// Only the log entry exists already (its worker recorded it after
		// all): fail the delivery alone.
	}
	out, err := s.db.UpdateItem(ctx, in)
	return unmarshalDelivery(out, err)
}

func unmarshalDelivery(out *dynamodb.UpdateItemOutput, err error) (domain.Delivery, error) {
	var d domain.Delivery
	if isConditionFailed(err) {
		return d, ErrConflict
	}
	if err != nil {
		return d, err
	}
	err = attributevalue.UnmarshalMap(out.Attributes, &d)
	return d, err
}

// dlqClaimFor is how long the sender of a DLQ message owns the sending;
// if it dies, the sweeper (or the delivery's message) takes over after it.
const dlqClaimFor = 30_000

// ClaimDeadLetter takes the sending of a failed delivery's DLQ message, so
// that two workers (or a worker and the sweeper) never both send it.
// ErrConflict: someone holds it, or it was sent.
func (s *Store) ClaimDeadLetter(ctx context.Context, id string) error {
	now := domain.Millis(s.now())
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression:          aws.String("SET dlq_claim_until = :until"),
		ConditionExpression:       aws.String("dlq_pending = :true AND (attribute_not_exists(dlq_claim_until) OR dlq_claim_until < :now)"),
		ExpressionAttributeValues: item{":true": boolean(true), ":now": num(now), ":until": num(now + dlqClaimFor)},
	})
	if isConditionFailed(err) {
		return ErrConflict
	}
	return err
}

// MarkDeadLettered records that the DLQ message of a failed delivery's
// generation gen was sent, which takes it out of the sweeper's index. A late
// mark for an older generation changes nothing: the newer one's message is
// still to be sent.
func (s *Store) MarkDeadLettered(ctx context.Context, id string, gen int) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression:          aws.String("REMOVE dlq_pending, dlq_claim_until, due_at, sweep_shard"),
		ConditionExpression:       aws.String("#st = :failed AND dlq_pending = :true AND gen = :gen"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":failed": str(domain.StatusFailed), ":true": boolean(true), ":gen": num(int64(gen))},
	})
	if isConditionFailed(err) {
		return nil // already marked, or restarted since
	}
	return err
}
