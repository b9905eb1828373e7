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
// the delivery's item (DLV sorts after every ATT#; it holds the attempts
// logged on it) and goes on to the newest attempts of their own; one more
// than n says whether older ones follow.
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
	page, err := attemptPage(d, out.Items[1:], n, "")
	return d, page, err
}

// DeliveryAttempts reads a page of delivery d's attempts older than the
// attempt before ("" for the newest), newest first. It does not check the
// delivery: the caller has read it (its account, its expiry, the attempts
// logged on it).
func (s *Store) DeliveryAttempts(ctx context.Context, d domain.Delivery, limit int, before string) (AttemptPage, error) {
	id := d.ID
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
	return attemptPage(d, out.Items, limit, before)
}

// attemptPage is the newest n of d's attempts older than before ("": all),
// from items (the newest n+1 or fewer such attempts of their own, newest
// first) and those logged on d's item; one more than n means older ones
// follow. Any own attempt not in items is older than all n+1 read, so the
// newest n of the two together are the page.
func attemptPage(d domain.Delivery, items []item, n int, before string) (AttemptPage, error) {
	var all []domain.Attempt
	for _, it := range items {
		var a domain.Attempt
		if err := attributevalue.UnmarshalMap(it, &a); err != nil {
			return AttemptPage{}, err
		}
		all = append(all, a)
	}
	for _, a := range loggedAttempts(d) {
		if before == "" || a.ID < before {
			all = append(all, a)
		}
	}
	newestFirst(all)
	if len(all) <= n {
		return AttemptPage{Attempts: all}, nil
	}
	page := AttemptPage{Attempts: all[:n]}
	if n > 0 {
		page.After = all[n-1].ID
	}
	return page, nil
}
