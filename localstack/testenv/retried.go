package testenv

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/store"
)

// WritesTwice is a DynamoDB client whose conditional UpdateItem is made
// twice and answered by the second: a write taken whose answer was lost,
// which the SDK retried (its retry then fails the condition its own first
// try changed).
type WritesTwice struct{ store.DynamoDB }

// UpdateItem makes in twice and answers the second.
func (w WritesTwice) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if in.ConditionExpression != nil {
		_, _ = w.DynamoDB.UpdateItem(ctx, in, o...)
	}
	return w.DynamoDB.UpdateItem(ctx, in, o...)
}
