package store

import (
	"context"

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
