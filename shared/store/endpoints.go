package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// CreateEndpoint stores a new endpoint. The account's endpoint count goes up
// in the same transaction, on the condition that it is below the limit, so
// two concurrent registrations cannot make a 17th.
func (s *Store) CreateEndpoint(ctx context.Context, ep domain.Endpoint) error {
	if ep.Leases == nil {
		ep.Leases = map[string]domain.Lease{} // must exist for SET leases.#slot
	}
	it, err := marshal(ep, key(accountPK(ep.AccountID), endpointSK(ep.ID)))
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName: s.table, Key: key(accountPK(ep.AccountID), skAccount),
			UpdateExpression:          aws.String("ADD endpoint_count :one"),
			ConditionExpression:       aws.String("attribute_exists(pk) AND (attribute_not_exists(endpoint_count) OR endpoint_count < :max)"),
			ExpressionAttributeValues: item{":one": num(1), ":max": num(domain.MaxEndpoints)},
		}},
		{Put: &types.Put{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	if reasons := cancelReasons(err); reasons != nil {
		if aws.ToString(reasons[0].Code) == "ConditionalCheckFailed" {
			return ErrLimit
		}
		if onlyConditionFailures(reasons) {
			return ErrDuplicate
		}
	}
	return err
}

// GetEndpoint reads one of an account's endpoints.
func (s *Store) GetEndpoint(ctx context.Context, accountID, id string) (domain.Endpoint, error) {
	var ep domain.Endpoint
	err := s.get(ctx, key(accountPK(accountID), endpointSK(id)), &ep)
	return ep, err
}

// AccountWithEndpoints reads an account and all its endpoints in one query
// (they share the account's partition).
func (s *Store) AccountWithEndpoints(ctx context.Context, accountID string) (domain.Account, []domain.Endpoint, error) {
	var acct domain.Account
	var eps []domain.Endpoint
	var start item
	found := false
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: s.table, KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: item{":pk": str(accountPK(accountID))},
			ExclusiveStartKey:         start, ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return acct, nil, err
		}
		for _, it := range out.Items {
			sk := stringAttr(it, "sk")
			switch {
			case sk == skAccount:
				found = true
				if err := attributevalue.UnmarshalMap(it, &acct); err != nil {
					return acct, nil, err
				}
			case strings.HasPrefix(sk, "EP#"):
				var ep domain.Endpoint
				if err := attributevalue.UnmarshalMap(it, &ep); err != nil {
					return acct, nil, fmt.Errorf("endpoint %s: %w", sk, err)
				}
				eps = append(eps, ep)
			}
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	if !found {
		return acct, nil, ErrNotFound
	}
	return acct, eps, nil
}

// ListEndpoints lists an account's endpoints, oldest first.
func (s *Store) ListEndpoints(ctx context.Context, accountID string) ([]domain.Endpoint, error) {
	_, eps, err := s.AccountWithEndpoints(ctx, accountID)
	return eps, err
}
