package keylimit

import (
	"context"
	"errors"
	"fmt"
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

// KeyFunc returns a key's limiter item key (its own partition per API key,
// so producers do not contend on one).
type KeyFunc func(keyID string) (pk, sk string)

// Limited is the answer to n events over the key's limit.
type Limited struct {
	RetryAfter time.Duration
}

func (e *Limited) Error() string {
	return fmt.Sprintf("over the API key's ingest limit; retry after %s", e.RetryAfter)
}

// ErrExceedsBurst: more events at once than the key's burst, which no wait allows.
var ErrExceedsBurst = errors.New("more events at once than the API key's burst allows")

// Limiter takes ingest tokens for API keys. The table's item is the truth;
// each instance also remembers the last tat it saw for a key. tat only
// grows, so that memory is a lower bound: when it already refuses, the
// table would too, and a flood past the limit is refused with no DynamoDB
// call until the key's next token is due. It also picks which of the two
// conditional writes to try first, so a call is usually one write.
type Limiter struct {
	db    DynamoDB
	table *string
	key   KeyFunc
	ttl   string // the table's TTL attribute
	now   func() time.Time

	mu   sync.Mutex
	seen map[string]int64 // key id -> the last tat seen (unix ms)
}

const memoryMax = 10000 // keys remembered per instance before the memory starts over

// New returns a limiter keeping its items in table; ttlAttribute is the
// table's TTL attribute, so an idle key's item goes away.
func New(db DynamoDB, table, ttlAttribute string, key KeyFunc) *Limiter {
	return &Limiter{db: db, table: aws.String(table), key: key, ttl: ttlAttribute, now: time.Now, seen: map[string]int64{}}
}

// Take takes n tokens from keyID's bucket under l. It returns nil when the
// events may go on, a *Limited when they are over the limit (nothing is
// taken), ErrExceedsBurst when n can never fit, or the table's error.
func (lim *Limiter) Take(ctx context.Context, keyID string, n int, l Limit) error {
	if !l.Valid() {
		return fmt.Errorf("keylimit: invalid limit %+v", l)
	}
	if n <= 0 {
		return nil
	}
	if Exceeds(n, l) {
		return ErrExceedsBurst
	}
	now := lim.now().UnixMilli()
	tat := lim.seenTAT(keyID)
	if err := lim.refusal(tat, now, n, l); err != nil {
		return err
	}
	pk, sk := lim.key(keyID)
	k := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}
	for try := 0; try < 4; try++ {
		next, err := lim.write(ctx, k, n, l, now, tat > now)
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			if err == nil {
				lim.see(keyID, next)
			}
			return err
		}
		// The condition failed: the item as it was says which case holds.
		if tat, err = tatOf(ccf.Item); err != nil {
			return err
		}
		lim.see(keyID, tat)
		if d := Decide(tat, now, n, l); !d.Allowed {
			return &Limited{RetryAfter: d.RetryAfter}
		}
	}
	return fmt.Errorf("keylimit: no decision for key %s after repeated races", keyID)
}

// Refused is Take's answer from this instance's memory alone, with no
// DynamoDB call: a *Limited when the key is known to be over its limit,
// nil when only the table can tell. A caller checks it before starting
// other work, so a flood past the limit costs no call of any kind.
func (lim *Limiter) Refused(keyID string, n int, l Limit) error {
	if !l.Valid() || n <= 0 || Exceeds(n, l) {
		return nil // Take answers these
	}
	return lim.refusal(lim.seenTAT(keyID), lim.now().UnixMilli(), n, l)
}

func (lim *Limiter) refusal(seen, now int64, n int, l Limit) error {
	if d := Decide(seen, now, n, l); !d.Allowed {
		return &Limited{RetryAfter: d.RetryAfter} // the table can only say the same
	}
	return nil
}

// write is Decide as a conditional write, for the state guessed: an idle
// bucket (tat <= now: full) restarts from now, a draining one (tat > now)
// grows tat by n intervals while it stays within the burst. It returns the
// new tat.
func (lim *Limiter) write(ctx context.Context, k map[string]types.AttributeValue, n int, l Limit, now int64, draining bool) (int64, error) {
	step := int64(n) * l.interval()
	// The item outlives the time its bucket takes to fill again.
	expires := (now+int64(l.Burst)*l.interval())/1000 + 3600
	vals := map[string]types.AttributeValue{":now": num(now), ":step": num(step), ":exp": num(expires)}
	expr, cond := "SET tat = :now + :step, #ttl = :exp", "attribute_not_exists(tat) OR tat <= :now"
	if draining {
		expr, cond = "SET tat = tat + :step, #ttl = :exp", "tat > :now AND tat <= :lim"
		vals[":lim"] = num(now + int64(l.Burst)*l.interval() - step)
	}
	out, err := lim.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: lim.table, Key: k, UpdateExpression: aws.String(expr), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: map[string]string{"#ttl": lim.ttl}, ExpressionAttributeValues: vals,
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return 0, err
	}
	return tatOf(out.Attributes)
}

func (lim *Limiter) seenTAT(keyID string) int64 {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	return lim.seen[keyID]
}

func (lim *Limiter) see(keyID string, tat int64) {
	lim.mu.Lock()
	defer lim.mu.Unlock()
	if len(lim.seen) >= memoryMax {
		lim.seen = map[string]int64{}
	}
	lim.seen[keyID] = max(lim.seen[keyID], tat)
}

// tatOf reads tat from an item (none: a key never used).
func tatOf(item map[string]types.AttributeValue) (int64, error) {
	av, ok := item["tat"]
	if !ok {
		return 0, nil
	}
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, errors.New("keylimit: limiter item's tat is not a number")
	}
	return strconv.ParseInt(n.Value, 10, 64)
}

func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
