package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// CreateAccount creates an account.
func (s *Store) CreateAccount(ctx context.Context, name string, ratePerSecond float64) (domain.Account, error) {
	a := domain.Account{ID: domain.NewID("acct"), Name: name, RatePerSecond: ratePerSecond, CreatedAt: domain.Millis(s.now())}
	it, err := marshal(a, key(accountPK(a.ID), skAccount))
	if err != nil {
		return a, err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	return a, err
}

// GetAccount reads an account.
func (s *Store) GetAccount(ctx context.Context, id string) (domain.Account, error) {
	var a domain.Account
	err := s.get(ctx, key(accountPK(id), skAccount), &a)
	return a, err
}

// SetAccountRate sets an account's delivery rate limit (0: the deployment default).
func (s *Store) SetAccountRate(ctx context.Context, id string, perSecond float64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(id), skAccount),
		UpdateExpression:          aws.String("SET rate_per_second = :r"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: item{":r": &types.AttributeValueMemberN{Value: formatFloat(perSecond)}},
	})
	if isConditionFailed(err) {
		return ErrNotFound
	}
	return err
}

// EnsureExternalID returns the account's AWS ExternalId, making it on
// first use: one write that keeps a value already there (if_not_exists),
// so two first uses at once agree on one. It never changes afterwards: a
// customer's trust policy names it.
func (s *Store) EnsureExternalID(ctx context.Context, id string) (string, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(id), skAccount),
		UpdateExpression:          aws.String("SET aws_external_id = if_not_exists(aws_external_id, :x)"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: item{":x": str(domain.NewExternalID())},
		// ALL_NEW, not UPDATED_NEW: an update that kept the value may return
		// nothing under UPDATED_NEW (LocalStack's DynamoDB does).
		ReturnValues: types.ReturnValueAllNew,
	})
	if isConditionFailed(err) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", err
	}
	v, ok := out.Attributes["aws_external_id"].(*types.AttributeValueMemberS)
	if !ok {
		return "", errors.New("store: no external id in the answer")
	}
	return v.Value, nil
}
