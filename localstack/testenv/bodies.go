package testenv

import (
	"fmt"
	"strings"

	"github.com/gifq/webhooks/shared/domain"
)

// PayoutBody is a realistic event body of about n bytes: a payout with line
// items, each with its own id (ids and amounts are what compress least).
func PayoutBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"event":"payout.fulfilled","payout_type":"gift_cards","recipient_uuid":"6f1c2f3a-5b7e-4c1d-9a0b-2f8e4d6c1a35","items":[`)
	for i := 0; b.Len() < n-40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%s","sku":"GC-%04d","amount_cents":%d,"currency":"USD"}`, domain.NewID("itm"), 1000+i*7, 500+i*137)
	}
	b.WriteString(`],"updated_at":"2026-11-30T05:00:00Z"}`)
	return []byte(b.String())
}
