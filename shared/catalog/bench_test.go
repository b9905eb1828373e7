package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// What ingest pays per event of a catalogued type (Check), and per
// instance per type after a catalog change (Compile). Run:
// go test -run - -bench . ./shared/catalog/
func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		if _, err := Compile([]byte(payoutSchema)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	s, err := Compile([]byte(payoutSchema))
	if err != nil {
		b.Fatal(err)
	}
	small := []byte(`{"event":"payout.sent","data":{"amount":5,"paid_at":"2026-12-02T10:00:00Z"}}`)
	// ~250 KiB: the largest body ingest takes, most of it one array.
	items := make([]string, 0, 5000)
	for i := range 5000 {
		items = append(items, fmt.Sprintf(`{"sku":"sku_%06d","qty":%d}`, i, i))
	}
	large := []byte(`{"event":"payout.sent","data":{"amount":5,"lines":[` + strings.Join(items, ",") + `]}}`)
	for name, body := range map[string][]byte{"small": small, "250KiB": large} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := s.Check(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
