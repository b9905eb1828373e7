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
)

// An endpoint's in-flight slots live on one small item of their own,
// SLOT#<endpoint>, in its own partition (not the account's item collection,
// the hottest partition at scale), one attribute per slot: s<k> = {u: lease
// until, c: claim id}. The worker takes its slots for a receive batch's
// messages to the endpoint in one plain conditional UpdateItem
// (TakeSlots, under one group id) and frees them in another (FreeSlots), so
// neither the claim nor the record is a transaction. A worker that dies
// between taking a slot and freeing it holds the slot until its lease runs
// out.

// slotAttr is the attribute holding slot k's lease.
func slotAttr(slot string) string { return "s" + slot }

// slotTTL: an endpoint's slot item is deleted by DynamoDB this long after its
// last slot was taken (a deleted endpoint leaves none behind for long).
const slotTTL = 24 * time.Hour

// The slot item also carries the endpoint's route (domain.Endpoint.Route),
// written with the endpoint in one transaction whenever the endpoint is
// disabled, deleted or re-pointed (routeUpdate). A slot is taken only for
// the route the worker read, so that take is what sees a PATCH answered
// before it and the worker need not read the endpoint again. An
// item without a route accepts any: the endpoint never changed so, or its
// last change was more than slotTTL ago (the item expired since), long
// before any worker read it.

// routeUpdate writes an endpoint's new route on its slot item, in the
// transaction that changes the endpoint.
func (s *Store) routeUpdate(endpointID, route string) *types.Update {
	return &types.Update{
		TableName: s.table, Key: key(slotPK(endpointID), skSlot),
		UpdateExpression:          aws.String("SET #route = :route, #ttl = :ttl"),
		ExpressionAttributeNames:  map[string]string{"#route": "route", "#ttl": "ttl"},
		ExpressionAttributeValues: item{":route": str(route), ":ttl": num(s.now().Add(slotTTL).Unix())},
	}
}

// releaseSlot frees the slot if claim still holds it. Best effort: a slot
// not freed (an error, a crash) is free again when its lease runs out.
func (s *Store) releaseSlot(ctx context.Context, endpointID, slot, claim string) {
	_, _ = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(slotPK(endpointID), skSlot),
		UpdateExpression:          aws.String("REMOVE #slot"),
		ConditionExpression:       aws.String("#slot.c = :c"),
		ExpressionAttributeNames:  map[string]string{"#slot": slotAttr(slot)},
		ExpressionAttributeValues: item{":c": str(claim)},
	})
}

// slotLeases reads the leases of a slot item (nil item: none held).
func slotLeases(it item) (map[string]domain.Lease, error) {
	leases := map[string]domain.Lease{}
	for name, v := range it {
		slot, ok := strings.CutPrefix(name, "s")
		if !ok || slot == "" || strings.Trim(slot, "0123456789") != "" {
			continue
		}
		var l domain.Lease
		if err := attributevalue.Unmarshal(v, &l); err != nil {
			return nil, err
		}
		leases[slot] = l
	}
	return leases, nil
}

// SlotLeases reads an endpoint's in-flight slot leases (strongly consistent).
func (s *Store) SlotLeases(ctx context.Context, endpointID string) (map[string]domain.Lease, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: key(slotPK(endpointID), skSlot), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return slotLeases(out.Item)
}

// SlotTake is a group's take of several of an endpoint's slots in one
// conditional write (shared/inflight's pool): Group is the claim id every
// slot is held under, Route the endpoint's route as read.
type SlotTake struct {
	Group      string
	Slots      []string
	LeaseUntil int64
	Route      string
}

// TakeSlots takes t.Slots for the group in one conditional write, each free,
// run out or already the group's, and only while the endpoint's route is
// t.Route. When some are held by others it takes the rest in one more write
// (the first write's refusal returns the item, so that costs no read).
// It returns the slots taken; ErrSlotTaken when none was free,
// ErrEndpointChanged when the route moved (nothing written).
func (s *Store) TakeSlots(ctx context.Context, endpointID string, t SlotTake) ([]string, error) {
	want := t.Slots
	for try := 0; try < 2 && len(want) > 0; try++ {
		old, err := s.takeSlots(ctx, endpointID, t, want)
		if err == nil {
			return want, nil
		}
		if old == nil {
			return nil, err
		}
		if route, ok := old["route"].(*types.AttributeValueMemberS); ok && route.Value != t.Route {
			return nil, ErrEndpointChanged
		}
		leases, err := slotLeases(old)
		if err != nil {
			return nil, err
		}
		free := want[:0:0]
		for _, slot := range want {
			if l, held := leases[slot]; !held || l.Until < domain.Millis(s.now()) || l.Claim == t.Group {
				free = append(free, slot)
			}
		}
		want = free
	}
	return nil, ErrSlotTaken
}

