package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// APIKeyPrefix starts every API key.
const APIKeyPrefix = "gifq_"

// maxAPIKeyLength bounds a key the store accepts or looks up.
const maxAPIKeyLength = 128

// NewAPIKeySecret returns a fresh API key: gifq_ and 32 random bytes.
func NewAPIKeySecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("store: no randomness: " + err.Error())
	}
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// CreateAPIKey makes a new key for an account and returns it in clear text,
// the only time it exists outside the caller: the table keeps its SHA-256.
func (s *Store) CreateAPIKey(ctx context.Context, accountID string) (domain.APIKey, string, error) {
	secret := NewAPIKeySecret()
	k, err := s.AddAPIKey(ctx, accountID, secret)
	return k, secret, err
}

// AddAPIKey stores a key chosen by the caller (local development's
// DEV_API_KEY); it must look like one we would make.
func (s *Store) AddAPIKey(ctx context.Context, accountID, secret string) (domain.APIKey, error) {
	if !strings.HasPrefix(secret, APIKeyPrefix) || len(secret) < len(APIKeyPrefix)+16 || len(secret) > maxAPIKeyLength {
		return domain.APIKey{}, errors.New("an API key starts with " + APIKeyPrefix + " and has 16 to 123 more characters")
	}
	k := domain.APIKey{ID: domain.NewID("key"), AccountID: accountID, Prefix: secret[:len(APIKeyPrefix)+6], CreatedAt: domain.Millis(s.now())}
	hash := hashHex(secret)
	byHash, err := marshal(k, key(apiKeyPK(hash), skAPIKey))
	if err != nil {
		return k, err
	}
	ref, err := marshal(k, key(accountPK(accountID), keyRefSK(k.ID)))
	if err != nil {
		return k, err
	}
	ref["key_hash"] = str(hash)
	r, err := s.transact(ctx,
		part{"account", types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: s.table, Key: key(accountPK(accountID), skAccount), ConditionExpression: aws.String("attribute_exists(pk)")}}},
		part{"key", types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: byHash, ConditionExpression: aws.String("attribute_not_exists(pk)")}}},
		part{"ref", types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: ref}}},
	)
	switch {
	case r.has("account"):
		return k, ErrNotFound
	case r != nil:
		return k, ErrDuplicate
	}
	return k, err
}

// RevokeAPIKey revokes one of an account's keys; it stops working at once.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, keyID string) error {
	var ref struct {
		Hash string `dynamodbav:"key_hash"`
	}
	if err := s.get(ctx, key(accountPK(accountID), keyRefSK(keyID)), &ref); err != nil {
		return err
	}
	now := num(domain.Millis(s.now()))
	set := func(k item) *types.Update {
		return &types.Update{TableName: s.table, Key: k, UpdateExpression: aws.String("SET revoked_at = :t"),
			ConditionExpression: aws.String("attribute_exists(pk)"), ExpressionAttributeValues: item{":t": now}}
	}
	r, err := s.transact(ctx,
		part{"key", types.TransactWriteItem{Update: set(key(apiKeyPK(ref.Hash), skAPIKey))}},
		part{"ref", types.TransactWriteItem{Update: set(key(accountPK(accountID), keyRefSK(keyID)))}},
	)
	if r != nil {
		return ErrNotFound // its items are gone
	}
	return err
}

// ListAPIKeys lists an account's keys (never their secrets).
func (s *Store) ListAPIKeys(ctx context.Context, accountID string) ([]domain.APIKey, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: s.table, KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: item{":pk": str(accountPK(accountID)), ":p": str(keyRefSK(""))},
	})
	if err != nil {
		return nil, err
	}
	var keys []domain.APIKey
	err = attributevalue.UnmarshalListOfMaps(out.Items, &keys)
	return keys, err
}

// ErrUnauthorized means the key is unknown or revoked.
var ErrUnauthorized = errors.New("unknown or revoked API key")

// Authenticate resolves a bearer key to its account.
func (s *Store) Authenticate(ctx context.Context, secret string) (domain.APIKey, error) {
	var k domain.APIKey
	if !strings.HasPrefix(secret, APIKeyPrefix) || len(secret) > maxAPIKeyLength {
		return k, ErrUnauthorized
	}
	// Eventually consistent: a key is read far more often than it changes.
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: key(apiKeyPK(hashHex(secret)), skAPIKey)})
	if err != nil {
		return k, err
	}
	if out.Item == nil {
		return k, ErrUnauthorized
	}
	if err := attributevalue.UnmarshalMap(out.Item, &k); err != nil {
		return k, err
	}
	if k.RevokedAt != 0 {
		return k, ErrUnauthorized
	}
	return k, nil
}
