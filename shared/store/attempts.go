package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
)

// DeliveryWithAttempts reads a delivery and its whole attempt log, oldest
// attempt first, in one query (they share the delivery's partition; some
// are on the delivery's item itself).
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
	attempts = append(attempts, loggedAttempts(d)...)
	oldestFirst(attempts)
	return d, attempts, nil
}

// Ref names a delivery and the items an attempt of it reads.
type Ref struct {
	DeliveryID, AccountID, EndpointID, EventID string
	// Event, when the queue message carried it (queue.Message.Event), is
	// the event as ingest wrote it: its item is not read. Ingest sends a
	// message only after its event's conditional put (the commit), and an
	// event does not change, so the item would say the same.
	Event *domain.Event
	// Delivery, when the message is ingest's first (queue.Message.First),
	// is the delivery as ingest wrote it: its item is not read. The claim
	// holds it to that (ClaimAttempt's condition), and returns the item.
	Delivery *domain.Delivery
	// Eventual reads eventually consistent, at half the read units: only
	// with both Event and Delivery carried, so that only the endpoint and
	// its slot item are read (an event or a delivery just written could be
	// missing from such a read; the endpoint is older than the event that
	// named it). The caller takes what it read for what it may be: up to
	// about a second old (lifecycle.Known.Stale).
	Eventual bool
}

// Snapshot is what an attempt needs, read in one BatchGetItem. A nil field
// is an item that does not exist (or has expired).
type Snapshot struct {
	Delivery *domain.Delivery
	Endpoint *domain.Endpoint
	Event    *domain.Event
}

// LoadForAttempt reads the delivery unless r carries it, its endpoint as it
// is now (with its in-flight slot leases, from the endpoint's slot item),
// and the event body unless r carries it, strongly consistent (or, with
// r.Eventual, eventually), in one call.
func (s *Store) LoadForAttempt(ctx context.Context, r Ref) (Snapshot, error) {
	keys := []item{
		key(accountPK(r.AccountID), endpointSK(r.EndpointID)),
		key(slotPK(r.EndpointID), skSlot),
	}
	if r.Delivery == nil {
		keys = append(keys, key(deliveryPK(r.DeliveryID), skDelivery))
	}
	consistent := !(r.Eventual && r.Delivery != nil && r.Event != nil)
	if r.Event == nil {
		if k, ok := eventKey(r.AccountID, r.EventID); ok {
			keys = append(keys, k)
		}
	}
	items, err := s.batchGetAs(ctx, keys, consistent)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Event: r.Event}
	if d := r.Delivery; d != nil && !domain.Expired(d.ExpiresAt, s.now()) {
		cp := *d
		snap.Delivery = &cp
	}
	leases := map[string]domain.Lease{}
	var slowUntil int64
	eventThere := r.Event != nil
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
			if _, err := s.openSecrets(ctx, &ep); err != nil {
				return snap, err
			}
			snap.Endpoint = &ep
		case isEventItem(pk):
			eventThere = true
			if snap.Event, err = liveEvent(it, now); err != nil {
				return snap, err
			}
		case strings.HasPrefix(pk, slotPK("")):
			if leases, err = slotLeases(it); err != nil {
				return snap, err
			}
			slowUntil, _ = strconv.ParseInt(numberAttr(it, slowAttr), 10, 64)
		}
	}
	if !eventThere {
		// Stored before events moved to their account's day (legacyEventKey),
		// or not there at all.
		if it, err := s.getEventItem(ctx, "", r.EventID, consistent); err == nil {
			eventThere = true
			if snap.Event, err = liveEvent(it, now); err != nil {
				return snap, err
			}
		} else if !errors.Is(err, ErrNotFound) {
			return snap, err
		}
	}
	if snap.Endpoint != nil {
		snap.Endpoint.Leases, snap.Endpoint.SlowUntil = leases, slowUntil
		if snap.Endpoint.SignsV1a() {
			if snap.Endpoint.SigningKeys, err = s.signingKeysFor(ctx, r.AccountID); err != nil {
				return snap, err
			}
		}
	}
	if d := snap.Delivery; d != nil && !eventThere && d.EventID == r.EventID {
		// Its own event was never written (an ingest that died between its
		// two writes: an orphan) or is still being written: no delivery
		// for the decision, and past OrphanAfter it is deleted. (An event
		// past its TTL is still there until DynamoDB deletes it, and so is
		// never taken for this: by then the delivery, of the same TTL, has
		// expired as well.)
		if now.Sub(time.UnixMilli(d.CreatedAt)) >= OrphanAfter {
			if err := s.deleteOrphan(ctx, *d); err != nil {
				return snap, err
			}
		}
		snap.Delivery = nil
	}
	return snap, nil
}

