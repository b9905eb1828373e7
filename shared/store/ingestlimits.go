package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/ratelimit"
)

// Per-key ingest limits (ratelimit.Take). Overrides live on the account
// item (every key of the account) and on the key's reference item under the
// account (that key only); a zero field inherits. The limiter's own item,
// one per key, is ILIM#<key id> / ILIM.

const skIngestLimit = "ILIM"

func ingestLimitPK(keyID string) string { return "ILIM#" + keyID }

// IngestLimitKey is a key's ingest limiter item key, for package ratelimit.
func IngestLimitKey(keyID string) (pk, sk string) { return ingestLimitPK(keyID), skIngestLimit }

// ErrBadLimit: a rate or burst below zero (zero means inherit).
var ErrBadLimit = errors.New("an ingest rate and burst are zero (inherit) or positive")

type limitAttrs struct {
	Rate  float64 `dynamodbav:"ingest_rate,omitempty"`
	Burst int     `dynamodbav:"ingest_burst,omitempty"`
}

// IngestLimits reads the overrides for one key: the account's and the key's.
// One eventually consistent BatchGetItem of two items in one partition.
func (s *Store) IngestLimits(ctx context.Context, accountID, keyID string) (accountLimit, keyLimit ratelimit.Limit, err error) {
	acct, ref := key(accountPK(accountID), skAccount), key(accountPK(accountID), keyRefSK(keyID))
	proj := "sk, ingest_rate, ingest_burst"
	out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		*s.table: {Keys: []map[string]types.AttributeValue{acct, ref}, ProjectionExpression: aws.String(proj)},
	}})
	if err != nil {
		return accountLimit, keyLimit, err
	}
	if len(out.UnprocessedKeys) > 0 {
		return accountLimit, keyLimit, errors.New("store: ingest limits not read (unprocessed keys)")
	}
	for _, it := range out.Responses[*s.table] {
		var a limitAttrs
		if err := attributevalue.UnmarshalMap(it, &a); err != nil {
			return accountLimit, keyLimit, err
		}
		l := ratelimit.Limit{Rate: a.Rate, Burst: a.Burst}
		if sk, _ := it["sk"].(*types.AttributeValueMemberS); sk != nil && sk.Value == skAccount {
			accountLimit = l
		} else {
			keyLimit = l
		}
	}
	return accountLimit, keyLimit, nil
}

// SetAccountIngestLimit sets the ingest limit of every key of an account
// that has none of its own (zero fields: the deployment default).
func (s *Store) SetAccountIngestLimit(ctx context.Context, accountID string, l ratelimit.Limit) error {
	return s.setIngestLimit(ctx, key(accountPK(accountID), skAccount), l)
}

// SetKeyIngestLimit sets one key's own ingest limit (zero fields: the
// account's, or the deployment default).
func (s *Store) SetKeyIngestLimit(ctx context.Context, accountID, keyID string, l ratelimit.Limit) error {
	return s.setIngestLimit(ctx, key(accountPK(accountID), keyRefSK(keyID)), l)
}

func (s *Store) setIngestLimit(ctx context.Context, k item, l ratelimit.Limit) error {
	if l.Rate < 0 || l.Burst < 0 {
		return ErrBadLimit
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: k,
		UpdateExpression:          aws.String("SET ingest_rate = :r, ingest_burst = :b"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: item{":r": &types.AttributeValueMemberN{Value: formatFloat(l.Rate)}, ":b": num(int64(l.Burst))},
	})
	if isConditionFailed(err) {
		return ErrNotFound
	}
	return err
}
