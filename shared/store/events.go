package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// NewEvent is what ingest writes: the event, its deliveries, and the
// idempotency key if the producer sent one.
type NewEvent struct {
	Event      domain.Event
	Deliveries []domain.Delivery
	// DueAt is, per delivery, when its first attempt is planned (its rate
	// limit slot); the sweeper looks for it only after that.
	DueAt []int64
}

// CreateEvent writes the event and all its deliveries in one transaction:
// either all of them exist or none does. With an idempotency key, the key is
// claimed in the same transaction; if an unexpired claim exists, nothing is
// written and ErrDuplicate is returned with the id of the first event.
func (s *Store) CreateEvent(ctx context.Context, ne NewEvent) (firstEventID string, err error) {
	ev := ne.Event
	evItem, err := marshal(ev, key(eventPK(ev.ID), skEvent))
	if err != nil {
		return "", err
	}
	var tx []types.TransactWriteItem
	if ev.IdempotencyKey != "" {
		bodyHash := sha256.Sum256(ev.Body)
		tx = append(tx, types.TransactWriteItem{Put: &types.Put{
			TableName: s.table,
			Item: item{
				"pk": str(idempotencyPK(ev.AccountID, ev.IdempotencyKey)), "sk": str(skIdempotency),
				"event_id": str(ev.ID), "body_sha256": &types.AttributeValueMemberB{Value: bodyHash[:]},
				"ttl": num(s.now().Add(domain.IdempotencyWindow).Unix()),
			},
			// An expired claim (DynamoDB deletes late) may be taken over.
			ConditionExpression:                 aws.String("attribute_not_exists(pk) OR #ttl <= :now"),
			ExpressionAttributeNames:            map[string]string{"#ttl": "ttl"},
			ExpressionAttributeValues:           item{":now": num(s.now().Unix())},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}})
	}
	tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: evItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}})
	for i, d := range ne.Deliveries {
		it, err := deliveryItem(d, ne.DueAt[i])
		if err != nil {
			return "", err
		}
		tx = append(tx, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
	reasons := cancelReasons(err)
	if ev.IdempotencyKey != "" && len(reasons) > 0 && aws.ToString(reasons[0].Code) == "ConditionalCheckFailed" {
		var prior struct {
			EventID string `dynamodbav:"event_id"`
			Body    []byte `dynamodbav:"body_sha256"`
		}
		if reasons[0].Item != nil {
			if err := attributevalue.UnmarshalMap(reasons[0].Item, &prior); err != nil {
				return "", err
			}
		} else if err := s.get(ctx, key(idempotencyPK(ev.AccountID, ev.IdempotencyKey), skIdempotency), &prior); err != nil {
			return "", err
		}
		if h := sha256.Sum256(ev.Body); !bytes.Equal(h[:], prior.Body) {
			return prior.EventID, ErrIdempotencyMismatch
		}
		return prior.EventID, ErrDuplicate
	}
	return ev.ID, err
}

// PriorEvent looks an idempotency key up before anything is reserved or
// written: ErrDuplicate with the first event's id when the key was used
// (unexpired) with the same body, ErrIdempotencyMismatch with a different
// one, ErrNotFound when it is free. CreateEvent still decides a race.
func (s *Store) PriorEvent(ctx context.Context, accountID, idempotencyKey string, body []byte) (string, error) {
	var prior struct {
		EventID string `dynamodbav:"event_id"`
		Body    []byte `dynamodbav:"body_sha256"`
		TTL     int64  `dynamodbav:"ttl"`
	}
	if err := s.get(ctx, key(idempotencyPK(accountID, idempotencyKey), skIdempotency), &prior); err != nil {
		return "", err
	}
	if domain.Expired(prior.TTL, s.now()) {
		return "", ErrNotFound
	}
	if h := sha256.Sum256(body); !bytes.Equal(h[:], prior.Body) {
		return prior.EventID, ErrIdempotencyMismatch
	}
	return prior.EventID, ErrDuplicate
}

// ErrIdempotencyMismatch: the key was used before with a different body.
var ErrIdempotencyMismatch = errors.New("idempotency key reused with a different body")

// GetEvent reads an event; an expired one is ErrNotFound.
func (s *Store) GetEvent(ctx context.Context, id string) (domain.Event, error) {
	var ev domain.Event
	if err := s.get(ctx, key(eventPK(id), skEvent), &ev); err != nil {
		return ev, err
	}
	if domain.Expired(ev.ExpiresAt, s.now()) {
		return domain.Event{}, ErrNotFound
	}
	return ev, nil
}