// Claim is a worker's hold on one attempt of a delivery.
type Claim struct {
	ID         string // unique per claim
	LeaseUntil int64  // unix ms; after it another worker may take over
	AttemptID  string // the attempt this claim makes (kept, so a lost attempt is logged under the id the receiver saw)
	// Interrupted, when set, is the log entry for an earlier attempt whose
	// worker died after claiming it; it is written before the claim, and an
	// entry of that id already there (the attempt was recorded after all, or
	// another worker logged it) is left as it is.
	Interrupted *domain.Attempt
}

// ClaimAttempt takes the next attempt of a delivery with one conditional
// write that succeeds for exactly one worker. seen is the delivery as read;
// if anything changed since, or another worker holds a live lease, or the
// attempt is not due, it fails with ErrConflict and the delivery is not
// written. (The endpoint's in-flight slot is taken apart, by the worker's
// pool: shared/inflight, TakeSlots.) The attempt counts from here, so an
// attempt lost to a crash still counts toward the ceiling.
func (s *Store) ClaimAttempt(ctx context.Context, seen domain.Delivery, c Claim) (domain.Delivery, error) {
	now := domain.Millis(s.now())
	if c.Interrupted != nil {
		if err := s.putAttemptOnce(ctx, *c.Interrupted); err != nil {
			return seen, err
		}
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(deliveryPK(seen.ID), skDelivery),
		UpdateExpression: aws.String("SET attempts = attempts + :one, claim = :c, claim_attempt = :aid, lease_until = :lease, updated_at = :now"),
		// The ids too: seen may be what a message said (Ref.Delivery), not
		// what was read, and a message naming another account's delivery
		// must not claim it.
		ConditionExpression: aws.String("#st = :pending AND gen = :gen AND attempts = :attempts AND next_attempt_at <= :now" +
			" AND (attribute_not_exists(lease_until) OR lease_until < :now)" +
			" AND account_id = :acct AND endpoint_id = :ep AND event_id = :evt"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: item{":one": num(1), ":c": str(c.ID), ":aid": str(c.AttemptID), ":lease": num(c.LeaseUntil), ":now": num(now),
			":pending": str(domain.StatusPending), ":gen": num(int64(seen.Gen)), ":attempts": num(int64(seen.Attempts)),
			":acct": str(seen.AccountID), ":ep": str(seen.EndpointID), ":evt": str(seen.EventID)},
		// The item as claimed (no read units: an update's return values are
		// free), so the record works from the item, not from what was seen.
		ReturnValues: types.ReturnValueAllNew,
		// A claim refused because it holds already is ours: the SDK retried a
		// write that DynamoDB had applied (a timeout, a 500). Taken for lost,
		// it would leave an attempt claimed that no one makes, logged as
		// interrupted and counted against the eight.
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var claimed item
	if err == nil {
		claimed = out.Attributes
	} else if it, ours := claimedBy(err, c.ID); ours {
		claimed, err = it, nil
	}
	if err != nil {
		if isConditionFailed(err) {
			return seen, ErrConflict
		}
		return seen, err
	}
	var d domain.Delivery
	if err := attributevalue.UnmarshalMap(claimed, &d); err != nil {
		return seen, err
	}
	return d, nil
}

// claimedBy reports whether err is a claim's condition failing on an item
// that claim id already holds, and that item.
func claimedBy(err error, id string) (item, bool) {
	var ccf *types.ConditionalCheckFailedException
	var held struct {
		Claim string `dynamodbav:"claim"`
	}
	ours := errors.As(err, &ccf) && attributevalue.UnmarshalMap(ccf.Item, &held) == nil && held.Claim == id
	if !ours {
		return nil, false
	}
	return ccf.Item, true
}

// putAttempt writes an attempt-log entry, over one of that id if there is.
func (s *Store) putAttempt(ctx context.Context, a domain.Attempt) error {
	put, err := s.attemptPut(a)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item})
	return err
}

