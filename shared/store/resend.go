package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
)

// ClaimManual starts a manual resend: it writes the attempt, in progress
// with the claim's lease, under the id the API gave it (so a duplicate queue
// message finds it taken and does nothing: ErrDuplicate), with one
// conditional put. An attempt left in progress by a worker that died is
// taken over once its lease has run out, so an accepted resend is never
// lost. The delivery itself is not touched: a resend does not change its
// automatic series.
func (s *Store) ClaimManual(ctx context.Context, a domain.Attempt, c Claim) error {
	a.Outcome = domain.OutcomeInProgress
	it, err := marshal(a, key(deliveryPK(a.DeliveryID), attemptSK(a.ID)))
	if err != nil {
		return err
	}
	it["lease_until"] = num(c.LeaseUntil)
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR (outcome = :ip AND lease_until < :now)"),
		ExpressionAttributeValues: item{":ip": str(domain.OutcomeInProgress), ":now": num(domain.Millis(s.now()))}})
	if isConditionFailed(err) {
		return ErrDuplicate // this resend was already made
	}
	return err
}

// FinishManual records a manual attempt's result (conditioned on it being
// still in progress) and the endpoint's health when it changed.
func (s *Store) FinishManual(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, c Claim, a domain.Attempt, o Outcome) error {
	it, err := marshal(a, key(deliveryPK(a.DeliveryID), attemptSK(a.ID)))
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it, ConditionExpression: aws.String("outcome = :ip"),
		ExpressionAttributeValues: item{":ip": str(domain.OutcomeInProgress)}})
	if isConditionFailed(err) {
		return ErrConflict // recorded already
	}
	if err != nil {
		return err
	}
	return s.updateHealth(ctx, d, ep, a, o)
}

// YieldManual gives back a manual claim that made no request (claimed too
// late for its rate slot's second: the message goes back for a new slot).
// Its in-progress attempt is deleted, so that the message claims it again
// rather than finding it taken (ErrDuplicate would drop an accepted
// resend). The delete is conditional on the
// attempt being still this claim's (in progress, this lease): ErrConflict
// when it is not, and then nothing is deleted.
func (s *Store) YieldManual(ctx context.Context, d domain.Delivery, c Claim) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: key(deliveryPK(d.ID), attemptSK(c.AttemptID)),
		ConditionExpression:       aws.String("outcome = :ip AND lease_until = :l"),
		ExpressionAttributeValues: item{":ip": str(domain.OutcomeInProgress), ":l": num(c.LeaseUntil)}})
	if isConditionFailed(err) {
		return ErrConflict
	}
	return err
}
