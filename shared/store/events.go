package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

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
	// Unlisted keeps the event out of the account's event listing
	// (AccountEvents): a test event is for one endpoint and is never
	// replayed to another.
	Unlisted bool
}

// CreateEvent writes the deliveries, then the event: the event's
// conditional put is the commit point (with an idempotency key, the key's
// claim and the event in one transaction). No transaction holds the
// deliveries: they cost one write unit each instead of two. A delivery whose
// event was never written is an orphan: when the commit is known to have
// failed (the key was taken, a condition, or writing the deliveries failed)
// they are deleted at once; a process that dies between the two writes
// leaves them for LoadForAttempt, which drops and deletes them once they
// are older than OrphanAfter (the sweeper's re-queue brings them there),
// after the producer was answered with an error (it retries). With an
// idempotency key, if an unexpired claim exists, the event is not written
// and ErrDuplicate is returned with the id of the first event.
func (s *Store) CreateEvent(ctx context.Context, ne NewEvent) (firstEventID string, err error) {
	ev := ne.Event
	// Listed by its own key: the account's day, the id (AccountEvents).
	extra, ok := eventKey(ev.AccountID, ev.ID)
	if !ok {
		return "", fmt.Errorf("store: event id %q carries no time", ev.ID)
	}
	if ne.Unlisted {
		extra["unlisted"] = &types.AttributeValueMemberBOOL{Value: true}
	}
	evItem, err := marshal(ev, extra)
	if err == nil {
		err = packBody(evItem)
	}
	if err != nil {
		return "", err
	}
	puts := make([]types.WriteRequest, 0, len(ne.Deliveries))
	for i, d := range ne.Deliveries {
		it, err := deliveryItem(d, ne.DueAt[i])
		if err != nil {
			return "", err
		}
		puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}) // fresh ids: nothing to overwrite
	}
	if err := s.batchWrite(ctx, puts); err != nil {
		s.forgetDeliveries(ctx, ne.Deliveries) // the event is never written after this error
		return "", err
	}
	first, err := s.commitEvent(ctx, ev, evItem)
	if err != nil && (errors.Is(err, ErrDuplicate) || errors.Is(err, ErrIdempotencyMismatch) || errors.Is(err, errNotCommitted)) {
		s.forgetDeliveries(ctx, ne.Deliveries)
	}
	// Any other error may have been applied after all (a timeout): the
	// deliveries stay; if the event is there the sweeper moves them on, if
	// not they are orphans.
	if errors.Is(err, errNotCommitted) {
		return "", ErrConflict
	}
	return first, err
}

// errNotCommitted: the event's conditional put was refused.
var errNotCommitted = errors.New("event not written")

// OrphanAfter is how old a delivery must be before LoadForAttempt takes a
// missing event as never committed (the delivery an orphan) rather than
// still being written: longer than the api function's timeout (15 s).
const OrphanAfter = 2 * time.Minute

// commitEvent writes the event (with its idempotency key's claim).
func (s *Store) commitEvent(ctx context.Context, ev domain.Event, evItem item) (string, error) {
	put := &types.Put{TableName: s.table, Item: evItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}
	if ev.IdempotencyKey == "" {
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item, ConditionExpression: put.ConditionExpression})
		if isConditionFailed(err) {
			return "", errNotCommitted
		}
		return ev.ID, err
	}
	bodyHash := sha256.Sum256(ev.Body)
	claim := part{"idempotency", types.TransactWriteItem{Put: &types.Put{
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
	}}}
	r, err := s.transact(ctx, claim, part{"event", types.TransactWriteItem{Put: put}})
	if taken, ok := r["idempotency"]; ok {
		var prior struct {
			EventID string `dynamodbav:"event_id"`
			Body    []byte `dynamodbav:"body_sha256"`
		}
		if taken.Item != nil {
			if err := attributevalue.UnmarshalMap(taken.Item, &prior); err != nil {
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
	if r != nil {
		return "", errNotCommitted
	}
	return ev.ID, err
}

// forgetDeliveries deletes the deliveries of an event that was not written.
// Best effort: what is left is an orphan, which LoadForAttempt deletes.
func (s *Store) forgetDeliveries(ctx context.Context, ds []domain.Delivery) {
	dels := make([]types.WriteRequest, 0, len(ds))
	for _, d := range ds {
		dels = append(dels, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(deliveryPK(d.ID), skDelivery)}})
	}
	_ = s.batchWrite(context.WithoutCancel(ctx), dels)
}

// deleteOrphan deletes a delivery whose event was never written. It was
// never attempted (no worker claims a delivery without its event), so the
// condition keeps any other delivery.
func (s *Store) deleteOrphan(ctx context.Context, d domain.Delivery) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: key(deliveryPK(d.ID), skDelivery),
		ConditionExpression:       aws.String("#st = :pending AND attempts = :zero AND event_id = :ev"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":pending": str(domain.StatusPending), ":zero": num(0), ":ev": str(d.EventID)},
	})
	if isConditionFailed(err) {
		return nil
	}
	return err
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

// GetEvent reads an event of an account; an expired one, or another
// account's, is ErrNotFound.
func (s *Store) GetEvent(ctx context.Context, accountID, id string) (domain.Event, error) {
	it, err := s.getEventItem(ctx, accountID, id, true)
	if err != nil {
		return domain.Event{}, err
	}
	ev, err := eventOf(it)
	if err != nil {
		return ev, err
	}
	if domain.Expired(ev.ExpiresAt, s.now()) || ev.AccountID != accountID {
		return domain.Event{}, ErrNotFound
	}
	return ev, nil
}

// getEventItem reads an event's item where it is (eventKey), or where it
// was stored before (legacyEventKey).
func (s *Store) getEventItem(ctx context.Context, accountID, id string, consistent bool) (item, error) {
	if k, ok := eventKey(accountID, id); ok {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: k, ConsistentRead: aws.Bool(consistent)})
		if err != nil {
			return nil, err
		}
		if out.Item != nil {
			return out.Item, nil
		}
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: legacyEventKey(id), ConsistentRead: aws.Bool(consistent)})
	if err != nil {
		return nil, err
	}
	if out.Item == nil {
		return nil, ErrNotFound
	}
	return out.Item, nil
}
