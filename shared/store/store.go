// Package store is where DynamoDB is spoken: accounts and API keys,
// endpoints, events with their deliveries, the attempt log, and the
// conditional writes that decide who owns an attempt. The item layout is in
// package schema.
package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// DynamoDB is the part of the DynamoDB client the store uses.
type DynamoDB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// Errors callers act on.
var (
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("condition not met") // someone else changed the item first
	ErrLimit     = errors.New("limit reached")
	ErrDuplicate = errors.New("already exists")
	ErrSlotTaken = errors.New("endpoint slot taken") // a claim lost only the endpoint's in-flight slot
	// ErrEndpointChanged: the endpoint was disabled, deleted, re-pointed or
	// its secret rotated since the claim read it (its route moved on);
	// nothing was written.
	ErrEndpointChanged = errors.New("endpoint changed since it was read")
	// ErrOutlives: the wait would end within lifecycle.ExpiryMargin of the
	// item's TTL (or past it), after which DynamoDB may delete it unseen.
	ErrOutlives = errors.New("the wait outlives the item")
)

// Store reads and writes the table.
type Store struct {
	db     DynamoDB
	table  *string
	now    func() time.Time
	sealer Sealer   // nil: secrets are written as they are (SealWith)
	keys   keyCache // opened v1a signing keys per account (signkeys.go)
}

// New returns a Store on table.
func New(db DynamoDB, table string) *Store {
	return &Store{db: db, table: aws.String(table), now: time.Now}
}

// WithClock makes the store read time from now (a simulated clock: the
// soak's simulated days); New's is time.Now.
func (s *Store) WithClock(now func() time.Time) *Store {
	s.now = now
	return s
}

type item = map[string]types.AttributeValue

func str[T ~string](v T) types.AttributeValue { return &types.AttributeValueMemberS{Value: string(v)} }
func num(v int64) types.AttributeValue        { return &types.AttributeValueMemberN{Value: fmt.Sprint(v)} }
func boolean(v bool) types.AttributeValue {
	return &types.AttributeValueMemberBOOL{Value: v}
}

func key(pk, sk string) item { return item{"pk": str(pk), "sk": str(sk)} }

// marshal encodes v and adds the key (and any index) attributes.
func marshal(v any, extra item) (item, error) {
	m, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, err
	}
	for k, a := range extra {
		m[k] = a
	}
	return m, nil
}

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// part is one named write of a transaction.
type part struct {
	name string
	types.TransactWriteItem
}

// refused names the parts of a cancelled transaction whose condition
// failed, with what DynamoDB returned for each (the old item, when asked).
type refused map[string]types.CancellationReason

func (r refused) has(name string) bool { _, ok := r[name]; return ok }

// transact writes parts in one transaction. When conditions alone cancelled
// it, refused names the parts whose condition failed and err is nil; any
// other failure (throttling, a conflict with another transaction) is err.
// A cancellation is read by part name, never by position.
func (s *Store) transact(ctx context.Context, parts ...part) (refused, error) {
	items := make([]types.TransactWriteItem, len(parts))
	for i, p := range parts {
		items[i] = p.TransactWriteItem
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != len(parts) {
		return nil, err
	}
	r := refused{}
	for i, reason := range tce.CancellationReasons {
		switch aws.ToString(reason.Code) {
		case "None":
		case "ConditionalCheckFailed":
			r[parts[i].name] = reason
		default:
			return nil, err
		}
	}
	return r, nil
}

// get reads one item (strongly consistent) into v; ErrNotFound when absent.
func (s *Store) get(ctx context.Context, k item, v any) error {
	it, err := s.getItem(ctx, k)
	if err != nil {
		return err
	}
	return attributevalue.UnmarshalMap(it, v)
}

// getItem reads one item, strongly consistent; ErrNotFound when there is none.
func (s *Store) getItem(ctx context.Context, k item) (item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	if out.Item == nil {
		return nil, ErrNotFound
	}
	return out.Item, nil
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func backoff(attempt int) time.Duration {
	return time.Duration(min(attempt*attempt*25, 1000)) * time.Millisecond
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// conditionItem is the item a failed conditional write returned (ALL_OLD).
func conditionItem(err error) (domain.Delivery, error) {
	var d domain.Delivery
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && ccf.Item != nil {
		return d, attributevalue.UnmarshalMap(ccf.Item, &d)
	}
	return d, ErrNotFound
}

// writeID marks a write of the sweeper's or the scheduler's (Requeue,
// Unpark) on the item it changes, so that a retry of it that fails its
// condition (the SDK retries a write whose answer was lost) can tell its
// own write, taken, from another run's: newWriteID's value, ownWrite's test.
const writeID = "write_id"

func newWriteID() string { return strconv.FormatUint(rand.Uint64(), 36) }

// ownWrite reports whether a failed condition found the item as the write
// with id left it.
func ownWrite(err error, id string) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf) && ccf.Item != nil && stringAttr(ccf.Item, writeID) == id
}

// stringAttr is an item's string attribute, or "".
func stringAttr(it item, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// numberAttr is an item's number attribute as written, or "".
func numberAttr(it item, name string) string {
	if n, ok := it[name].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

// maxBatchGet is how many keys one BatchGetItem reads at most (DynamoDB's limit).
const maxBatchGet = 100

// batchGetAs reads up to maxBatchGet keys, retrying unprocessed keys;
// eventually consistent unless consistent.
func (s *Store) batchGetAs(ctx context.Context, keys []item, consistent bool) ([]item, error) {
	var out []item
	req := map[string]types.KeysAndAttributes{*s.table: {Keys: keys, ConsistentRead: aws.Bool(consistent)}}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt > 0 {
			if err := sleepCtx(ctx, backoff(attempt)); err != nil {
				return nil, err
			}
		}
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Responses[*s.table]...)
		req = res.UnprocessedKeys
	}
	return out, nil
}

// maxBatchWrite is how many requests one BatchWriteItem carries at most (DynamoDB's limit).
const maxBatchWrite = 25

// batchWriteTries bounds the retries of unprocessed items (throttling).
const batchWriteTries = 8

// batchWrite sends the requests, maxBatchWrite at a time, retrying
// unprocessed ones.
func (s *Store) batchWrite(ctx context.Context, reqs []types.WriteRequest) error {
	for start := 0; start < len(reqs); start += maxBatchWrite {
		req := map[string][]types.WriteRequest{*s.table: reqs[start:min(start+maxBatchWrite, len(reqs))]}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt == batchWriteTries {
				return errors.New("batch write: items still unprocessed after retries")
			}
			if attempt > 0 {
				if err := sleepCtx(ctx, backoff(attempt)); err != nil {
					return err
				}
			}
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
			if err != nil {
				return err
			}
			req = out.UnprocessedItems
		}
	}
	return nil
}
