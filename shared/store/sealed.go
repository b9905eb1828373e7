package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// Sealer encrypts the secrets the table keeps (package envelope's Keyring):
// aad names the item a value belongs to, so it opens only there.
type Sealer interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// SealWith makes the store keep endpoint secrets and signing keys only
// sealed by x. Every deployed function has one (onlambda.FromEnv); a store
// without one (tests and tools on the emulators) writes secrets as they are
// and cannot read sealed ones.
func (s *Store) SealWith(x Sealer) *Store {
	s.sealer = x
	return s
}

// ErrNoSealer: an item holds a sealed secret and the store has no Sealer.
var ErrNoSealer = errors.New("store: the item is sealed and no KMS key is configured (KMS_KEY_ID)")

// itemAAD names an item for the associated data of what is sealed in it.
func itemAAD(pk, sk string) []byte { return []byte(pk + "\x00" + sk) }

// sealSecrets returns secrets as they are stored: each sealed, Value empty.
// A secret read from an old plaintext item is sealed here, on its item's
// next write of the secrets.
func (s *Store) sealSecrets(ctx context.Context, accountID, endpointID string, secrets []domain.Secret) ([]domain.Secret, error) {
	if s.sealer == nil {
		return secrets, nil
	}
	aad := itemAAD(accountPK(accountID), endpointSK(endpointID))
	out := make([]domain.Secret, len(secrets))
	for i, sec := range secrets {
		if sec.Value != "" {
			sealed, err := s.sealer.Seal(ctx, []byte(sec.Value), aad)
			if err != nil {
				return nil, err
			}
			sec.Sealed, sec.Value = sealed, ""
		}
		out[i] = sec
	}
	return out, nil
}

// openSecrets fills each sealed secret's Value. plaintext reports a secret
// stored unsealed (an item written before sealing).
func (s *Store) openSecrets(ctx context.Context, ep *domain.Endpoint) (plaintext bool, err error) {
	aad := itemAAD(accountPK(ep.AccountID), endpointSK(ep.ID))
	for i := range ep.Secrets {
		sec := &ep.Secrets[i]
		if sec.Sealed == nil {
			plaintext = plaintext || sec.Value != ""
			continue
		}
		if s.sealer == nil {
			return false, ErrNoSealer
		}
		v, err := s.sealer.Open(ctx, sec.Sealed, aad)
		if err != nil {
			return false, fmt.Errorf("endpoint %s secret: %w", ep.ID, err)
		}
		sec.Value = string(v)
	}
	return plaintext, nil
}

// resealPlaintext seals the secrets of an endpoint read with plaintext
// ones, if it has not changed since (updated_at). Best effort: a lost race
// leaves them for the next write.
func (s *Store) resealPlaintext(ctx context.Context, ep domain.Endpoint) error {
	if s.sealer == nil {
		return nil
	}
	sealed, err := s.sealSecrets(ctx, ep.AccountID, ep.ID, ep.Secrets)
	if err != nil {
		return err
	}
	av, err := attributevalue.Marshal(sealed)
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(ep.AccountID), endpointSK(ep.ID)),
		UpdateExpression:          aws.String("SET secrets = :s"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND updated_at = :seen"),
		ExpressionAttributeValues: item{":s": av, ":seen": num(ep.UpdatedAt)},
	})
	if isConditionFailed(err) {
		return nil
	}
	return err
}

// The data key (package envelope) is one item of its own.
const (
	pkKeyring = "KEYRING"
	skDataKey = "DATAKEY#1"
)

// DataKey is the stored encrypted data key, nil when there is none (envelope.Blobs).
func (s *Store) DataKey(ctx context.Context) ([]byte, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: key(pkKeyring, skDataKey), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	if b, ok := out.Item["blob"].(*types.AttributeValueMemberB); ok {
		return b.Value, nil
	}
	return nil, nil
}

// CreateDataKey stores blob unless a data key is there, and returns the
// stored one (envelope.Blobs).
func (s *Store) CreateDataKey(ctx context.Context, blob []byte) ([]byte, error) {
	it := key(pkKeyring, skDataKey)
	it["blob"] = &types.AttributeValueMemberB{Value: blob}
	it["created_at"] = num(domain.Millis(s.now()))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if isConditionFailed(err) {
		return s.DataKey(ctx)
	}
	if err != nil {
		return nil, err
	}
	return blob, nil
}
