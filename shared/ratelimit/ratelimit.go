// Package ratelimit paces each account's deliveries (5 per second by
// default) with a reservation limiter kept in DynamoDB and shared by every
// Lambda instance.
//
// It is GCRA with reservations: the account's item holds tat, the time at
// which its next free slot starts. Reserving n slots moves tat forward by n
// intervals in one conditional write and returns where the first slot
// starts; the caller then waits until its slot instead of trying again, so a
// burst of 500 turns into 500 scheduled sends, not 500 rejected ones retrying.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB is the one call the limiter makes.
type DynamoDB interface {
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// KeyFunc returns an account's limiter item key.
type KeyFunc func(account string) (pk, sk string)

// Limiter reserves delivery slots.
type Limiter struct {
	db          DynamoDB
	table       *string
	key         KeyFunc
	defaultRate float64
	now         func() time.Time
	busy        sync.Map // account -> bool: was its limiter busy last time (which write to try first)
}

// New returns a limiter at defaultRate deliveries per second per account.
func New(db DynamoDB, table string, key KeyFunc, defaultRate float64) *Limiter {
	return &Limiter{db: db, table: aws.String(table), key: key, defaultRate: defaultRate, now: time.Now}
}

// Reservation is n consecutive slots: slot i starts at First + i*Interval.
type Reservation struct {
	First    time.Time
	Interval time.Duration
}

// Slot returns the start of slot i.
func (r Reservation) Slot(i int) time.Time { return r.First.Add(time.Duration(i) * r.Interval) }

// Reserve books n slots for account. perSecond is the account's rate; 0
// means the rate last stored for the account (set by ingest), or the default.
func (l *Limiter) Reserve(ctx context.Context, account string, n int, perSecond float64) (Reservation, error) {
	if n <= 0 {
		return Reservation{First: l.now()}, nil
	}
	pk, sk := l.key(account)
	k := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
	wasBusy, _ := l.busy.Load(account)
	busyFirst := wasBusy == true
	for try := 0; try < 6; try++ {
		now := l.now().UnixMilli()
		var res Reservation
		var err error
		if busyFirst {
			res, err = l.append(ctx, k, n, perSecond, now)
		} else {
			res, err = l.start(ctx, k, n, perSecond, now)
		}
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			busyFirst = !busyFirst // the other state holds: try the other write
			continue
		}
		if err == nil {
			l.busy.Store(account, busyFirst)
		}
		return res, err
	}
	return Reservation{}, fmt.Errorf("ratelimit: no reservation for %s after repeated races", account)
}

// intervalMs is 1/perSecond in milliseconds, or 0 to use the stored one.
func (l *Limiter) intervalMs(perSecond float64) int64 {
	if perSecond <= 0 {
		return 0
	}
	return int64(math.Max(1, math.Round(1000/perSecond)))
}

// start: the limiter is idle (tat in the past): the first slot is now.
func (l *Limiter) start(ctx context.Context, k map[string]types.AttributeValue, n int, perSecond float64, now int64) (Reservation, error) {
	ivl := l.intervalMs(perSecond)
	vals := map[string]types.AttributeValue{":now": numAV(now)}
	expr := "SET tat = :now + :step, ivl = :ivl"
	if ivl != 0 {
		vals[":step"], vals[":ivl"] = numAV(ivl*int64(n)), numAV(ivl)
	} else if n == 1 {
		// A worker retrying does not know the account's rate: use the stored one.
		expr = "SET tat = :now + if_not_exists(ivl, :def), ivl = if_not_exists(ivl, :def)"
		vals[":def"] = numAV(l.intervalMs(l.defaultRate))
	} else {
		return Reservation{}, errSeveralNeedRate
	}
	out, err := l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: l.table, Key: k, UpdateExpression: aws.String(expr),
		ConditionExpression:       aws.String("attribute_not_exists(tat) OR tat <= :now"),
		ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return Reservation{}, err
	}
	return reservation(out.Attributes, n)
}

var errSeveralNeedRate = errors.New("ratelimit: reserving several slots needs the account's rate")

// append: the limiter is busy (tat ahead of now): the slots follow the last one booked.
func (l *Limiter) append(ctx context.Context, k map[string]types.AttributeValue, n int, perSecond float64, now int64) (Reservation, error) {
	ivl := l.intervalMs(perSecond)
	vals := map[string]types.AttributeValue{":now": numAV(now)}
	expr, cond := "SET tat = tat + ivl", "tat > :now AND attribute_exists(ivl)"
	if ivl != 0 {
		expr, cond = "SET tat = tat + :step, ivl = :ivl", "tat > :now"
		vals[":step"], vals[":ivl"] = numAV(ivl*int64(n)), numAV(ivl)
	} else if n != 1 {
		return Reservation{}, errSeveralNeedRate
	}
	out, err := l.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: l.table, Key: k, UpdateExpression: aws.String(expr), ConditionExpression: aws.String(cond),
		ExpressionAttributeValues: vals, ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return Reservation{}, err
	}
	return reservation(out.Attributes, n)
}

func reservation(attrs map[string]types.AttributeValue, n int) (Reservation, error) {
	tat, err1 := numOf(attrs["tat"])
	ivl, err2 := numOf(attrs["ivl"])
	if err := errors.Join(err1, err2); err != nil {
		return Reservation{}, err
	}
	return Reservation{First: time.UnixMilli(tat - ivl*int64(n)), Interval: time.Duration(ivl) * time.Millisecond}, nil
}

func numAV(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func numOf(av types.AttributeValue) (int64, error) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, errors.New("ratelimit: limiter item lacks a number")
	}
	return strconv.ParseInt(n.Value, 10, 64)
}