// putAttemptOnce writes an attempt-log entry unless one of that id exists.
func (s *Store) putAttemptOnce(ctx context.Context, a domain.Attempt) error {
	put, err := s.attemptPut(a)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: put.TableName, Item: put.Item, ConditionExpression: put.ConditionExpression})
	if isConditionFailed(err) {
		return nil
	}
	return err
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

// RecordAttempt writes the endpoint's health when it changes, then moves the delivery on with a write conditioned on still
// holding the claim, which logs the attempt on the delivery's item when it
// fits there (inlineEntry; the common case: one write for the attempt and its
// outcome), else the attempt's own log entry is written first. Plain writes,
// each idempotent, so a worker that retries after an error (or dies between
// two of them) repeats nothing twice. A crash before the outcome's write
// leaves the claim to expire; the next claim's interrupted entry for the same
// attempt id then logs it (or finds its own entry there and leaves it). If
// the claim was lost (the lease ran out and another worker took over), the
// attempt is still logged, on its own item (in place of an interrupted entry
// the new owner may have written for it), the delivery is left to its new
// owner, and ErrConflict is returned.
func (s *Store) RecordAttempt(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, c Claim, a domain.Attempt, o Outcome) error {
	entry := inlineEntry(d, a, o)
	if entry == nil {
		if err := s.putAttemptOnce(ctx, a); err != nil {
			return err
		}
	}
	if err := s.updateHealth(ctx, d, ep, a, o); err != nil {
		return err
	}
	u := s.recordUpdate(d, c, a, o, entry)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
		ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if !isConditionFailed(err) {
		return err // nil, or an error: the worker re-reads, then writes again while the lease lasts
	}
	if now, uerr := conditionItem(err); uerr == nil && now.LastAttemptID == a.ID {
		return nil // this very write, applied, then retried by the SDK
	}
	if entry != nil {
		// Lost: log the attempt on its own item, over an interrupted entry
		// of its id if the new owner wrote one: this is what happened.
		if err := s.putAttempt(ctx, a); err != nil {
			return err
		}
	}
	return ErrConflict
}

// recordUpdate is the outcome's write; entry, when not nil, is the attempt
// appended to the delivery's atts list (inlineEntry).
func (s *Store) recordUpdate(d domain.Delivery, c Claim, a domain.Attempt, o Outcome, entry types.AttributeValue) *types.Update {
	now := domain.Millis(s.now())
	// last_ms is the attempt's duration for the stats' latency histogram
	// (package stats reads it from the stream, with last_status/last_error).
	set := []string{"updated_at = :now", "last_attempt_at = :started", "last_attempt_id = :aid", "last_ms = :ms"}
	remove := []string{"claim", "claim_attempt", "lease_until", "overdue_from"}
	vals := item{":now": num(now), ":started": num(a.StartedAt), ":aid": str(a.ID), ":c": str(c.ID), ":ms": num(a.DurationMs)}
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
		// The sweep index entry stays (removing it would cost a write
		// unit): the sweeper reads each entry once and skips a final one.
		set = append(set, "#st = :st", "delivered_at = :now")
	case domain.StatusFailed:
		// Stays in the sweeper's index until the DLQ message is sent; the
		// worker recording the failure sends it, so it holds the DLQ claim.
		// Enters the status index, which holds only failed deliveries.
		set = append(set, "#st = :st", "fail_reason = :reason", "failed_at = :now", "dlq_pending = :true", "due_at = :now", "dlq_claim_until = :dlqc", "gsi2pk = :g2")
		vals[":reason"], vals[":true"], vals[":dlqc"] = str(o.FailReason), boolean(true), num(now+dlqClaimFor)
		vals[":g2"] = str(endpointStatusPK(d.EndpointID, domain.StatusFailed))
	default:
		set = append(set, "next_attempt_at = :next")
		if !o.KeepDue {
			set = append(set, "due_at = :next") // moves the sweep index entry: two write units
		}
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
	if entry != nil {
		set = append(set, "atts = list_append(if_not_exists(atts, :none), :att)")
		vals[":none"], vals[":att"] = &types.AttributeValueMemberL{}, &types.AttributeValueMemberL{Value: []types.AttributeValue{entry}}
	}
	return &types.Update{
		TableName: s.table, Key: key(deliveryPK(d.ID), skDelivery),
		UpdateExpression:          aws.String("SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")),
		ConditionExpression:       aws.String("claim = :c"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: vals,
	}
}

