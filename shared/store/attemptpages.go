package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
)

// AttemptPage is a page of a delivery's attempt log, newest first (attempt
// ids are time-ordered); After is the page's last attempt id when older
// ones follow, "" when none does.
type AttemptPage struct {
	Attempts []domain.Attempt
	After    string
}

// DeliveryWithNewestAttempts reads a delivery and its newest n attempts in
// one query, however long its log: the partition read backwards starts at
// the delivery's item (DLV sorts after every ATT#) and goes on to the
// newest attempts; one more than n says whether older ones follow.
func (s *Store) DeliveryWithNewestAttempts(ctx context.Context, id string, n int) (domain.Delivery, AttemptPage, error) {
	var d domain.Delivery
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: s.table, KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: item{":pk": str(deliveryPK(id))},
		ScanIndexForward:          aws.Bool(false), ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(n) + 2),
	})
	if err != nil {
		return d, AttemptPage{}, err
	}
	if len(out.Items) == 0 || stringAttr(out.Items[0], "sk") != skDelivery {
		return d, AttemptPage{}, ErrNotFound
	}
	if err := attributevalue.UnmarshalMap(out.Items[0], &d); err != nil {
		return d, AttemptPage{}, err
	}
	if domain.Expired(d.ExpiresAt, s.now()) {
		return domain.Delivery{}, AttemptPage{}, ErrNotFound
	}
	page, err := attemptPage(out.Items[1:], n)
	return d, page, err
}

// DeliveryAttempts reads a page of a delivery's attempts older than the
// attempt before ("" for the newest), newest first. It does not check the
// delivery: the caller has read it (its account, its expiry).
func (s *Store) DeliveryAttempts(ctx context.Context, id string, limit int, before string) (AttemptPage, error) {
	in := &dynamodb.QueryInput{
		TableName: s.table, KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :att)"),
		ExpressionAttributeValues: item{":pk": str(deliveryPK(id)), ":att": str(attemptSK(""))},
		ScanIndexForward:          aws.Bool(false), ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit) + 1),
	}
	if before != "" {
		in.ExclusiveStartKey = key(deliveryPK(id), attemptSK(before))
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return AttemptPage{}, err
	}
	return attemptPage(out.Items, limit)
}

// attemptPage reads up to n attempts of items (newest first); an item past
// the n-th means older ones follow.
func attemptPage(items []item, n int) (AttemptPage, error) {
	var page AttemptPage
	for i, it := range items {
		if i == n {
			if n > 0 {
				page.After = page.Attempts[n-1].ID
			}
			break
		}
		var a domain.Attempt
		if err := attributevalue.UnmarshalMap(it, &a); err != nil {
			return page, err
		}
		page.Attempts = append(page.Attempts, a)
	}
	return page, nil
}
