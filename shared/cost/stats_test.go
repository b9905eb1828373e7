package cost_test

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/cost"
	"github.com/gifq/webhooks/shared/stats"
)

// The stats writes per delivery, from the fold's own count of writes for a
// full batch: a fraction of a write unit, growing with the endpoints a batch
// spans.
func TestStatsWriteUnitsPerDelivery(t *testing.T) {
	at := time.Date(2026, 12, 6, 7, 30, 0, 0, time.UTC)
	for _, endpoints := range []int{1, 10} {
		batch := cost.StatsBatchOf(endpoints, at)
		updates := stats.Fold(batch)
		var delivered int64
		for _, u := range updates {
			if u.Endpoint == "" {
				delivered = u.Delivered
			}
		}
		got := float64(len(updates)) / float64(delivered)
		if want := cost.StatsWriteUnitsPerDelivery(endpoints); got != want || got >= 1 {
			t.Errorf("%d endpoints: %d writes for %d deliveries = %.2f a delivery, the model says %.2f", endpoints, len(updates), delivered, got, want)
		}
		t.Logf("%d endpoints: %.2f write units per delivery", endpoints, got)
	}
}
