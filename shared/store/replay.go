package store

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/schema"
)

// EventRef is an event as AccountEvents lists it: what replay decides on,
// without the body.
type EventRef struct {
	ID          string   `dynamodbav:"id"`
	Type        string   `dynamodbav:"event_type"`
	EndpointIDs []string `dynamodbav:"endpoint_ids"`
	ExpiresAt   int64    `dynamodbav:"ttl"`
	// Body is read by AccountEventsWithBodies only (an event of the legacy
	// index has none).
	Body []byte `dynamodbav:"body,omitempty"`
}

// AccountEvents lists an account's events received between since and until
// (unix ms, inclusive) whose id sorts after after (an event id, or "" from
// the start), oldest first, at most limit. more says that the window may
// hold further events (limit was reached). Test events are not listed.
// An expired event (DynamoDB deletes late) is skipped.
//
// The events are read from their own items, keyed by the account's day and
// the id (eventKey), eventually consistent; an event stored before that
// layout is read from the account_events index under the same key, and the
// two lists are merged by id.
func (s *Store) AccountEvents(ctx context.Context, accountID, after string, since, until int64, limit int) (refs []EventRef, more bool, err error) {
	return s.accountEvents(ctx, accountID, after, since, until, limit, false, false)
}

// AccountEventsWithBodies is AccountEvents with each event's body (for an
// endpoint's content filter): the same read units (a query bills the
// items' whole size), more bytes over the wire and in memory.
func (s *Store) AccountEventsWithBodies(ctx context.Context, accountID, after string, since, until int64, limit int) (refs []EventRef, more bool, err error) {
	return s.accountEvents(ctx, accountID, after, since, until, limit, false, true)
}

// AccountEventsNewestFirst is AccountEvents newest first: the events whose
// id sorts before after ("" from the end of the window).
func (s *Store) AccountEventsNewestFirst(ctx context.Context, accountID, after string, since, until int64, limit int) (refs []EventRef, more bool, err error) {
	return s.accountEvents(ctx, accountID, after, since, until, limit, true, false)
}

// accountEvents is the one listing of an account's events by time, in
// either order (events feed, replay).
func (s *Store) accountEvents(ctx context.Context, accountID, after string, since, until int64, limit int, newestFirst, bodies bool) (refs []EventRef, more bool, err error) {
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
		pk := accountEventsPK(accountID, day.UnixMilli())
		// newest first from a cursor: the cursor's own event (hi is
		// inclusive) comes first and is skipped, so read one more.
		want := limit - len(refs)
		if newestFirst && after != "" {
			want++
		}
		own, err := s.eventRefs(ctx, false, pk, lo, hi, want, newestFirst, bodies)
		if err != nil {
			return nil, false, err
		}
		legacy, err := s.eventRefs(ctx, true, pk, lo, hi, want, newestFirst, false)
		if err != nil {
			return nil, false, err
		}
		for _, r := range mergeRefs(own, legacy, want, newestFirst) {
			if r.ID != after && len(refs) < limit {
				refs = append(refs, r)
			}
		}
	}
	return refs, len(refs) >= limit, nil
}

// eventRefs is the first limit events (not test events, not expired) of
// one account's day, pk, with ids from lo to hi: from the table's items
// (index "", the id in sk) or the legacy index (its id in gsi3sk).
func (s *Store) eventRefs(ctx context.Context, legacy bool, pk, lo, hi string, limit int, newestFirst, bodies bool) ([]EventRef, error) {
	idAttr := "sk"
	if legacy {
		idAttr = "gsi3sk"
	}
	var refs []EventRef
	var start map[string]types.AttributeValue
	in := &dynamodb.QueryInput{
		TableName:                 s.table,
		KeyConditionExpression:    aws.String("#pk = :pk AND #id BETWEEN :lo AND :hi"),
		FilterExpression:          aws.String("attribute_not_exists(unlisted)"),
		ExpressionAttributeNames:  map[string]string{"#pk": "pk", "#id": idAttr},
		ExpressionAttributeValues: item{":pk": str(pk), ":lo": str(lo), ":hi": str(hi)},
		ScanIndexForward:          aws.Bool(!newestFirst),
	}
	if legacy {
		in.IndexName = aws.String(schema.IndexAccountEvents)
		in.ExpressionAttributeNames["#pk"] = "gsi3pk"
	} else {
		// What replay decides on; the body stays unread (a query still
		// bills the items' whole size).
		in.ProjectionExpression = aws.String("id, event_type, endpoint_ids, #ttl")
		if bodies {
			in.ProjectionExpression = aws.String("id, event_type, endpoint_ids, #ttl, body, body_z")
		}
		in.ExpressionAttributeNames["#ttl"] = "ttl"
	}
	for len(refs) < limit {
		in.ExclusiveStartKey, in.Limit = start, aws.Int32(int32(min(limit-len(refs), 500)))
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, it := range out.Items {
			if err := unpackBody(it); err != nil { // a body stored compressed
				return nil, err
			}
			var r EventRef
			if err := attributevalue.UnmarshalMap(it, &r); err != nil {
				return nil, err
			}
			if r.ID == "" {
				r.ID = stringAttr(it, idAttr)
			}
			if !domain.Expired(r.ExpiresAt, s.now()) {
				refs = append(refs, r)
			}
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	return refs, nil
}

// mergeRefs is the first limit of two lists sorted by id (descending when
// newestFirst), merged.
func mergeRefs(a, b []EventRef, limit int, newestFirst bool) []EventRef {
	out := make([]EventRef, 0, min(len(a)+len(b), limit))
	for len(out) < limit && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || len(a) > 0 && (a[0].ID < b[0].ID) != newestFirst {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// AddReplayDelivery writes a new delivery of an existing event and lists
// its endpoint on the event, in one transaction that holds only while the
// event exists and has no delivery to that endpoint yet: ErrConflict when
// it has one (an earlier replay, or ingest), ErrNotFound when the event is
// gone. So two replays of the same window never make two deliveries.
func (s *Store) AddReplayDelivery(ctx context.Context, d domain.Delivery, dueAt int64) error {
	k, ok := eventKey(d.AccountID, d.EventID)
	if !ok {
		return s.addReplayDelivery(ctx, d, dueAt, legacyEventKey(d.EventID))
	}
	err := s.addReplayDelivery(ctx, d, dueAt, k)
	if errors.Is(err, ErrNotFound) { // stored before events moved to their account's day
		err = s.addReplayDelivery(ctx, d, dueAt, legacyEventKey(d.EventID))
	}
	return err
}

func (s *Store) addReplayDelivery(ctx context.Context, d domain.Delivery, dueAt int64, eventKey item) error {
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
			TableName: s.table, Key: eventKey,
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
