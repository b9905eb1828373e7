package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func orderingPK(account, k string) string { return "OKEY#" + account + "#" + hashHex(k) }

const skOrdering = "OKEY"

// Sequenced is an event's place in its (account, ordering key) sequence.
type Sequenced struct {
	Seq int64
	// Prev is, per endpoint asked for, the delivery of the key's previous
	// event to it ("": none yet).
	Prev map[string]string
}

// Sequence gives the next event of (accountID, okey) its number, and
// records deliveries (endpoint id -> delivery id: the ordered endpoints'
// deliveries of that event) as the key's latest on those endpoints,
// returning the ones they replace. One UpdateItem: concurrent events of a
// key are chained in the order of their numbers. The item expires with the
// event (expiresAt, unix s): a key unused for the retention starts again at 1.
func (s *Store) Sequence(ctx context.Context, accountID, okey string, deliveries map[string]string, expiresAt int64) (Sequenced, error) {
	set := []string{"#ttl = :ttl"}
	names := map[string]string{"#ttl": "ttl"}
	values := item{":one": num(1), ":ttl": num(expiresAt)}
	i := 0
	for ep, d := range deliveries {
		n, v := "#e"+strconv.Itoa(i), ":d"+strconv.Itoa(i)
		set = append(set, n+" = "+v)
		names[n], values[v] = "ep_"+ep, str(d)
		i++
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(orderingPK(accountID, okey), skOrdering),
		UpdateExpression:         aws.String("ADD seq :one SET " + strings.Join(set, ", ")),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values,
		ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return Sequenced{}, err
	}
	res := Sequenced{Seq: 1, Prev: map[string]string{}}
	if n := numberAttr(out.Attributes, "seq"); n != "" {
		old, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return Sequenced{}, fmt.Errorf("store: ordering sequence %q: %w", n, err)
		}
		res.Seq = old + 1
	}
	for ep := range deliveries {
		if d := stringAttr(out.Attributes, "ep_"+ep); d != "" {
			res.Prev[ep] = d
		}
	}
	return res, nil
}
