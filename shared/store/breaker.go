package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
)

// TakeProbe makes the caller the one probe of a half-open breaker (its
// pause over, no live probe): a conditional write on the endpoint item that
// one worker wins; the probe is held until `until` (unix ms), after which,
// if its worker died, another may probe. ErrConflict: someone else probes,
// or the breaker is no longer half-open.
func (s *Store) TakeProbe(ctx context.Context, accountID, endpointID string, until int64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(accountID), endpointSK(endpointID)),
		UpdateExpression: aws.String("SET breaker_probe_until = :until"),
		ConditionExpression: aws.String("attribute_exists(pk) AND breaker_open_until <= :now" +
			" AND (attribute_not_exists(breaker_probe_until) OR breaker_probe_until < :now)"),
		ExpressionAttributeValues: item{":until": num(until), ":now": num(domain.Millis(s.now()))},
	})
	if isConditionFailed(err) {
		return ErrConflict
	}
	return err
}

// breakerAttrs are the endpoint item's breaker fields: removing them closes
// the breaker.
var breakerAttrs = []string{"breaker_fails", "breaker_open_until", "breaker_pause_ms", "breaker_probe_until"}

// breakerWrites adds a breaker change (lifecycle.BreakerAfterAttempt) to the
// endpoint's update after an attempt (endpointAfterAttempt).
func breakerWrites(c lifecycle.BreakerChange, set, remove *[]string, vals item) {
	switch {
	case c.Close:
		*remove = append(*remove, breakerAttrs...)
	case c.OpenUntil != 0 && c.On == lifecycle.BreakerTripped:
		// Attempts in flight together may each see the fifth failure: the
		// first to write opens it, the others leave its pause alone.
		*set = append(*set, "breaker_open_until = if_not_exists(breaker_open_until, :bopen)", "breaker_pause_ms = if_not_exists(breaker_pause_ms, :bpause)")
		*remove = append(*remove, "breaker_fails")
		vals[":bopen"], vals[":bpause"] = num(c.OpenUntil), num(c.PauseMs)
	case c.OpenUntil != 0:
		*set = append(*set, "breaker_open_until = :bopen", "breaker_pause_ms = :bpause")
		*remove = append(*remove, "breaker_fails", "breaker_probe_until")
		vals[":bopen"], vals[":bpause"] = num(c.OpenUntil), num(c.PauseMs)
	case c.Count:
		*set = append(*set, "breaker_fails = if_not_exists(breaker_fails, :bzero) + :bone")
		vals[":bzero"], vals[":bone"] = num(0), num(1)
	}
}
