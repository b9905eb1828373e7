package store

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
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

// Ref names a delivery and the items an attempt of it reads.
type Ref struct {
	DeliveryID, AccountID, EndpointID, EventID string
}

// Snapshot is what an attempt needs, read in one BatchGetItem. A nil field
// is an item that does not exist (or has expired).
type Snapshot struct {
	Delivery *domain.Delivery
	Endpoint *domain.Endpoint
	Event    *domain.Event
}

// LoadForAttempt reads the delivery, its endpoint as it is now, and the event
// body, strongly consistent, in one call.
func (s *Store) LoadForAttempt(ctx context.Context, r Ref) (Snapshot, error) {
	items, err := s.batchGet(ctx, []item{
		key(deliveryPK(r.DeliveryID), skDelivery),
		key(accountPK(r.AccountID), endpointSK(r.EndpointID)),
		key(eventPK(r.EventID), skEvent),
	})
	if err != nil {
		return Snapshot{}, err
	}
	var snap Snapshot
	now := s.now()
	for _, it := range items {
		pk := stringAttr(it, "pk")
		switch {
		case strings.HasPrefix(pk, deliveryPK("")):
			var d domain.Delivery
			if err := attributevalue.UnmarshalMap(it, &d); err != nil {
				return snap, err
			}
			if !domain.Expired(d.ExpiresAt, now) {
				snap.Delivery = &d
			}
		case strings.HasPrefix(pk, accountPK("")):
			var ep domain.Endpoint
			if err := attributevalue.UnmarshalMap(it, &ep); err != nil {
				return snap, err
			}
			snap.Endpoint = &ep
		case strings.HasPrefix(pk, eventPK("")):
			var ev domain.Event
			if err := attributevalue.UnmarshalMap(it, &ev); err != nil {
				return snap, err
			}
			if !domain.Expired(ev.ExpiresAt, now) {
				snap.Event = &ev
			}
		}
	}
	return snap, nil
}

// Claim is a worker's hold on one attempt of a delivery.
type Claim struct {
	ID         string // unique per claim
	LeaseUntil int64  // unix ms; after it another worker may take over
	Slot       string // the endpoint's in-flight slot it holds; "" when the cap is off
	AttemptID  string // the attempt this claim makes (kept, so a lost attempt is logged under the id the receiver saw)
	// URL is the endpoint URL the attempt will POST to, as read: with the
	// cap on, the slot is only taken while the endpoint is enabled and still
	// has this URL.
	URL string
	// Interrupted, when set, is the log entry for an earlier attempt whose
	// worker died after claiming it; it is written in the same transaction.
	Interrupted *domain.Attempt
}

// ClaimAttempt takes the next attempt of a delivery: one conditional write
// (with the endpoint slot, one transaction) that succeeds for exactly one
// worker. seen is the delivery as read; if anything changed since, or another
// worker holds a live lease, or the attempt is not due, it fails with
// ErrConflict and nothing is written; ErrSlotTaken when only the endpoint
// slot was taken meanwhile (another slot may be free). The attempt counts from here, so an
// attempt lost to a crash still counts toward the ceiling.
func (s *Store) ClaimAttempt(ctx context.Context, seen domain.Delivery, c Claim) (domain.Delivery, error) {
	now := domain.Millis(s.now())
	tx := []types.TransactWriteItem{{Update: &types.Update{
		TableName: s.table, Key: key(deliveryPK(seen.ID), skDelivery),
		UpdateExpression: aws.String("SET attempts = attempts + :one, claim = :c, claim_attempt = :aid, lease_until = :lease, updated_at = :now"),
		ConditionExpression: aws.String("#st = :pending AND gen = :gen AND attempts = :attempts AND next_attempt_at <= :now" +
			" AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":one": num(1), ":c": str(c.ID), ":aid": str(c.AttemptID), ":lease": num(c.LeaseUntil), ":now": num(now),
			":pending": str(domain.StatusPending), ":gen": num(int64(seen.Gen)), ":attempts": num(int64(seen.Attempts))},
	}}}
	if c.Slot != "" {
		tx = append(tx, types.TransactWriteItem{Update: s.leaseSlot(seen, c)})
	}
	if c.Interrupted != nil {
		put, err := s.attemptPut(*c.Interrupted)
		if err != nil {
			return seen, err
		}
		tx = append(tx, types.TransactWriteItem{Put: put})
	}
	var err error
	if len(tx) == 1 {
		// Just the delivery (no endpoint cap): a plain conditional write
		// costs half a transaction.
		u := tx[0].Update
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
			ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		})
		if isConditionFailed(err) {
			return seen, ErrConflict
		}
	} else {
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
		if reasons := cancelReasons(err); onlyConditionFailures(reasons) {
			if c.Slot != "" && aws.ToString(reasons[0].Code) == "None" && aws.ToString(reasons[1].Code) == "ConditionalCheckFailed" {
				return seen, ErrSlotTaken // another worker took that slot a moment ago
			}
			return seen, ErrConflict
		}
	}
	if err != nil {
		return seen, err
	}
	d := seen
	d.Attempts++
	d.Claim, d.ClaimAttempt, d.LeaseUntil, d.UpdatedAt = c.ID, c.AttemptID, c.LeaseUntil, now
	return d, nil
}

