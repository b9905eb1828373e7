package store

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/shared/domain"
)

// An attempt is logged on the delivery's item, in the write that records its
// outcome, when the item stays within one write unit with it: a first try
// that succeeds then costs one write instead of two (the attempt's own item
// and the outcome), and no later write of the delivery grows past a unit.
const writeUnitBytes = 1024

// inlineEntry is attempt a as the element the outcome's write appends to
// d's atts list, when it fits on d's item with outcome o (d as read, with the
// attempts already logged there); nil when it does not. Deterministic, so a
// record written again decides the same.
func inlineEntry(d domain.Delivery, a domain.Attempt, o Outcome) types.AttributeValue {
	logged := d.Logged
	d.Logged = nil
	it, err := deliveryItem(d, d.DueAt)
	if err != nil {
		return nil
	}
	size := ItemSize(it) + len("atts") + 3 + recordRoom(o)
	var v types.AttributeValue
	for _, e := range append(logged, a) {
		if v, err = inlineValue(e); err != nil {
			return nil
		}
		size += 1 + valueBytes(v)
	}
	if size > writeUnitBytes {
		return nil
	}
	return v // a's, the last
}

// recordRoom is what an outcome's write may add to the delivery's item beside
// the attempt: the last status or error, and delivered_at, or for a failure
// its reason, times, DLQ claim and status index key.
func recordRoom(o Outcome) int {
	if o.Status == domain.StatusFailed {
		return 172
	}
	return 60 // with last_ms
}

// inlineValue is attempt a as an element of the delivery's atts list: its
// delivery id and expiry are the delivery's, so they are left out.
func inlineValue(a domain.Attempt) (types.AttributeValue, error) {
	m, err := attributevalue.MarshalMap(a)
	if err != nil {
		return nil, err
	}
	delete(m, "delivery_id")
	delete(m, "ttl")
	return &types.AttributeValueMemberM{Value: m}, nil
}

// loggedAttempts are the attempts on d's item, whole.
func loggedAttempts(d domain.Delivery) []domain.Attempt {
	out := make([]domain.Attempt, len(d.Logged))
	for i, a := range d.Logged {
		a.DeliveryID, a.ExpiresAt = d.ID, d.ExpiresAt
		out[i] = a
	}
	return out
}

// oldestFirst and newestFirst sort attempts by id (attempt ids are
// time-ordered): the log merges the attempts on the delivery's item with
// those on their own.
func oldestFirst(attempts []domain.Attempt) {
	slices.SortFunc(attempts, func(a, b domain.Attempt) int { return strings.Compare(a.ID, b.ID) })
}

func newestFirst(attempts []domain.Attempt) {
	oldestFirst(attempts)
	slices.Reverse(attempts)
}

// ItemSize is an item's size as DynamoDB bills it: attribute names plus
// values (strings and binaries by length, numbers about one byte per two
// significant digits plus one, booleans and nulls one byte, maps and lists
// three bytes plus one per element).
func ItemSize(it map[string]types.AttributeValue) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueBytes(v)
	}
	return n
}

func valueBytes(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return (len(strings.TrimLeft(v.Value, "-0"))+1)/2 + 1
	case *types.AttributeValueMemberM:
		n := 3
		for name, e := range v.Value {
			n += 1 + len(name) + valueBytes(e)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueBytes(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += valueBytes(&types.AttributeValueMemberN{Value: s})
		}
		return n
	}
	return 1 // BOOL, NULL
}
