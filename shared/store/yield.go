package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// YieldClaim gives back a claim that made no request (its rate-limit slot
// turned out to be far: the message goes back for it): the delivery returns
// to what it was before ClaimAttempt (the attempt count one lower, no claim,
// no lease, seen's updated_at), and the endpoint slot the claim held is
// freed. seen is the delivery as read before the claim, claimed as the claim
// returned it. Conditional on still holding the claim: ErrConflict when it
// was lost, and then nothing of the delivery is written. An attempt the
// claim logged as interrupted stays logged: that one did happen.
func (s *Store) YieldClaim(ctx context.Context, seen, claimed domain.Delivery, c Claim) error {
	delivery := &types.Update{
		TableName: s.table, Key: key(deliveryPK(claimed.ID), skDelivery),
		UpdateExpression:         aws.String("SET attempts = :prev, updated_at = :upd REMOVE claim, claim_attempt, lease_until"),
		ConditionExpression:      aws.String("claim = :c AND attempts = :n AND #st = :pending"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":c": str(c.ID), ":n": num(int64(claimed.Attempts)), ":prev": num(int64(claimed.Attempts - 1)),
			":upd": num(seen.UpdatedAt), ":pending": str(domain.StatusPending)},
	}
	if c.Slot == "" {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: delivery.TableName, Key: delivery.Key, UpdateExpression: delivery.UpdateExpression,
			ConditionExpression: delivery.ConditionExpression, ExpressionAttributeNames: delivery.ExpressionAttributeNames,
			ExpressionAttributeValues: delivery.ExpressionAttributeValues,
		})
		if isConditionFailed(err) {
			return ErrConflict
		}
		return err
	}
	slot := &types.Update{
		TableName: s.table, Key: key(accountPK(claimed.AccountID), endpointSK(claimed.EndpointID)),
		UpdateExpression:          aws.String("REMOVE leases.#slot"),
		ConditionExpression:       aws.String("leases.#slot.c = :c"),
		ExpressionAttributeNames:  map[string]string{"#slot": c.Slot},
		ExpressionAttributeValues: item{":c": str(c.ID)},
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: delivery}, {Update: slot}}})
	reasons := cancelReasons(err)
	if !onlyConditionFailures(reasons) {
		return err
	}
	// One part no longer holds: write the other alone. The slot part fails
	// when its lease was taken over or the endpoint deleted; the delivery
	// part when the claim was lost (its slot is still ours to free).
	deliveryLost := aws.ToString(reasons[0].Code) == "ConditionalCheckFailed"
	rest := delivery
	if deliveryLost {
		rest = slot
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: rest}}})
	if cancelReasons(err) != nil && onlyConditionFailures(cancelReasons(err)) {
		err = nil // that part does not hold either
		deliveryLost = true
	}
	if err == nil && deliveryLost {
		return ErrConflict
	}
	return err
}
