package store

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/schema"
)

// SetNotificationEmails replaces the account's notification addresses (an
// empty list removes them). The caller has validated them.
func (s *Store) SetNotificationEmails(ctx context.Context, accountID string, emails []string) error {
	in := &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(accountID), skAccount),
		UpdateExpression:    aws.String("REMOVE notification_emails"),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}
	if len(emails) > 0 {
		list := make([]types.AttributeValue, len(emails))
		for i, e := range emails {
			list[i] = str(e)
		}
		in.UpdateExpression = aws.String("SET notification_emails = :e")
		in.ExpressionAttributeValues = item{":e": &types.AttributeValueMemberL{Value: list}}
	}
	_, err := s.db.UpdateItem(ctx, in)
	if isConditionFailed(err) {
		return ErrNotFound
	}
	return err
}

// Mail notices (package notifymail) are sent at most once per notice key
// (its kind, endpoint and UTC day): MAIL#<sha256(key)> / MAIL holds who
// claimed it, when, and when it was sent; it expires after two days.
const (
	skMail      = "MAIL"
	mailKeepFor = 48 * time.Hour
)

func mailPK(noticeKey string) string { return "MAIL#" + hashHex(noticeKey) }

// ClaimMail takes the right to send the mail of noticeKey. It is refused
// (false) when the mail was sent, or when another sender claimed it less
// than staleAfter ago and has not said it sent it; a claim older than that
// was lost with its sender (a process that died between the claim and the
// send), so the mail is claimed again rather than never sent.
func (s *Store) ClaimMail(ctx context.Context, noticeKey string, staleAfter time.Duration) (bool, error) {
	now := s.now()
	it := key(mailPK(noticeKey), skMail)
	it["claimed_at"] = num(now.UnixMilli())
	it[schema.Table.TTLAttribute] = num(now.Add(mailKeepFor).Unix())
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR (attribute_not_exists(sent_at) AND claimed_at < :stale)"),
		ExpressionAttributeValues: item{":stale": num(now.Add(-staleAfter).UnixMilli())},
	})
	if isConditionFailed(err) {
		return false, nil
	}
	return err == nil, err
}

// MailSent records that the mail of noticeKey went out: no claim takes it again.
func (s *Store) MailSent(ctx context.Context, noticeKey string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(mailPK(noticeKey), skMail),
		UpdateExpression:          aws.String("SET sent_at = :t"),
		ExpressionAttributeValues: item{":t": num(s.now().UnixMilli())},
	})
	return err
}
