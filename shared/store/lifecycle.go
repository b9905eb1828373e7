package store

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// EndpointPatch is a partial update; nil fields stay as they are.
type EndpointPatch struct {
	URL         *string
	EventTypes  *[]string
	Description *string
	Disabled    *bool
}

// UpdateEndpoint applies a patch and returns the endpoint as it is now.
// Enabling an endpoint also clears its failure history and any pause, so it
// starts afresh.
func (s *Store) UpdateEndpoint(ctx context.Context, accountID, id string, p EndpointPatch) (domain.Endpoint, error) {
	now := domain.Millis(s.now())
	set := []string{"updated_at = :now"}
	var remove []string
	vals := item{":now": num(now)}
	if p.URL != nil {
		set, vals[":url"] = append(set, "#url = :url"), str(*p.URL)
	}
	if p.Description != nil {
		set, vals[":desc"] = append(set, "description = :desc"), str(*p.Description)
	}
	if p.EventTypes != nil {
		if len(*p.EventTypes) == 0 {
			remove = append(remove, "event_types")
		} else {
			types, err := attributevalue.Marshal(*p.EventTypes)
			if err != nil {
				return domain.Endpoint{}, err
			}
			set, vals[":types"] = append(set, "event_types = :types"), types
		}
	}
	if p.Disabled != nil {
		set, vals[":dis"] = append(set, "disabled = :dis"), boolean(*p.Disabled)
		if *p.Disabled {
			set, vals[":why"] = append(set, "disabled_reason = :why"), str("disabled through the API")
		} else {
			remove = append(remove, "disabled_reason", "failing_since", "paused_until")
		}
	}
	expr := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	in := &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(accountID), endpointSK(id)),
		UpdateExpression: aws.String(expr), ConditionExpression: aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
	}
	if p.URL != nil {
		in.ExpressionAttributeNames = map[string]string{"#url": "url"}
	}
	out, err := s.db.UpdateItem(ctx, in)
	if isConditionFailed(err) {
		return domain.Endpoint{}, ErrNotFound
	}
	if err != nil {
		return domain.Endpoint{}, err
	}
	var ep domain.Endpoint
	err = attributevalue.UnmarshalMap(out.Attributes, &ep)
	return ep, err
}

// DeleteEndpoint removes an endpoint and gives its place back to the
// account's count, in one transaction. Its deliveries stay in the log.
func (s *Store) DeleteEndpoint(ctx context.Context, accountID, id string) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: s.table, Key: key(accountPK(accountID), endpointSK(id)), ConditionExpression: aws.String("attribute_exists(pk)")}},
		{Update: &types.Update{TableName: s.table, Key: key(accountPK(accountID), skAccount),
			UpdateExpression: aws.String("ADD endpoint_count :minus"), ExpressionAttributeValues: item{":minus": num(-1)}}},
	}})
	if onlyConditionFailures(cancelReasons(err)) {
		return ErrNotFound
	}
	return err
}

// RotateSecret puts a new secret first; the ones before it keep signing
// until now+grace (the receiver sees two v1= signatures meanwhile). Secrets
// already expired are dropped. The write is conditioned on the endpoint not
// having changed since it was read, so two rotations cannot lose a secret.
func (s *Store) RotateSecret(ctx context.Context, accountID, id, newSecret string, grace int64) (domain.Endpoint, error) {
	for try := 0; try < 3; try++ {
		ep, err := s.GetEndpoint(ctx, accountID, id)
		if err != nil {
			return ep, err
		}
		now := domain.Millis(s.now())
		secrets := []domain.Secret{{Value: newSecret, CreatedAt: now}}
		for _, old := range ep.Secrets {
			if old.ExpiresAt == 0 || old.ExpiresAt > now+grace {
				old.ExpiresAt = now + grace
			}
			if old.ExpiresAt > now {
				secrets = append(secrets, old)
			}
		}
		av, err := attributevalue.Marshal(secrets)
		if err != nil {
			return ep, err
		}
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: s.table, Key: key(accountPK(accountID), endpointSK(id)),
			UpdateExpression:          aws.String("SET secrets = :s, updated_at = :now"),
			ConditionExpression:       aws.String("attribute_exists(pk) AND updated_at = :seen"),
			ExpressionAttributeValues: item{":s": av, ":now": num(now), ":seen": num(ep.UpdatedAt)},
			ReturnValues:              types.ReturnValueAllNew,
		})
		if isConditionFailed(err) {
			continue // changed (or deleted) since we read it: read again
		}
		if err != nil {
			return ep, err
		}
		err = attributevalue.UnmarshalMap(out.Attributes, &ep)
		return ep, err
	}
	return domain.Endpoint{}, ErrConflict
}

