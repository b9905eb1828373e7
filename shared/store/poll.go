package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// CommitPollPosition moves a polling endpoint's committed position (an
// event id) forward to position; a position at or behind the one committed
// (a late or repeated commit) leaves it where it is. ErrNotFound: no such
// endpoint.
func (s *Store) CommitPollPosition(ctx context.Context, accountID, endpointID, position string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(accountID), endpointSK(endpointID)),
		UpdateExpression:          aws.String("SET poll_position = :p"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND (attribute_not_exists(poll_position) OR poll_position < :p)"),
		ExpressionAttributeValues: item{":p": str(position)},
	})
	if isConditionFailed(err) {
		var ep struct {
			ID string `dynamodbav:"id"`
		}
		return s.get(ctx, key(accountPK(accountID), endpointSK(endpointID)), &ep) // ErrNotFound, or nil: behind the committed one

	}
	return err
}
