package store

import (
	"context"
	"encoding/json"
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

// headersAAD is the associated data of an endpoint's sealed headers: its
// item's, and what the value is, so a sealed secret cannot pass for them.
func headersAAD(accountID, endpointID string) []byte {
	return append(itemAAD(accountPK(accountID), endpointSK(endpointID)), "\x00headers"...)
}

// oauth2AAD is the associated data of an endpoint's sealed OAuth2 client
// secret.
func oauth2AAD(accountID, endpointID string) []byte {
	return append(itemAAD(accountPK(accountID), endpointSK(endpointID)), "\x00oauth2"...)
}

// oauth2KeyAAD is the associated data of an endpoint's sealed OAuth2
// private key (private_key_jwt).
func oauth2KeyAAD(accountID, endpointID string) []byte {
	return append(itemAAD(accountPK(accountID), endpointSK(endpointID)), "\x00oauth2key"...)
}

// tlsKeyAAD is the associated data of an endpoint's sealed TLS client key.
func tlsKeyAAD(accountID, endpointID string) []byte {
	return append(itemAAD(accountPK(accountID), endpointSK(endpointID)), "\x00tls"...)
}

// sealHeaders returns settings as they are stored: the custom headers'
// names and values sealed as one value, Headers empty, and the OAuth2
// client secret and the TLS client key sealed.
func (s *Store) sealHeaders(ctx context.Context, accountID, endpointID string, st domain.EndpointSettings) (domain.EndpointSettings, error) {
	if s.sealer == nil {
		return st, nil
	}
	if o := st.OAuth2; o != nil && o.ClientSecret != "" {
		sealed, err := s.sealer.Seal(ctx, []byte(o.ClientSecret), oauth2AAD(accountID, endpointID))
		if err != nil {
			return st, err
		}
		c := *o
		c.ClientSecret, c.SealedClientSecret = "", sealed
		st.OAuth2 = &c
	}
	if o := st.OAuth2; o != nil && o.PrivateKey != "" {
		sealed, err := s.sealer.Seal(ctx, []byte(o.PrivateKey), oauth2KeyAAD(accountID, endpointID))
		if err != nil {
			return st, err
		}
		c := *o
		c.PrivateKey, c.SealedPrivateKey = "", sealed
		st.OAuth2 = &c
	}
	if t := st.TLS; t != nil && t.KeyPEM != "" {
		sealed, err := s.sealer.Seal(ctx, []byte(t.KeyPEM), tlsKeyAAD(accountID, endpointID))
		if err != nil {
			return st, err
		}
		c := *t
		c.KeyPEM, c.SealedKey = "", sealed
		st.TLS = &c
	}
	if len(st.Headers) == 0 {
		return st, nil
	}
	raw, err := json.Marshal(st.Headers)
	if err != nil {
		return st, err
	}
	sealed, err := s.sealer.Seal(ctx, raw, headersAAD(accountID, endpointID))
	if err != nil {
		return st, err
	}
	st.Headers, st.SealedHeaders = nil, sealed
	return st, nil
}

// openSecrets fills each sealed secret's Value and the custom headers.
// plaintext reports a secret or headers stored unsealed (an item written
// before sealing).
func (s *Store) openSecrets(ctx context.Context, ep *domain.Endpoint) (plaintext bool, err error) {
	if st := &ep.Settings; st.SealedHeaders != nil {
		if s.sealer == nil {
			return false, ErrNoSealer
		}
		raw, err := s.sealer.Open(ctx, st.SealedHeaders, headersAAD(ep.AccountID, ep.ID))
		if err != nil {
			return false, fmt.Errorf("endpoint %s headers: %w", ep.ID, err)
		}
		if err := json.Unmarshal(raw, &st.Headers); err != nil {
			return false, fmt.Errorf("endpoint %s headers: %w", ep.ID, err)
		}
		st.SealedHeaders = nil
	} else {
		plaintext = len(st.Headers) > 0
	}
	if o := ep.Settings.OAuth2; o != nil && o.SealedClientSecret != nil {
		if s.sealer == nil {
			return false, ErrNoSealer
		}
		v, err := s.sealer.Open(ctx, o.SealedClientSecret, oauth2AAD(ep.AccountID, ep.ID))
		if err != nil {
			return false, fmt.Errorf("endpoint %s oauth2 secret: %w", ep.ID, err)
		}
		c := *o
		c.ClientSecret, c.SealedClientSecret = string(v), nil
		ep.Settings.OAuth2 = &c
	} else if o != nil {
		plaintext = plaintext || o.ClientSecret != ""
	}
	if o := ep.Settings.OAuth2; o != nil && o.SealedPrivateKey != nil {
		if s.sealer == nil {
			return false, ErrNoSealer
		}
		v, err := s.sealer.Open(ctx, o.SealedPrivateKey, oauth2KeyAAD(ep.AccountID, ep.ID))
		if err != nil {
			return false, fmt.Errorf("endpoint %s oauth2 private key: %w", ep.ID, err)
		}
		c := *o
		c.PrivateKey, c.SealedPrivateKey = string(v), nil
		ep.Settings.OAuth2 = &c
	} else if o != nil {
		plaintext = plaintext || o.PrivateKey != ""
	}
	if t := ep.Settings.TLS; t != nil && t.SealedKey != nil {
		if s.sealer == nil {
			return false, ErrNoSealer
		}
		v, err := s.sealer.Open(ctx, t.SealedKey, tlsKeyAAD(ep.AccountID, ep.ID))
		if err != nil {
			return false, fmt.Errorf("endpoint %s tls key: %w", ep.ID, err)
		}
		c := *t
		c.KeyPEM, c.SealedKey = string(v), nil
		ep.Settings.TLS = &c
	} else if t != nil {
		plaintext = plaintext || t.KeyPEM != ""
	}
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
	settings, err := s.sealHeaders(ctx, ep.AccountID, ep.ID, ep.Settings)
	if err != nil {
		return err
	}
	av, err := attributevalue.Marshal(sealed)
	if err != nil {
		return err
	}
	sv, err := attributevalue.Marshal(settings)
	if err != nil {
		return err
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(ep.AccountID), endpointSK(ep.ID)),
		UpdateExpression:          aws.String("SET secrets = :s, settings = :set"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND updated_at = :seen"),
		ExpressionAttributeValues: item{":s": av, ":set": sv, ":seen": num(ep.UpdatedAt)},
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

// ResealAll seals every endpoint item still holding a secret or custom
// headers in plain text (written before sealing): one paginated scan of
// the endpoint items, one conditional write per such item (an item changed
// meanwhile was written sealed by that change). It reports the items read
// and sealed. For the operators' re-seal command (infra/ops), with db the
// table's client (the functions' store has no grant to scan).
func (s *Store) ResealAll(ctx context.Context, db Scanner) (read, sealed int, err error) {
	if s.sealer == nil {
		return 0, 0, ErrNoSealer
	}
	var start item
	for {
		out, err := db.Scan(ctx, &dynamodb.ScanInput{
			TableName: s.table, ExclusiveStartKey: start,
			FilterExpression:          aws.String("begins_with(pk, :acct) AND begins_with(sk, :ep)"),
			ExpressionAttributeValues: item{":acct": str(accountPK("")), ":ep": str(endpointSK(""))},
		})
		if err != nil {
			return read, sealed, err
		}
		for _, it := range out.Items {
			var ep domain.Endpoint
			if err := attributevalue.UnmarshalMap(it, &ep); err != nil {
				return read, sealed, err
			}
			read++
			plaintext, err := s.openSecrets(ctx, &ep)
			if err != nil {
				return read, sealed, err
			}
			if !plaintext {
				continue
			}
			if err := s.resealPlaintext(ctx, ep); err != nil {
				return read, sealed, err
			}
			sealed++
		}
		if start = out.LastEvaluatedKey; len(start) == 0 {
			return read, sealed, nil
		}
	}
}

// Scanner reads a whole table (ResealAll).
type Scanner interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}
