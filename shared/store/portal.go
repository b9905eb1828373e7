package store

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/portal"
)

// Portal sessions live at PORTAL#<session id> / PORTAL, holding the SHA-256
// of the token's random part (never the token), expiring by DynamoDB TTL a
// day after the session ends. Each has a listing entry in its account's
// sessions partition, PORTALS#<account> / PORTAL#<session id> (the same
// fields without the hash), written and revoked in the same transactions,
// so the account's sessions can be listed and all of them revoked.
func portalPK(id string) string          { return "PORTAL#" + id }
func portalListPK(account string) string { return "PORTALS#" + account }
func portalListSK(session string) string { return "PORTAL#" + session }

const skPortal = "PORTAL"

// CreatePortalSession stores a new session and its listing entry.
func (s *Store) CreatePortalSession(ctx context.Context, ps portal.Session) error {
	it, err := marshal(ps, key(portalPK(ps.ID), skPortal))
	if err != nil {
		return err
	}
	listed := ps
	listed.SecretHash = ""
	ref, err := marshal(listed, key(portalListPK(ps.AccountID), portalListSK(ps.ID)))
	if err != nil {
		return err
	}
	delete(ref, "secret_hash")
	r, err := s.transact(ctx,
		part{"session", types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}}},
		part{"ref", types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: ref}}},
	)
	if r != nil {
		return ErrDuplicate
	}
	return err
}

// GetPortalSession reads a session (strongly consistent, so a revocation
// holds from the next request on); ErrNotFound when absent or past its TTL.
func (s *Store) GetPortalSession(ctx context.Context, id string) (portal.Session, error) {
	var ps portal.Session
	if err := s.get(ctx, key(portalPK(id), skPortal), &ps); err != nil {
		return ps, err
	}
	if domain.Expired(ps.TTL, s.now()) {
		return portal.Session{}, ErrNotFound
	}
	return ps, nil
}

// RevokePortalSession ends one of an account's sessions at once; another
// account's session is as unknown as a missing one (ErrNotFound). Revoking
// twice is fine.
func (s *Store) RevokePortalSession(ctx context.Context, accountID, id string) error {
	vals := item{":t": num(domain.Millis(s.now())), ":a": str(accountID)}
	set := aws.String("SET revoked_at = if_not_exists(revoked_at, :t)")
	r, err := s.transact(ctx,
		part{"session", types.TransactWriteItem{Update: &types.Update{TableName: s.table, Key: key(portalPK(id), skPortal),
			UpdateExpression: set, ConditionExpression: aws.String("attribute_exists(pk) AND account_id = :a"), ExpressionAttributeValues: vals}}},
		part{"ref", types.TransactWriteItem{Update: &types.Update{TableName: s.table, Key: key(portalListPK(accountID), portalListSK(id)),
			UpdateExpression: set, ConditionExpression: aws.String("attribute_exists(pk) AND account_id = :a"), ExpressionAttributeValues: vals}}},
	)
	if r != nil {
		return ErrNotFound // either both are there or neither (or another account's)
	}
	return err
}

// PortalSessionPage is one page of an account's sessions, newest first;
// After is the last session id of the page, "" when nothing follows.
type PortalSessionPage struct {
	Sessions []portal.Session
	After    string
}

// ListPortalSessions reads an account's sessions newest first (their ids are
// time-ordered), live, expired and revoked alike until DynamoDB's TTL
// removes them a day after they end; after is the previous page's last id.
func (s *Store) ListPortalSessions(ctx context.Context, accountID string, limit int32, after string) (PortalSessionPage, error) {
	in := &dynamodb.QueryInput{
		TableName: s.table, KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: item{":pk": str(portalListPK(accountID))},
		ScanIndexForward:          aws.Bool(false), ConsistentRead: aws.Bool(true), Limit: aws.Int32(limit),
	}
	if after != "" {
		in.ExclusiveStartKey = key(portalListPK(accountID), portalListSK(after))
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return PortalSessionPage{}, err
	}
	var page PortalSessionPage
	for _, it := range out.Items {
		var ps portal.Session
		if err := attributevalue.UnmarshalMap(it, &ps); err != nil {
			return page, err
		}
		if !domain.Expired(ps.TTL, s.now()) {
			page.Sessions = append(page.Sessions, ps)
		}
	}
	if out.LastEvaluatedKey != nil && len(out.Items) > 0 {
		page.After = stringAttr(out.Items[len(out.Items)-1], "id")
	}
	return page, nil
}

// RevokePortalSessions revokes up to max of an account's live sessions (not
// revoked, not expired); more says some are left for another call.
func (s *Store) RevokePortalSessions(ctx context.Context, accountID string, max int) (revoked int, more bool, err error) {
	now := domain.Millis(s.now())
	var ids []string
	var start map[string]types.AttributeValue
	for len(ids) <= max {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName: s.table, KeyConditionExpression: aws.String("pk = :pk"),
			FilterExpression:          aws.String("attribute_not_exists(revoked_at) AND expires_at > :now"),
			ExpressionAttributeValues: item{":pk": str(portalListPK(accountID)), ":now": num(now)},
			ProjectionExpression:      aws.String("id"), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start,
		})
		if err != nil {
			return 0, false, err
		}
		for _, it := range out.Items {
			ids = append(ids, stringAttr(it, "id"))
		}
		if start = out.LastEvaluatedKey; start == nil {
			break
		}
	}
	more = len(ids) > max
	ids = ids[:min(len(ids), max)]
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := s.RevokePortalSession(ctx, accountID, id)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				revoked++
			case firstErr == nil:
				firstErr = err
			}
		}()
	}
	wg.Wait()
	return revoked, more, firstErr
}

// APIKey reads one of an account's API keys by id (strongly consistent, so a
// revocation holds from the next request on): a portal session lives only
// as long as the key that minted it.
func (s *Store) APIKey(ctx context.Context, accountID, keyID string) (domain.APIKey, error) {
	var k domain.APIKey
	err := s.get(ctx, key(accountPK(accountID), keyRefSK(keyID)), &k)
	return k, err
}
