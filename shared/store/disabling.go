package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
)

// WarnDisabling marks ep (as read before an attempt that
// lifecycle.WarnsDisabling) warned at at that it is about to be disabled:
// one conditional write, on failing_since still being the one read and
// disable_warned_at absent. won: this call set it, so its caller states
// endpoint.disabling; false: another attempt did, or the failing period
// ended (recovered, enabled again) or the endpoint was deleted. A
// duplicate or concurrent attempt thus warns once per failing period;
// disable_warned_at goes with failing_since (a success, an enable).
func (s *Store) WarnDisabling(ctx context.Context, ep domain.Endpoint, at time.Time) (won bool, err error) {
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(ep.AccountID), endpointSK(ep.ID)),
		UpdateExpression:          aws.String("SET disable_warned_at = :at"),
		ConditionExpression:       aws.String("failing_since = :fs AND attribute_not_exists(disable_warned_at)"),
		ExpressionAttributeValues: item{":at": num(domain.Millis(at)), ":fs": num(ep.FailingSince)},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	return err == nil, err
}