// DeliveryPage is one page of an endpoint's delivery log.
type DeliveryPage struct {
	Deliveries []domain.Delivery
	After      string // the last delivery id of the page; "" on the last page
}

// ListEndpointDeliveries reads an endpoint's deliveries newest first, all of
// them or those in one status, from the endpoint log indexes. after is the
// last delivery id of the previous page.
func (s *Store) ListEndpointDeliveries(ctx context.Context, endpointID, status string, limit int32, after string) (DeliveryPage, error) {
	in := &dynamodb.QueryInput{TableName: s.table, ScanIndexForward: aws.Bool(false), Limit: aws.Int32(limit)}
	pkAttr, skAttr, pk := "gsi1pk", "gsi1sk", endpointLogPK(endpointID)
	in.IndexName = aws.String("endpoint_log")
	if status != "" {
		pkAttr, skAttr, pk = "gsi2pk", "gsi2sk", endpointStatusPK(endpointID, status)
		in.IndexName = aws.String("endpoint_status")
	}
	in.KeyConditionExpression = aws.String(pkAttr + " = :pk")
	in.ExpressionAttributeValues = item{":pk": str(pk)}
	if after != "" {
		in.ExclusiveStartKey = item{"pk": str(deliveryPK(after)), "sk": str(skDelivery), pkAttr: str(pk), skAttr: str(after)}
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return DeliveryPage{}, err
	}
	var page DeliveryPage
	now := s.now()
	for _, it := range out.Items {
		var d domain.Delivery
		if err := attributevalue.UnmarshalMap(it, &d); err != nil {
			return page, err
		}
		if !domain.Expired(d.ExpiresAt, now) {
			page.Deliveries = append(page.Deliveries, d)
		}
	}
	if out.LastEvaluatedKey != nil {
		if sk, ok := out.LastEvaluatedKey[skAttr].(*types.AttributeValueMemberS); ok {
			page.After = sk.Value
		}
	}
	return page, nil
}

// FailedDeliveryIDs lists an endpoint's failed deliveries created between
// since and until (unix ms, inclusive), oldest first, at most limit. Delivery
// ids begin with their creation time, so the window is a key range.
func (s *Store) FailedDeliveryIDs(ctx context.Context, endpointID string, since, until int64, limit int) ([]string, error) {
	var ids []string
	var start Cursor
	for len(ids) < limit {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: s.table, IndexName: aws.String("endpoint_status"),
			KeyConditionExpression: aws.String("gsi2pk = :pk AND gsi2sk BETWEEN :lo AND :hi"),
			ExpressionAttributeValues: item{":pk": str(endpointStatusPK(endpointID, domain.StatusFailed)),
				":lo": str(domain.IDBound("dlv", since, false)), ":hi": str(domain.IDBound("dlv", until, true))},
			ExclusiveStartKey: start, Limit: aws.Int32(int32(min(limit-len(ids), 500))),
		})
		if err != nil {
			return nil, err
		}
		for _, it := range out.Items {
			ids = append(ids, stringAttr(it, "gsi2sk"))
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	return ids, nil
}
