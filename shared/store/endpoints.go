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
	ep.Leases = nil // the in-flight slots live on the endpoint's slot item
	var err error
	if ep.Secrets, err = s.sealSecrets(ctx, ep.AccountID, ep.ID, ep.Secrets); err != nil {
		return err
	}
	if ep.Settings, err = s.sealHeaders(ctx, ep.AccountID, ep.ID, ep.Settings); err != nil {
		return err
	}
	it, err := marshal(ep, key(accountPK(ep.AccountID), endpointSK(ep.ID)))
	if err != nil {
		return err
	}
	r, err := s.transact(ctx,
		part{"count", types.TransactWriteItem{Update: &types.Update{
			TableName: s.table, Key: key(accountPK(ep.AccountID), skAccount),
			UpdateExpression:          aws.String("ADD endpoint_count :one"),
			ConditionExpression:       aws.String("attribute_exists(pk) AND (attribute_not_exists(endpoint_count) OR endpoint_count < :max)"),
			ExpressionAttributeValues: item{":one": num(1), ":max": num(domain.MaxEndpoints)},
		}}},
		part{"endpoint", types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}}},
	)
	switch {
	case r.has("count"):
		return ErrLimit
	case r != nil:
		return ErrDuplicate
	}
	return err
}

// GetEndpoint reads one of an account's endpoints.
func (s *Store) GetEndpoint(ctx context.Context, accountID, id string) (domain.Endpoint, error) {
	var ep domain.Endpoint
	if err := s.get(ctx, key(accountPK(accountID), endpointSK(id)), &ep); err != nil {
		return ep, err
	}
	_, err := s.openSecrets(ctx, &ep)
	return ep, err
}

// EndpointState reads one of an account's endpoints with its secrets left
// sealed (Value empty): for deciding from its state, with no KMS call.
func (s *Store) EndpointState(ctx context.Context, accountID, id string) (domain.Endpoint, error) {
	var ep domain.Endpoint
	err := s.get(ctx, key(accountPK(accountID), endpointSK(id)), &ep)
	return ep, err
}

// AccountWithEndpoints reads an account and all its endpoints in one query
// (they share the account's partition). It is ingest's read: the endpoints'
// secrets are left sealed (Value empty), as nothing is signed there.
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
			case strings.HasPrefix(sk, endpointSK("")):
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

// ListEndpoints lists an account's endpoints, oldest first, their secrets opened.
func (s *Store) ListEndpoints(ctx context.Context, accountID string) ([]domain.Endpoint, error) {
	_, eps, err := s.AccountWithEndpoints(ctx, accountID)
	for i := range eps {
		if err == nil {
			_, err = s.openSecrets(ctx, &eps[i])
		}
	}
	return eps, err
}

