package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/portal"
)

// Portal sessions live at PORTAL#<session id> / PORTAL, holding the SHA-256
// of the token's random part (never the token), expiring by DynamoDB TTL a
// day after the session ends.
func portalPK(id string) string { return "PORTAL#" + id }

const skPortal = "PORTAL"

// CreatePortalSession stores a new session.
func (s *Store) CreatePortalSession(ctx context.Context, ps portal.Session) error {
	it, err := marshal(ps, key(portalPK(ps.ID), skPortal))
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if isConditionFailed(err) {
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
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(portalPK(id), skPortal),
		UpdateExpression:          aws.String("SET revoked_at = if_not_exists(revoked_at, :t)"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND account_id = :a"),
		ExpressionAttributeValues: item{":t": num(domain.Millis(s.now())), ":a": str(accountID)},
	})
	if isConditionFailed(err) {
		return ErrNotFound
	}
	return err
}
