package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// The catalog has its own partition per account, not the account's: ingest
// reads the account's partition whole for every event (AccountWithEndpoints),
// and up to 250 schemas of 64 KiB there would be read (and paid for) with
// each one. The account item keeps only the catalog's count and version.
func eventTypesPK(account string) string { return "TYPES#" + account }
func eventTypeSK(name string) string     { return "TYPE#" + name }

// CreateEventType adds a type to the account's catalog. In one transaction
// the account's type count goes up (below MaxEventTypes: else ErrLimit) and
// its catalog version too; a name already there is ErrDuplicate.
func (s *Store) CreateEventType(ctx context.Context, et domain.EventType) error {
	it, err := marshal(et, key(eventTypesPK(et.AccountID), eventTypeSK(et.Name)))
	if err != nil {
		return err
	}
	r, err := s.transact(ctx,
		part{"count", types.TransactWriteItem{Update: &types.Update{
			TableName: s.table, Key: key(accountPK(et.AccountID), skAccount),
			UpdateExpression:          aws.String("ADD event_type_count :one, catalog_version :one"),
			ConditionExpression:       aws.String("attribute_exists(pk) AND (attribute_not_exists(event_type_count) OR event_type_count < :max)"),
			ExpressionAttributeValues: item{":one": num(1), ":max": num(domain.MaxEventTypes)},
		}}},
		part{"type", types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}}},
	)
	switch {
	case r.has("type"):
		return ErrDuplicate
	case r.has("count"):
		return ErrLimit
	}
	return err
}

// GetEventType reads one type of the account's catalog.
func (s *Store) GetEventType(ctx context.Context, accountID, name string) (domain.EventType, error) {
	var et domain.EventType
	err := s.get(ctx, key(eventTypesPK(accountID), eventTypeSK(name)), &et)
	return et, err
}

// UpdateEventType writes et over the stored type if it is still at
// revision rev (else ErrConflict: someone changed it since it was read, or
// ErrNotFound), with et.Rev = rev+1, and raises the catalog's version so
// that ingest drops the schema it cached.
func (s *Store) UpdateEventType(ctx context.Context, et domain.EventType, rev int64) (domain.EventType, error) {
	et.Rev = rev + 1
	it, err := marshal(et, key(eventTypesPK(et.AccountID), eventTypeSK(et.Name)))
	if err != nil {
		return et, err
	}
	r, err := s.transact(ctx,
		part{"version", types.TransactWriteItem{Update: &types.Update{
			TableName: s.table, Key: key(accountPK(et.AccountID), skAccount),
			UpdateExpression: aws.String("ADD catalog_version :one"), ConditionExpression: aws.String("attribute_exists(pk)"),
			ExpressionAttributeValues: item{":one": num(1)},
		}}},
		part{"type", types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: it,
			ConditionExpression:       aws.String("rev = :rev"),
			ExpressionAttributeValues: item{":rev": num(rev)}}}},
	)
	switch {
	case r.has("type"):
		if _, err := s.GetEventType(ctx, et.AccountID, et.Name); err != nil {
			return et, err
		}
		return et, ErrConflict
	case r.has("version"):
		return et, ErrNotFound
	}
	return et, err
}

// EventTypePage is one page of a catalog, by name; After is where the next
// page starts ("" at the end).
type EventTypePage struct {
	Types []domain.EventType
	After string
}

// ListEventTypes reads up to limit types of the account's catalog by name,
// after the name after ("" from the start).
func (s *Store) ListEventTypes(ctx context.Context, accountID string, limit int32, after string) (EventTypePage, error) {
	in := &dynamodb.QueryInput{
		TableName: s.table, KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: item{":pk": str(eventTypesPK(accountID))},
		Limit:                     aws.Int32(limit), ConsistentRead: aws.Bool(true),
	}
	if after != "" {
		in.ExclusiveStartKey = key(eventTypesPK(accountID), eventTypeSK(after))
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return EventTypePage{}, err
	}
	page := EventTypePage{Types: make([]domain.EventType, 0, len(out.Items))}
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &page.Types); err != nil {
		return EventTypePage{}, err
	}
	if out.LastEvaluatedKey != nil && len(page.Types) > 0 {
		page.After = page.Types[len(page.Types)-1].Name
	}
	return page, nil
}

// EventTypeNames reads the whole catalog's names and whether each is
// deprecated (no schemas, descriptions or examples are decoded), for
// checking an endpoint's filter. It is a management call: DynamoDB still
// bills the whole items read.
func (s *Store) EventTypeNames(ctx context.Context, accountID string) ([]domain.EventType, error) {
	var out []domain.EventType
	var start item
	for {
		res, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: s.table, KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: item{":pk": str(eventTypesPK(accountID))},
			ProjectionExpression:      aws.String("#n, deprecated"),
			ExpressionAttributeNames:  map[string]string{"#n": "name"},
			ExclusiveStartKey:         start, ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, err
		}
		var page []domain.EventType
		if err := attributevalue.UnmarshalListOfMaps(res.Items, &page); err != nil {
			return nil, err
		}
		out = append(out, page...)
		if res.LastEvaluatedKey == nil {
			return out, nil
		}
		start = res.LastEvaluatedKey
	}
}
