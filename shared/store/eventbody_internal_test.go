package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The CPU a 2 KB body's compression costs ingest, and its reading a worker
// that reads the event's item (docs/cost.md): go test -run '^$' -bench
// EventBody -benchmem ./shared/store/. A payout of line items, as
// testenv.PayoutBody makes them (which this package's tests cannot import).
func BenchmarkEventBody2KB(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"event":"payout.fulfilled","payout_type":"gift_cards","items":[`)
	for i := 0; sb.Len() < 1960; i++ {
		fmt.Fprintf(&sb, `{"id":"itm_01KBQ%021d","sku":"GC-%04d","amount_cents":%d,"currency":"USD"},`, i*7919, 1000+i*7, 500+i*137)
	}
	sb.WriteString(`{}]}`)
	body := []byte(sb.String())
	var n int
	for b.Loop() {
		it := item{"body": &types.AttributeValueMemberB{Value: body}}
		if err := packBody(it); err != nil {
			b.Fatal(err)
		}
		n = len(it["body_z"].(*types.AttributeValueMemberB).Value)
		if err := unpackBody(it); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "zbytes")
}