// leaseSlot takes one of the endpoint's in-flight slots for a claim, if the
// slot is free or its lease ran out.
func (s *Store) leaseSlot(d domain.Delivery, c Claim) *types.Update {
	return &types.Update{
		TableName: s.table, Key: key(accountPK(d.AccountID), endpointSK(d.EndpointID)),
		UpdateExpression: aws.String("SET leases.#slot = :lease"),
		ConditionExpression: aws.String("attribute_exists(pk) AND (attribute_not_exists(leases.#slot) OR leases.#slot.u < :now)" +
			" AND (attribute_not_exists(disabled) OR disabled = :false) AND #url = :url"),
		ExpressionAttributeNames: map[string]string{"#slot": c.Slot, "#url": "url"},
		ExpressionAttributeValues: item{":now": num(domain.Millis(s.now())), ":false": boolean(false), ":url": str(c.URL),
			":lease": &types.AttributeValueMemberM{Value: item{"u": num(c.LeaseUntil), "c": str(c.ID)}}},
	}
}

func (s *Store) attemptPut(a domain.Attempt) (*types.Put, error) {
	it, err := marshal(a, key(deliveryPK(a.DeliveryID), attemptSK(a.ID)))
	if err != nil {
		return nil, err
	}
	return &types.Put{TableName: s.table, Item: it, ConditionExpression: aws.String("attribute_not_exists(pk)")}, nil
}

// Outcome is what an attempt decided (lifecycle.Settle).
type Outcome = lifecycle.Outcome

// RecordAttempt writes the attempt to the log and moves the delivery on, in
// one transaction conditioned on still holding the claim, and frees the
// endpoint slot. If the claim was lost (the lease ran out and another worker
// took over), the attempt is still logged, the delivery is left to its new
// owner, and ErrConflict is returned.
func (s *Store) RecordAttempt(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, c Claim, a domain.Attempt, o Outcome) error {
	attempt, err := s.attemptPut(a)
	if err != nil {
		return err
	}
	delivery := s.recordUpdate(d, c, a, o)
	endpoint := s.endpointAfterAttempt(d, ep, c, o)
	tx := []types.TransactWriteItem{{Put: attempt}, {Update: delivery}}
	if endpoint != nil {
		tx = append(tx, types.TransactWriteItem{Update: endpoint})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx})
	reasons := cancelReasons(err)
	if !onlyConditionFailures(reasons) {
		return err
	}
	deliveryLost := aws.ToString(reasons[1].Code) == "ConditionalCheckFailed"
	// The endpoint part only fails when the slot was taken over or the
	// endpoint deleted: write the rest without it.
	tx = tx[:1]
	if !deliveryLost {
		tx = append(tx, types.TransactWriteItem{Update: delivery})
	}
	if _, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx}); err != nil {
		return err
	}
	if deliveryLost {
		return ErrConflict
	}
	return nil
}

