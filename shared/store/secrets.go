package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// RotateSecret puts a new secret first; the current one keeps signing for
// r.Grace (the receiver sees two v1= signatures meanwhile), as
// domain.RotateSecrets decides: ErrPreviousSecretLive while an older one
// still signs, unless r.ExpirePreviousNow. r.NewSecret and r.Grace are the
// caller's; the time is the store's. The write is conditioned on the
// endpoint not having changed since it was read, so two rotations cannot
// lose a secret or make a third live one.
func (s *Store) RotateSecret(ctx context.Context, accountID, id string, r domain.Rotation) (domain.Endpoint, error) {
	for try := 0; try < 3; try++ {
		ep, err := s.GetEndpoint(ctx, accountID, id)
		if err != nil {
			return ep, err
		}
		now := domain.Millis(s.now())
		r.Now = now
		secrets, err := domain.RotateSecrets(ep.Secrets, r)
		if err != nil {
			return ep, err
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
		// A new route, as a PATCH that re-points the endpoint gives: a worker
		// that read the endpoint before this answered (a load of ingest's
		// first message is eventually consistent) takes no slot to sign
		// with the secrets it read.
		route := domain.NewID("rte")
		out, err := s.updateRouted(ctx, &dynamodb.UpdateItemInput{
			TableName: s.table, Key: key(accountPK(accountID), endpointSK(id)),
			UpdateExpression:          aws.String("SET secrets = :s, updated_at = :now, route = :route"),
			ConditionExpression:       aws.String("attribute_exists(pk) AND updated_at = :seen"),
			ExpressionAttributeValues: item{":s": av, ":now": num(now), ":seen": num(ep.UpdatedAt), ":route": str(route)},
			ReturnValues:              types.ReturnValueAllNew,
		}, id, route)
		if isConditionFailed(err) {
			continue // changed (or deleted) since we read it: read again
		}
		if err != nil {
			return ep, err
		}
		if err := attributevalue.UnmarshalMap(out, &ep); err != nil {
			return ep, err
		}
		_, err = s.openSecrets(ctx, &ep)
		return ep, err
	}
	return domain.Endpoint{}, ErrConflict
}