// LastFailureEvery is how often a failing endpoint's last failure (time,
// status or error) is written on it for its health view: at most once a
// minute, so an endpoint failing every attempt costs at most one write a
// minute more, and the view is at most a minute behind.
const LastFailureEvery = time.Minute

// updateHealth writes the endpoint's health fields an attempt changed
// (failing_since, paused_until, disabled, the last failure when
// LastFailureEvery has passed; not the first two for a blip,
// lifecycle.Blip); nothing when none changed, which is the common case. A
// deleted endpoint is left deleted.
func (s *Store) updateHealth(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, a domain.Attempt, o Outcome) error {
	if ep == nil {
		return nil
	}
	now := domain.Millis(s.now())
	var set, remove []string
	vals := item{}
	if lifecycle.Recovers(*ep, o) {
		remove = append(remove, "failing_since", "disable_warned_at")
	}
	if lifecycle.AuthRecovers(*ep, o) {
		remove = append(remove, "auth_failing_since")
	}
	authStarts := lifecycle.StartsAuthFailing(*ep, a.ErrorClass)
	if authStarts {
		set = append(set, "auth_failing_since = if_not_exists(auth_failing_since, :now)")
		vals[":now"] = num(now)
	}
	failed := !o.Healthy && !o.Blip // a blip leaves the endpoint's health as it is
	if lifecycle.StartsFailing(*ep, o) {
		set = append(set, "failing_since = if_not_exists(failing_since, :now)")
		vals[":now"] = num(now)
	}
	if failed && now-ep.LastFailureAt >= LastFailureEvery.Milliseconds() {
		set = append(set, "last_failure_at = :lfa")
		vals[":lfa"] = num(now)
		if a.StatusCode != 0 {
			set = append(set, "last_failure_status = :lfs")
			remove = append(remove, "last_failure_error")
			vals[":lfs"] = num(int64(a.StatusCode))
		} else {
			set = append(set, "last_failure_error = :lfe")
			remove = append(remove, "last_failure_status")
			vals[":lfe"] = str(a.ErrorClass)
		}
	}
	if o.PauseUntil > 0 {
		set = append(set, "paused_until = :pause")
		vals[":pause"] = num(o.PauseUntil)
	}
	route := ""
	if o.DisableEndpoint != "" {
		// A new route, as a PATCH that disables it gives (UpdateEndpoint).
		route = domain.NewID("rte")
		set = append(set, "disabled = :true", "disabled_reason = :why", "updated_at = :upd", "route = :route")
		vals[":true"], vals[":why"], vals[":upd"], vals[":route"] = boolean(true), str(o.DisableEndpoint), num(now), str(route)
	}
	breakerWrites(o.Breaker, &set, &remove, vals)
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
	in := &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(accountPK(d.AccountID), endpointSK(d.EndpointID)),
		UpdateExpression: aws.String(strings.Join(expr, " ")), ConditionExpression: aws.String("attribute_exists(pk)"),
	}
	if len(vals) > 0 {
		in.ExpressionAttributeValues = vals
	}
	if authStarts && route == "" {
		in.ReturnValues = types.ReturnValueUpdatedOld
	}
	old, err := s.updateRouted(ctx, in, d.EndpointID, route)
	if isConditionFailed(err) {
		return nil // deleted meanwhile
	}
	if v, set := old["auth_failing_since"].(*types.AttributeValueMemberN); set && authStarts {
		// Another attempt set it first (read before its write): it raises
		// endpoint.auth_failed, not this one (opevents.AfterAttempt reads ep).
		ep.AuthFailingSince, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	return err
}

// liveEvent decodes an event's item; nil when it has expired (DynamoDB
// deletes late).
func liveEvent(it item, now time.Time) (*domain.Event, error) {
	ev, err := eventOf(it)
	if err != nil || domain.Expired(ev.ExpiresAt, now) {
		return nil, err
	}
	return &ev, nil
}
