package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
)

// YieldClaim gives back a claim that made no request (its rate-limit slot
// turned out to be far: the message goes back for it): the delivery returns
// to what it was before ClaimAttempt (the attempt count one lower, no claim,
// no lease, seen's updated_at). seen is the delivery as read before the
// claim, claimed as the claim returned it. The write is conditional on
// still holding the claim: ErrConflict when it was lost, and then nothing
// is written. An attempt the claim logged as interrupted stays logged: that
// one did happen.
func (s *Store) YieldClaim(ctx context.Context, seen, claimed domain.Delivery, c Claim) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(claimed.ID), skDelivery),
		UpdateExpression:         aws.String("SET attempts = :prev, updated_at = :upd REMOVE claim, claim_attempt, lease_until"),
		ConditionExpression:      aws.String("claim = :c AND attempts = :n AND #st = :pending"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":c": str(c.ID), ":n": num(int64(claimed.Attempts)), ":prev": num(int64(claimed.Attempts - 1)),
			":upd": num(seen.UpdatedAt), ":pending": str(domain.StatusPending)},
	})
	if isConditionFailed(err) {
		return ErrConflict
	}
	return err
}