// takeSlots makes one group take; on a refusal, the item as it was.
func (s *Store) takeSlots(ctx context.Context, endpointID string, t SlotTake, slots []string) (item, error) {
	names := map[string]string{"#ttl": "ttl", "#route": "route"}
	vals := item{":now": num(domain.Millis(s.now())), ":ttl": num(s.now().Add(slotTTL).Unix()), ":g": str(t.Group),
		":lease": &types.AttributeValueMemberM{Value: item{"u": num(t.LeaseUntil), "c": str(t.Group)}}}
	set, cond := []string{"#ttl = :ttl"}, []string{}
	for i, slot := range slots {
		n := "#s" + strconv.Itoa(i)
		names[n] = slotAttr(slot)
		set = append(set, n+" = :lease")
		cond = append(cond, "(attribute_not_exists("+n+") OR "+n+".u < :now OR "+n+".c = :g)")
	}
	route := "(attribute_not_exists(#route)"
	if t.Route != "" {
		route += " OR #route = :route"
		vals[":route"] = str(t.Route)
	}
	cond = append(cond, route+")")
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(slotPK(endpointID), skSlot),
		UpdateExpression:                    aws.String("SET " + strings.Join(set, ", ")),
		ConditionExpression:                 aws.String(strings.Join(cond, " AND ")),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           vals,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if ccf.Item == nil {
			return item{}, err
		}
		return ccf.Item, err
	}
	return nil, err
}

// FreeSlots frees the group's slots in one write, those it still holds: a
// slot whose lease ran out and was taken by another claim is left alone.
// Best effort, as releaseSlot, but a refused write is tried twice more: a
// pool's slots are leased to the end of its invocation, and slots left held
// made an endpoint's deliveries wait for its cap until their deadline.
func (s *Store) FreeSlots(ctx context.Context, endpointID, group string, slots []string) {
	if len(slots) == 0 {
		return
	}
	names, remove, cond := map[string]string{}, []string{}, []string{}
	for i, slot := range slots {
		n := "#s" + strconv.Itoa(i)
		names[n] = slotAttr(slot)
		remove = append(remove, n)
		cond = append(cond, n+".c = :g")
	}
	in := &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(slotPK(endpointID), skSlot),
		UpdateExpression:          aws.String("REMOVE " + strings.Join(remove, ", ")),
		ConditionExpression:       aws.String(strings.Join(cond, " AND ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: item{":g": str(group)},
	}
	var err error
	for _, wait := range []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond} {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if _, err = s.db.UpdateItem(ctx, in); err == nil || isConditionFailed(err) {
			break
		}
	}
	if isConditionFailed(err) && len(slots) > 1 {
		for _, slot := range slots { // one was taken over after its lease ran out: the others one by one
			s.releaseSlot(ctx, endpointID, slot, group)
		}
	}
}

// SlotRoute reads the endpoint's route from its slot item, strongly
// consistent: "" when the item has none (it accepts any route).
func (s *Store) SlotRoute(ctx context.Context, endpointID string) (string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: key(slotPK(endpointID), skSlot),
		ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("#route"), ExpressionAttributeNames: map[string]string{"#route": "route"}})
	if err != nil {
		return "", err
	}
	return stringAttr(out.Item, "route"), nil
}

// MarkSlow marks the endpoint slow until until (unix ms), on its slot item,
// unless it is marked already (ENDPOINT_CAP=whenSlow: lifecycle.CapNow).
func (s *Store) MarkSlow(ctx context.Context, endpointID string, until int64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(slotPK(endpointID), skSlot),
		UpdateExpression:          aws.String("SET #slow = :until, #ttl = :ttl"),
		ConditionExpression:       aws.String("attribute_not_exists(#slow) OR #slow < :now"),
		ExpressionAttributeNames:  map[string]string{"#slow": slowAttr, "#ttl": "ttl"},
		ExpressionAttributeValues: item{":until": num(until), ":now": num(domain.Millis(s.now())), ":ttl": num(s.now().Add(slotTTL).Unix())},
	})
	if isConditionFailed(err) {
		return nil
	}
	return err
}

// slowAttr is the slot item's attribute marking its endpoint slow.
const slowAttr = "slow_until"
