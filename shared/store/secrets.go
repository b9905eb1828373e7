package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// RotateSecret puts a new secret first; the ones before it keep signing
// until now+grace (the receiver sees two v1= signatures meanwhile). Secrets
// already expired are dropped. The write is conditioned on the endpoint not
// having changed since it was read, so two rotations cannot lose a secret.
func (s *Store) RotateSecret(ctx context.Context, accountID, id, newSecret string, grace int64) (domain.Endpoint, error) {
	for try := 0; try < 3; try++ {
		ep, err := s.GetEndpoint(ctx, accountID, id)
		if err != nil {
			return ep, err
		}
		now := domain.Millis(s.now())
		secrets := []domain.Secret{{Value: newSecret, CreatedAt: now}}
		for _, old := range ep.Secrets {
			if old.ExpiresAt == 0 || old.ExpiresAt > now+grace {
				old.ExpiresAt = now + grace
			}
			if old.ExpiresAt > now {
				secrets = append(secrets, old)
			}
		}
		// Sealed, each time: secrets of an item written before sealing are
		// sealed here.
		if secrets, err = s.sealSecrets(ctx, accountID, id, secrets); err != nil {
			return ep, err
		}
		av, err := attributevalue.Marshal(secrets)
		if err != nil {
			return ep, err
		}
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: s.table, Key: key(accountPK(accountID), endpointSK(id)),
			UpdateExpression:          aws.String("SET secrets = :s, updated_at = :now"),
			ConditionExpression:       aws.String("attribute_exists(pk) AND updated_at = :seen"),
			ExpressionAttributeValues: item{":s": av, ":now": num(now), ":seen": num(ep.UpdatedAt)},
			ReturnValues:              types.ReturnValueAllNew,
		})
		if isConditionFailed(err) {
			continue // changed (or deleted) since we read it: read again
		}
		if err != nil {
			return ep, err
		}
		if err := attributevalue.UnmarshalMap(out.Attributes, &ep); err != nil {
			return ep, err
		}
		_, err = s.openSecrets(ctx, &ep)
		return ep, err
	}
	return domain.Endpoint{}, ErrConflict
}
