package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/schema"
)

// EventRef is an event as the account_events index has it: what replay
// decides on, without the body.
type EventRef struct {
	ID          string   `dynamodbav:"gsi3sk"`
	Type        string   `dynamodbav:"event_type"`
	EndpointIDs []string `dynamodbav:"endpoint_ids"`
	ExpiresAt   int64    `dynamodbav:"ttl"`
}

// AccountEvents lists an account's events received between since and until
// (unix ms, inclusive) whose id sorts after after (an event id, or "" from
// the start), oldest first, at most limit. more says that the window may
// hold further events (limit was reached). Test events are not listed.
// An expired event (DynamoDB deletes late) is skipped.
func (s *Store) AccountEvents(ctx context.Context, accountID, after string, since, until int64, limit int) (refs []EventRef, more bool, err error) {
	return s.accountEvents(ctx, accountID, after, since, until, limit, false)
}

// AccountEventsNewestFirst is AccountEvents newest first: the events whose
// id sorts before after ("" from the end of the window).
func (s *Store) AccountEventsNewestFirst(ctx context.Context, accountID, after string, since, until int64, limit int) (refs []EventRef, more bool, err error) {
	return s.accountEvents(ctx, accountID, after, since, until, limit, true)
}

// accountEvents is the one listing of an account's events by time, in
// either order (events feed, replay).
func (s *Store) accountEvents(ctx context.Context, accountID, after string, since, until int64, limit int, newestFirst bool) (refs []EventRef, more bool, err error) {
	lo := domain.IDBound("evt", since, false)
	hi := domain.IDBound("evt", until, true)
	switch {
	case after == "":
	case newestFirst && after < hi:
		hi = after // inclusive: after itself is skipped below
	case !newestFirst && after > lo:
		// Ids have one length: any id after `after` sorts after it plus a
		// space (below every id character), and BETWEEN is inclusive.
		lo = after + " "
	}
	if lo > hi { // a cursor past the window (another window's): nothing left; BETWEEN would refuse it
		return nil, false, nil
	}
	first, last := time.UnixMilli(since).UTC().Truncate(24*time.Hour), time.UnixMilli(until).UTC().Truncate(24*time.Hour)
	step := 24 * time.Hour
	if newestFirst {
		first, step = last, -step
	}
	for day := first; !day.Before(time.UnixMilli(since).UTC().Truncate(24*time.Hour)) && !day.After(last) && len(refs) < limit; day = day.Add(step) {
		if domain.IDBound("evt", day.Add(24*time.Hour).UnixMilli()-1, true) < lo || domain.IDBound("evt", day.UnixMilli(), false) > hi {
			continue // the cursor is past this day
		}
		var start map[string]types.AttributeValue
		for len(refs) < limit {
			skip := 0 // newest first from a cursor: the cursor's own event comes first, and is skipped
			if newestFirst && after != "" {
				skip = 1
			}
			out, err := s.db.Query(ctx, &dynamodb.QueryInput{
				TableName: s.table, IndexName: aws.String(schema.IndexAccountEvents),
				KeyConditionExpression: aws.String("gsi3pk = :pk AND gsi3sk BETWEEN :lo AND :hi"),
				ExpressionAttributeValues: item{":pk": str(accountEventsPK(accountID, day.UnixMilli())),
					":lo": str(lo), ":hi": str(hi)},
				ExclusiveStartKey: start, Limit: aws.Int32(int32(min(limit-len(refs)+skip, 500))),
				ScanIndexForward: aws.Bool(!newestFirst),
			})
			if err != nil {
				return nil, false, err
			}
			var page []EventRef
			if err := attributevalue.UnmarshalListOfMaps(out.Items, &page); err != nil {
				return nil, false, err
			}
			for _, r := range page {
				if !domain.Expired(r.ExpiresAt, s.now()) && r.ID != after && len(refs) < limit {
					refs = append(refs, r)
				}
			}
			if out.LastEvaluatedKey == nil {
				break
			}
			start = out.LastEvaluatedKey
		}
	}
	return refs, len(refs) >= limit, nil
}

// AddReplayDelivery writes a new delivery of an existing event and lists
// its endpoint on the event, in one transaction that holds only while the
// event exists and has no delivery to that endpoint yet: ErrConflict when
// it has one (an earlier replay, or ingest), ErrNotFound when the event is
// gone. So two replays of the same window never make two deliveries.
func (s *Store) AddReplayDelivery(ctx context.Context, d domain.Delivery, dueAt int64) error {
	it, err := deliveryItem(d, dueAt)
	if err != nil {
		return err
	}
	empty := &types.AttributeValueMemberL{Value: []types.AttributeValue{}}
	r, err := s.transact(ctx,
		part{"delivery", types.TransactWriteItem{Put: &types.Put{
			TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}}},
		part{"event", types.TransactWriteItem{Update: &types.Update{
			TableName: s.table, Key: key(eventPK(d.EventID), skEvent),
			UpdateExpression: aws.String("SET endpoint_ids = list_append(if_not_exists(endpoint_ids, :empty), :ep)," +
				" delivery_ids = list_append(if_not_exists(delivery_ids, :empty), :dlv)"),
			ConditionExpression:      aws.String("attribute_exists(pk) AND #ttl > :now AND NOT contains(endpoint_ids, :epid)"),
			ExpressionAttributeNames: map[string]string{"#ttl": "ttl"},
			ExpressionAttributeValues: item{":empty": empty, ":ep": &types.AttributeValueMemberL{Value: []types.AttributeValue{str(d.EndpointID)}},
				":dlv": &types.AttributeValueMemberL{Value: []types.AttributeValue{str(d.ID)}}, ":epid": str(d.EndpointID),
				":now": num(s.now().Unix())},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}}},
	)
	if err != nil {
		return err
	}
	if why, refused := r["event"]; refused {
		var ev struct {
			TTL int64 `dynamodbav:"ttl"`
		}
		if why.Item == nil || attributevalue.UnmarshalMap(why.Item, &ev) != nil || domain.Expired(ev.TTL, s.now()) {
			return ErrNotFound
		}
		return ErrConflict
	}
	if len(r) > 0 {
		return ErrConflict
	}
	return nil
}
