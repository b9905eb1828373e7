package ingest

import (
	"testing"

	"github.com/gifq/webhooks/shared/domain"
)

// Validate runs on every POST /v1/events before anything is stored.
func BenchmarkValidate(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"typical", []byte(`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123","amount":"12.50","currency":"USDC","updated_at":"2026-11-30T12:00:00Z"}}`)},
		{"1KiB", bodyOfSize(1 << 10)},
		{"256KiB", bodyOfSize(domain.MaxBodyBytes)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Validate(c.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
