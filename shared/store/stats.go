package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/shared/stats"
)

// StatsTTL is how long an hourly counter item lives: a week's window and a
// day to spare.
const StatsTTL = 8 * 24 * time.Hour

// statsPK is the counter items' partition: the account's, or one of its
// endpoints' (the account in the key: an endpoint's stats are read with the
// account the caller proved, no endpoint read first).
func statsPK(account, endpoint string) string {
	if endpoint == "" {
		return "STATS#" + account
	}
	return "STATS#" + account + "#" + endpoint
}

func statsSK(hour time.Time) string { return "H#" + hour.UTC().Format("2006010215") }

// Counter attributes: short names, so an hour's item stays far under a
// write unit.
func classAttr(i int) string  { return "c" + stats.ClassNames[i] }
func bucketAttr(i int) string { return "l" + strconv.Itoa(i) }

// AddStats adds u's counts to its hour's item with one UpdateItem (ADD:
// commutative, so batches of any shard apply in any order) and sets its TTL.
func (s *Store) AddStats(ctx context.Context, u stats.Update) error {
	vals := item{":ttl": num(u.Hour.Add(StatsTTL).Unix())}
	var adds []string
	add := func(name string, n int64) {
		if n != 0 {
			v := fmt.Sprintf(":v%d", len(adds))
			adds = append(adds, name+" "+v)
			vals[v] = num(n)
		}
	}
	add("a", u.Attempts)
	add("d", u.Delivered)
	add("f", u.Failed)
	add("dl", u.DeadLettered)
	for i, n := range u.Classes {
		add(classAttr(i), n)
	}
	for i, n := range u.Latency {
		add(bucketAttr(i), n)
	}
	expr := "SET #ttl = :ttl"
	if len(adds) > 0 {
		expr += " ADD " + strings.Join(adds, ", ")
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(statsPK(u.Account, u.Endpoint), statsSK(u.Hour)),
		UpdateExpression: aws.String(expr), ExpressionAttributeNames: map[string]string{"#ttl": "ttl"},
		ExpressionAttributeValues: vals,
	})
	return err
}

// StatsHours reads the hourly items of an account (endpoint "") or one of its
// endpoints from hour from to hour to: one query of at most stats.MaxHours
// small items (eventually consistent: counters are behind anyway).
func (s *Store) StatsHours(ctx context.Context, account, endpoint string, from, to time.Time) ([]stats.Hour, error) {
	var out []stats.Hour
	var start Cursor
	for {
		res, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:              s.table,
			KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
			ExpressionAttributeValues: item{":pk": str(statsPK(account, endpoint)),
				":from": str(statsSK(from)), ":to": str(statsSK(to))},
			Limit: aws.Int32(stats.MaxHours), ExclusiveStartKey: start,
		})
		if err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			h, err := statsHour(it)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
		if res.LastEvaluatedKey == nil || len(out) >= stats.MaxHours {
			return out, nil
		}
		start = res.LastEvaluatedKey
	}
}

func statsHour(it item) (stats.Hour, error) {
	var h stats.Hour
	t, err := time.Parse("2006010215", strings.TrimPrefix(stringAttr(it, "sk"), "H#"))
	if err != nil {
		return h, err
	}
	h.Start = t
	n := func(name string) int64 {
		v, _ := strconv.ParseInt(numberAttr(it, name), 10, 64)
		return v
	}
	h.Attempts, h.Delivered, h.Failed, h.DeadLettered = n("a"), n("d"), n("f"), n("dl")
	for i := range h.Classes {
		h.Classes[i] = n(classAttr(i))
	}
	for i := range h.Latency {
		h.Latency[i] = n(bucketAttr(i))
	}
	return h, nil
}
