package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
)

// DeliveryWithAttempts reads a delivery and its whole attempt log, oldest
// attempt first, in one query (they share the delivery's partition).
func (s *Store) DeliveryWithAttempts(ctx context.Context, id string) (domain.Delivery, []domain.Attempt, error) {
	var d domain.Delivery
	var attempts []domain.Attempt
	found := false
	var start Cursor
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: s.table, KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: item{":pk": str(deliveryPK(id))},
			ConsistentRead:            aws.Bool(true), ExclusiveStartKey: start,
		})
		if err != nil {
			return d, nil, err
		}
		for _, it := range out.Items {
			sk := stringAttr(it, "sk")
			if sk == skDelivery {
				if err := attributevalue.UnmarshalMap(it, &d); err != nil {
					return d, nil, err
				}
				found = true
				continue
			}
			var a domain.Attempt
			if err := attributevalue.UnmarshalMap(it, &a); err != nil {
				return d, nil, err
			}
			attempts = append(attempts, a)
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	if !found || domain.Expired(d.ExpiresAt, s.now()) {
		return domain.Delivery{}, nil, ErrNotFound
	}
	return d, attempts, nil
}
