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
	"github.com/gifq/webhooks/shared/schema"
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
// conditional claim just before it: claimKey). No transaction holds the
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
	if err != nil && (errors.Is(err, ErrDuplicate) || errors.Is(err, ErrIdempotencyMismatch) || errors.Is(err, ErrKeyInProgress) || errors.Is(err, errNotCommitted)) {
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

// KeyTakeoverAfter is how old an idempotency key's claim whose event is
// missing must be before a retry takes it over: its request has timed out
// (schema.APITimeout) by then, with as much again to spare. A producer
// whose request died between the two writes waits no longer than this.
const KeyTakeoverAfter = 2 * schema.APITimeout

// commitEvent writes the event, after its idempotency key's claim.
func (s *Store) commitEvent(ctx context.Context, ev domain.Event, evItem item) (string, error) {
	if ev.IdempotencyKey != "" {
		if first, err := s.claimKey(ctx, ev); err != nil {
			return first, err
		}
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: evItem, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if isConditionFailed(err) {
		s.dropKey(ctx, ev)
		return "", errNotCommitted
	}
	return ev.ID, err // another error may have been applied: the key's claim stays, for a retry to find (claimKey)
}

// An idempotency key's claim, IDEM#<account>#<hash of the key>, names the
// event it was taken for and the body's hash; it is written just before
// that event, with no transaction (half the write units), so a claim may
// name an event that is not there: its request is still writing it, or
// died between the two writes. A retry with the key and body reads the
// event then: there, it is the same event (ErrDuplicate); missing and
// claimed less than KeyTakeoverAfter ago, ErrKeyInProgress (409: retry
// shortly); missing and older, that request can no longer write it (it
// has timed out), so the retry takes the claim over and
// writes its own event. Nothing is lost (the first event was never
// answered as accepted) and nothing is sent twice (its deliveries are
// orphans, never attempted, since their event never comes).

// ErrKeyInProgress: the idempotency key's first request is still writing
// its event (or died doing so less than KeyTakeoverAfter ago).
var ErrKeyInProgress = errors.New("idempotency key in use by a request still in progress")

type keyClaim struct {
	EventID string `dynamodbav:"event_id"`
	Body    []byte `dynamodbav:"body_sha256"`
	TTL     int64  `dynamodbav:"ttl"`
}

// claimKey claims ev's idempotency key for it: "" and nil when it is ev's
// now; the first event's id with ErrDuplicate (written, same body),
// ErrIdempotencyMismatch (another body) or ErrKeyInProgress.
func (s *Store) claimKey(ctx context.Context, ev domain.Event) (string, error) {
	bodyHash := sha256.Sum256(ev.Body)
	k := key(idempotencyPK(ev.AccountID, ev.IdempotencyKey), skIdempotency)
	it := item{"event_id": str(ev.ID), "body_sha256": &types.AttributeValueMemberB{Value: bodyHash[:]},
		"ttl": num(s.now().Add(domain.IdempotencyWindow).Unix())}
	for name, v := range k {
		it[name] = v
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it,
		// An expired claim (DynamoDB deletes late) may be taken; one naming
		// ev is this very write, retried by the SDK.
		ConditionExpression:                 aws.String("attribute_not_exists(pk) OR #ttl <= :now OR event_id = :me"),
		ExpressionAttributeNames:            map[string]string{"#ttl": "ttl"},
		ExpressionAttributeValues:           item{":now": num(s.now().Unix()), ":me": str(ev.ID)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return "", err
	}
	var prior keyClaim
	if err := attributevalue.UnmarshalMap(ccf.Item, &prior); err != nil {
		return "", err
	}
	first, err := s.priorOf(ctx, ev.AccountID, prior, ev.Body)
	if !errors.Is(err, ErrNotFound) {
		return first, err
	}
	// Its event was never written: take the claim over from it.
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it,
		ConditionExpression:       aws.String("event_id = :prior OR event_id = :me"),
		ExpressionAttributeValues: item{":prior": str(prior.EventID), ":me": str(ev.ID)},
	})
	if isConditionFailed(err) {
		return prior.EventID, ErrKeyInProgress // another retry took it over first
	}
	return "", err
}

// priorOf is what an idempotency key's claim means for a request with
// body: ErrDuplicate with its event's id when that event is written and
// the body the same, ErrIdempotencyMismatch with another body,
// ErrKeyInProgress when the event is not written (yet), ErrNotFound when
// the claim has expired or its event will never be written.
func (s *Store) priorOf(ctx context.Context, accountID string, prior keyClaim, body []byte) (string, error) {
	if domain.Expired(prior.TTL, s.now()) {
		return "", ErrNotFound
	}
	if h := sha256.Sum256(body); !bytes.Equal(h[:], prior.Body) {
		return prior.EventID, ErrIdempotencyMismatch
	}
	switch _, err := s.getEventItem(ctx, accountID, prior.EventID, true); {
	case err == nil:
		return prior.EventID, ErrDuplicate
	case !errors.Is(err, ErrNotFound):
		return "", err
	}
	if ms, ok := domain.IDMillis(prior.EventID); ok && s.now().Sub(time.UnixMilli(ms)) >= KeyTakeoverAfter {
		return "", ErrNotFound
	}
	return prior.EventID, ErrKeyInProgress
}

// dropKey deletes ev's claim of its idempotency key after its event was
// refused. Best effort: a claim left names an event never written, which a
// retry takes over past KeyTakeoverAfter.
func (s *Store) dropKey(ctx context.Context, ev domain.Event) {
	if ev.IdempotencyKey == "" {
		return
	}
	_, _ = s.db.DeleteItem(context.WithoutCancel(ctx), &dynamodb.DeleteItemInput{TableName: s.table,
		Key:                       key(idempotencyPK(ev.AccountID, ev.IdempotencyKey), skIdempotency),
		ConditionExpression:       aws.String("event_id = :me"),
		ExpressionAttributeValues: item{":me": str(ev.ID)},
	})
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
// one, ErrKeyInProgress while its first event is being written, ErrNotFound
// when it is free. CreateEvent still decides a race.
func (s *Store) PriorEvent(ctx context.Context, accountID, idempotencyKey string, body []byte) (string, error) {
	var prior keyClaim
	if err := s.get(ctx, key(idempotencyPK(accountID, idempotencyKey), skIdempotency), &prior); err != nil {
		return "", err
	}
	return s.priorOf(ctx, accountID, prior, body)
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
