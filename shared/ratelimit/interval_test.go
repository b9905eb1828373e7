package ratelimit_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// An account's slots are spaced to the microsecond: 1,900 a second is 526
// µs apart, not the 1 ms (1,000 a second at most) of a whole-millisecond
// interval, and 300 a second is 3,333 µs, not 3 ms (333 a second). The item
// keeps tat and the interval as milliseconds with decimals, which
// DynamoDB's updates add exactly, so bookings made one after the other, by
// ingest at the rate and by a worker at the stored one, stay on the grid.
func TestSlotsAreSpacedToTheMicrosecond(t *testing.T) {
	for _, c := range []struct {
		perSecond float64
		ivl       time.Duration
	}{{1900, 526 * time.Microsecond}, {300, 3333 * time.Microsecond}, {5, 200 * time.Millisecond}} {
		if got := ratelimit.Interval(c.perSecond); got != c.ivl {
			t.Fatalf("Interval(%v) = %v, want %v", c.perSecond, got, c.ivl)
		}
		l := limiter(t, 5)
		a, err := l.Reserve(ctx, "acct_1", 100, c.perSecond)
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Reserve(ctx, "acct_1", 50, c.perSecond)
		if err != nil {
			t.Fatal(err)
		}
		w, err := l.Reserve(ctx, "acct_1", 1, 0) // a worker: the stored interval
		if err != nil {
			t.Fatal(err)
		}
		if a.Interval != c.ivl || b.Interval != c.ivl || w.Interval != c.ivl {
			t.Fatalf("%v/s: intervals %v, %v, %v; want %v", c.perSecond, a.Interval, b.Interval, w.Interval, c.ivl)
		}
		if b.First != a.Slot(100) || w.First != b.Slot(50) {
			t.Fatalf("%v/s: bookings at %v, %v, %v; want each right after the one before (%v, %v)",
				c.perSecond, a.First, b.First, w.First, a.Slot(100), b.Slot(50))
		}
	}
	// 1,900 slots booked at once take a second, not the two a whole
	// millisecond gave.
	l := limiter(t, 5)
	r, err := l.Reserve(ctx, "acct_1", 1900, 1900)
	if err != nil {
		t.Fatal(err)
	}
	if span := r.Slot(1899).Sub(r.First); span > time.Second {
		t.Fatalf("1,900 slots at 1,900/s span %v", span)
	}
}

// A limiter item stored before intervals were finer (tat and ivl whole
// milliseconds) is read as it is: the next slot is its tat, at its interval.
func TestAnItemOfWholeMillisecondsIsReadAsItIs(t *testing.T) {
	env := testenv.New(t)
	l := ratelimit.New(env.DB, env.Table, store.RateKey, 5)
	pk, sk := store.RateKey("acct_1")
	tat := time.Now().Add(10 * time.Second).UnixMilli()
	if _, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk},
		"tat": &types.AttributeValueMemberN{Value: strconv.FormatInt(tat, 10)}, "ivl": &types.AttributeValueMemberN{Value: "200"},
	}}); err != nil {
		t.Fatal(err)
	}
	r, err := l.Reserve(ctx, "acct_1", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.First.Equal(time.UnixMilli(tat)) || r.Interval != 200*time.Millisecond {
		t.Fatalf("slot %v every %v, want %v every 200ms", r.First, r.Interval, time.UnixMilli(tat))
	}
}