func (s *Store) recordUpdate(d domain.Delivery, c Claim, a domain.Attempt, o Outcome) *types.Update {
	now := domain.Millis(s.now())
	set := []string{"updated_at = :now", "last_attempt_at = :started", "last_attempt_id = :aid", "gsi2pk = :g2"}
	remove := []string{"claim", "claim_attempt", "lease_until"}
	vals := item{":now": num(now), ":started": num(a.StartedAt), ":aid": str(a.ID), ":c": str(c.ID), ":g2": str(endpointStatusPK(d.EndpointID, o.Status))}
	var names map[string]string
	if a.StatusCode != 0 {
		set = append(set, "last_status = :code")
		remove = append(remove, "last_error")
		vals[":code"] = num(int64(a.StatusCode))
	} else {
		set = append(set, "last_error = :err")
		remove = append(remove, "last_status")
		vals[":err"] = str(a.ErrorClass)
	}
	switch o.Status {
	case domain.StatusDelivered:
		set = append(set, "#st = :st", "delivered_at = :now")
		remove = append(remove, "due_at", "sweep_shard")
	case domain.StatusFailed:
		// Stays in the sweeper's index until the DLQ message is sent; the
		// worker recording the failure sends it, so it holds the DLQ claim.
		set = append(set, "#st = :st", "fail_reason = :reason", "failed_at = :now", "dlq_pending = :true", "due_at = :now", "dlq_claim_until = :dlqc")
		vals[":reason"], vals[":true"], vals[":dlqc"] = str(o.FailReason), boolean(true), num(now+dlqClaimFor)
	default:
		set = append(set, "next_attempt_at = :next", "due_at = :next")
		vals[":next"] = num(o.NextAttemptAt)
		if o.GiveBack {
			set = append(set, "attempts = attempts - :one", "throttles = if_not_exists(throttles, :zero) + :one")
			vals[":one"], vals[":zero"] = num(1), num(0)
		}
	}
	if o.Status != domain.StatusPending {
		vals[":st"] = str(o.Status)
		names = map[string]string{"#st": "status"}
	}
	return &types.Update{
		TableName: s.table, Key: key(deliveryPK(d.ID), skDelivery),
		UpdateExpression:          aws.String("SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")),
		ConditionExpression:       aws.String("claim = :c"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: vals,
	}
}

// endpointAfterAttempt frees the slot and updates the endpoint's health, or
// returns nil when there is nothing to write.
func (s *Store) endpointAfterAttempt(d domain.Delivery, ep *domain.Endpoint, c Claim, o Outcome) *types.Update {
	if ep == nil {
		return nil
	}
	now := domain.Millis(s.now())
	var set, remove []string
	vals := item{}
	names := map[string]string{}
	if o.Healthy && ep.FailingSince != 0 {
		remove = append(remove, "failing_since")
	}
	if !o.Healthy && ep.FailingSince == 0 {
		set = append(set, "failing_since = if_not_exists(failing_since, :now)")
		vals[":now"] = num(now)
	}
	if o.PauseUntil > 0 {
		set = append(set, "paused_until = :pause")
		vals[":pause"] = num(o.PauseUntil)
	}
	if o.DisableEndpoint != "" {
		set = append(set, "disabled = :true", "disabled_reason = :why", "updated_at = :upd")
		vals[":true"], vals[":why"], vals[":upd"] = boolean(true), str(o.DisableEndpoint), num(now)
	}
	breakerWrites(o.Breaker, &set, &remove, vals)
	cond := "attribute_exists(pk)"
	if c.Slot != "" {
		remove = append(remove, "leases.#slot")
		names["#slot"] = c.Slot
		cond = "leases.#slot.c = :c"
		vals[":c"] = str(c.ID)
	}
	if len(set) == 0 && len(remove) == 0 {
		return nil
	}
	var expr []string
	if len(set) > 0 {
		expr = append(expr, "SET "+strings.Join(set, ", "))
	}
	if len(remove) > 0 {
		expr = append(expr, "REMOVE "+strings.Join(remove, ", "))
	}
	u := &types.Update{
		TableName: s.table, Key: key(accountPK(d.AccountID), endpointSK(d.EndpointID)),
		UpdateExpression: aws.String(strings.Join(expr, " ")), ConditionExpression: aws.String(cond),
		ExpressionAttributeValues: vals,
	}
	if len(names) > 0 {
		u.ExpressionAttributeNames = names
	}
	if len(vals) == 0 {
		u.ExpressionAttributeValues = nil
	}
	return u
}
