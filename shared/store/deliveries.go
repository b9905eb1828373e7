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
		case strings.HasPrefix(pk, "DLV#"):
			var d domain.Delivery
			if err := attributevalue.UnmarshalMap(it, &d); err != nil {
				return snap, err
			}
			if !domain.Expired(d.ExpiresAt, now) {
				snap.Delivery = &d
			}
		case strings.HasPrefix(pk, "ACCT#"):
			var ep domain.Endpoint
			if err := attributevalue.UnmarshalMap(it, &ep); err != nil {
				return snap, err
			}
			snap.Endpoint = &ep
		case strings.HasPrefix(pk, "EVT#"):
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

// FailWithoutAttempt ends a pending delivery that can no longer be attempted
// (endpoint disabled or deleted, event expired, attempts used up by a worker
// that died). It is conditioned on the delivery being pending in gen with no
// live lease, and marks it for the DLQ. With sendDLQ the caller will send
// the DLQ message itself and takes the DLQ claim; without, whoever comes
// next (its queue message, or the sweeper) sends it.
//
// When seen still carries a claim (its worker died, the lease ran out), the
// attempt that claim made is logged as interrupted in the same transaction:
// the last attempt of a series lost to a crash shows in the log too.
func (s *Store) FailWithoutAttempt(ctx context.Context, seen domain.Delivery, reason string, sendDLQ bool) (domain.Delivery, error) {
	now := domain.Millis(s.now())
	claimUntil := int64(0)
	if sendDLQ {
		claimUntil = now + dlqClaimFor
	}
	in := &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(seen.ID), skDelivery),
		UpdateExpression: aws.String("SET #st = :failed, fail_reason = :reason, failed_at = :now, updated_at = :now," +
			" dlq_pending = :true, dlq_claim_until = :dlqc, due_at = :now, gsi2pk = :g2 REMOVE claim, claim_attempt, lease_until"),
		ConditionExpression:      aws.String("#st = :pending AND gen = :gen AND (attribute_not_exists(lease_until) OR lease_until < :now)"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":failed": str(domain.StatusFailed), ":reason": str(reason), ":now": num(now),
			":true": boolean(true), ":dlqc": num(claimUntil), ":g2": str(endpointStatusPK(seen.EndpointID, domain.StatusFailed)),
			":pending": str(domain.StatusPending), ":gen": num(int64(seen.Gen))},
		ReturnValues: types.ReturnValueAllNew,
	}
	if a := lifecycle.Interrupted(seen, domain.NewID("att")); a != nil {
		put, err := s.attemptPut(*a)
		if err != nil {
			return seen, err
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: in.TableName, Key: in.Key, UpdateExpression: in.UpdateExpression,
				ConditionExpression: in.ConditionExpression, ExpressionAttributeNames: in.ExpressionAttributeNames,
				ExpressionAttributeValues: in.ExpressionAttributeValues}},
			{Put: put},
		}})
		reasons := cancelReasons(err)
		switch {
		case err == nil:
			var d domain.Delivery
			return d, s.get(ctx, key(deliveryPK(seen.ID), skDelivery), &d)
		case !onlyConditionFailures(reasons):
			return seen, err
		case aws.ToString(reasons[0].Code) == "ConditionalCheckFailed":
			return seen, ErrConflict
		}
		// Only the log entry exists already (its worker recorded it after
		// all): fail the delivery alone.
	}
	out, err := s.db.UpdateItem(ctx, in)
	return unmarshalDelivery(out, err)
}

func unmarshalDelivery(out *dynamodb.UpdateItemOutput, err error) (domain.Delivery, error) {
	var d domain.Delivery
	if isConditionFailed(err) {
		return d, ErrConflict
	}
	if err != nil {
		return d, err
	}
	err = attributevalue.UnmarshalMap(out.Attributes, &d)
	return d, err
}

// dlqClaimFor is how long the sender of a DLQ message owns the sending;
// if it dies, the sweeper (or the delivery's message) takes over after it.
const dlqClaimFor = 30_000

// ClaimDeadLetter takes the sending of a failed delivery's DLQ message, so
// that two workers (or a worker and the sweeper) never both send it.
// ErrConflict: someone holds it, or it was sent.
func (s *Store) ClaimDeadLetter(ctx context.Context, id string) error {
	now := domain.Millis(s.now())
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression:          aws.String("SET dlq_claim_until = :until"),
		ConditionExpression:       aws.String("dlq_pending = :true AND (attribute_not_exists(dlq_claim_until) OR dlq_claim_until < :now)"),
		ExpressionAttributeValues: item{":true": boolean(true), ":now": num(now), ":until": num(now + dlqClaimFor)},
	})
	if isConditionFailed(err) {
		return ErrConflict
	}
	return err
}

// MarkDeadLettered records that the DLQ message of a failed delivery's
// generation gen was sent, which takes it out of the sweeper's index. A late
// mark for an older generation changes nothing: the newer one's message is
// still to be sent.
func (s *Store) MarkDeadLettered(ctx context.Context, id string, gen int) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression:          aws.String("REMOVE dlq_pending, dlq_claim_until, due_at, sweep_shard"),
		ConditionExpression:       aws.String("#st = :failed AND dlq_pending = :true AND gen = :gen"),
		ExpressionAttributeNames:  map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":failed": str(domain.StatusFailed), ":true": boolean(true), ":gen": num(int64(gen))},
	})
	if isConditionFailed(err) {
		return nil // already marked, or restarted since
	}
	return err
}

// Restart gives a failed delivery a fresh series of attempts: pending again,
// attempts back to 0, a new gen so that older queue messages are dropped.
// With gen >= 0 it only restarts that generation (a DLQ message restarting
// the failure it reported); with gen < 0 any failed delivery.
func (s *Store) Restart(ctx context.Context, id, endpointID string, gen int) (domain.Delivery, error) {
	now := domain.Millis(s.now())
	cond := "#st = :failed AND #ttl > :nowsec"
	vals := item{":failed": str(domain.StatusFailed), ":pending": str(domain.StatusPending), ":now": num(now),
		":zero": num(0), ":one": num(1), ":nowsec": num(s.now().Add(lifecycle.ExpiryMargin).Unix()), ":shard": str(sweepShard(id)),
		":g2": str(endpointStatusPK(endpointID, domain.StatusPending))}
	if gen >= 0 {
		cond += " AND gen = :gen"
		vals[":gen"] = num(int64(gen))
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(id), skDelivery),
		UpdateExpression: aws.String("SET #st = :pending, attempts = :zero, series = series + :one, gen = gen + :one," +
			" next_attempt_at = :now, due_at = :now, sweep_shard = :shard, updated_at = :now," +
			" gsi2pk = :g2 REMOVE fail_reason, failed_at, dlq_pending, dlq_claim_until, claim, claim_attempt, lease_until, throttles"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#st": "status", "#ttl": "ttl"},
		ExpressionAttributeValues: vals,
		ReturnValues:              types.ReturnValueAllNew,
	})
	return unmarshalDelivery(out, err)
}