// EndpointPatch is a partial update; nil fields stay as they are.
type EndpointPatch struct {
	URL         *string
	EventTypes  *[]string
	Description *string
	Disabled    *bool
	Scheme      *domain.SignatureScheme
	// Settings replace the endpoint's whole settings (endpointcfg.Apply
	// made them from the ones read).
	Settings *domain.EndpointSettings
	// Destination replaces an AWS endpoint's target and role.
	Destination *domain.Destination
	// SeenUpdatedAt, when set, conditions the write on the endpoint not
	// having changed since it was read (ErrConflict otherwise): Settings are
	// made from the ones read, so two PATCHes cannot lose a header.
	SeenUpdatedAt int64
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
		// A new URL is a new receiver: what the breaker learnt of the old one
		// does not hold it back.
		set, vals[":url"] = append(set, "#url = :url"), str(*p.URL)
		remove = append(remove, breakerAttrs...)
	}
	if p.Description != nil {
		set, vals[":desc"] = append(set, "description = :desc"), str(*p.Description)
	}
	if p.Scheme != nil {
		set, vals[":scheme"] = append(set, "signature_scheme = :scheme"), str(*p.Scheme)
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
	if p.Settings != nil {
		sealed, err := s.sealHeaders(ctx, accountID, id, *p.Settings)
		if err != nil {
			return domain.Endpoint{}, err
		}
		settings, err := attributevalue.Marshal(sealed)
		if err != nil {
			return domain.Endpoint{}, err
		}
		set, vals[":settings"] = append(set, "settings = :settings"), settings
	}
	if p.Destination != nil {
		dest, err := attributevalue.Marshal(*p.Destination)
		if err != nil {
			return domain.Endpoint{}, err
		}
		// A new target is a new receiver, as a new URL is.
		set, vals[":dest"] = append(set, "destination = :dest"), dest
		if p.URL == nil {
			remove = append(remove, breakerAttrs...)
		}
	}
	if p.Disabled != nil {
		set, vals[":dis"] = append(set, "disabled = :dis"), boolean(*p.Disabled)
		if *p.Disabled {
			set, vals[":why"] = append(set, "disabled_reason = :why"), str("disabled through the API")
		} else {
			// Enabled again: it starts healthy, its breaker closed.
			remove = append(remove, "disabled_reason", "failing_since", "disable_warned_at", "paused_until")
			if p.URL == nil && p.Destination == nil {
				remove = append(remove, breakerAttrs...)
			}
		}
	}
	// Disabled or re-pointed: a new route, on the slot item too, so that no
	// worker that read the endpoint before this PATCH answered takes a slot.
	route := ""
	if p.URL != nil || p.Destination != nil || (p.Disabled != nil && *p.Disabled) {
		route = domain.NewID("rte")
		set, vals[":route"] = append(set, "route = :route"), str(route)
	}
	expr := "SET " + strings.Join(set, ", ")
	if len(remove) > 0 {
		expr += " REMOVE " + strings.Join(remove, ", ")
	}
	cond := "attribute_exists(pk)"
	if p.SeenUpdatedAt != 0 {
		cond, vals[":seen"] = cond+" AND updated_at = :seen", num(p.SeenUpdatedAt)
	}
	in := &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(accountID), endpointSK(id)),
		UpdateExpression: aws.String(expr), ConditionExpression: aws.String(cond),
		ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
	}
	if p.URL != nil {
		in.ExpressionAttributeNames = map[string]string{"#url": "url"}
	}
	out, err := s.updateRouted(ctx, in, id, route)
	if isConditionFailed(err) && p.SeenUpdatedAt != 0 {
		if _, gerr := s.GetEndpoint(ctx, accountID, id); gerr != nil {
			return domain.Endpoint{}, gerr // deleted meanwhile: ErrNotFound
		}
		return domain.Endpoint{}, ErrConflict
	}
	if isConditionFailed(err) {
		return domain.Endpoint{}, ErrNotFound
	}
	if err != nil {
		return domain.Endpoint{}, err
	}
	var ep domain.Endpoint
	if err := attributevalue.UnmarshalMap(out, &ep); err != nil {
		return ep, err
	}
	plaintext, err := s.openSecrets(ctx, &ep)
	if err == nil && plaintext {
		// An item from before sealing: this write seals its secrets. A
		// failure leaves them for the next write; the PATCH itself is done.
		_ = s.resealPlaintext(ctx, ep)
	}
	return ep, err
}

// updateRouted applies an update of an endpoint and returns the item as it
// is now when in.ReturnValues is ALL_NEW; with a new route, in one
// transaction with the route's write on the endpoint's slot item, then read
// back (strongly consistent; a transaction returns no item). A refused
// condition is returned as UpdateItem's ConditionalCheckFailedException.
func (s *Store) updateRouted(ctx context.Context, in *dynamodb.UpdateItemInput, endpointID, route string) (item, error) {
	if route == "" {
		out, err := s.db.UpdateItem(ctx, in)
		if err != nil {
			return nil, err
		}
		return out.Attributes, nil
	}
	r, err := s.transact(ctx,
		part{"endpoint", types.TransactWriteItem{Update: &types.Update{TableName: in.TableName, Key: in.Key,
			UpdateExpression: in.UpdateExpression, ConditionExpression: in.ConditionExpression,
			ExpressionAttributeNames: in.ExpressionAttributeNames, ExpressionAttributeValues: in.ExpressionAttributeValues}}},
		part{"route", types.TransactWriteItem{Update: s.routeUpdate(endpointID, route)}},
	)
	if r.has("endpoint") {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("endpoint condition failed")}
	}
	if err != nil || in.ReturnValues != types.ReturnValueAllNew {
		return nil, err
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: in.TableName, Key: in.Key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	if out.Item == nil {
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("endpoint deleted")}
	}
	return out.Item, nil
}

// DeleteEndpoint removes an endpoint and gives its place back to the
// account's count, in one transaction, which also gives its slot item a
// route no worker has read (no slot is taken for it after this answers).
// Its deliveries stay in the log.
func (s *Store) DeleteEndpoint(ctx context.Context, accountID, id string) error {
	r, err := s.transact(ctx,
		part{"endpoint", types.TransactWriteItem{Delete: &types.Delete{TableName: s.table, Key: key(accountPK(accountID), endpointSK(id)), ConditionExpression: aws.String("attribute_exists(pk)")}}},
		part{"count", types.TransactWriteItem{Update: &types.Update{TableName: s.table, Key: key(accountPK(accountID), skAccount),
			UpdateExpression: aws.String("ADD endpoint_count :minus"), ExpressionAttributeValues: item{":minus": num(-1)}}}},
		part{"route", types.TransactWriteItem{Update: s.routeUpdate(id, domain.NewID("rte"))}},
	)
	if r.has("endpoint") {
		return ErrNotFound
	}
	return err
}
