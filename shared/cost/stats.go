package cost

import (
	"strconv"
	"time"

	"github.com/gifq/webhooks/shared/schema"
	"github.com/gifq/webhooks/shared/stats"
)

// The stats function (package stats) is off the hot path: the table's stream
// is free to read for Lambda, and each batch of up to schema.StatsBatch
// delivery-item changes costs one counter write (under 1 KB: one unit) per
// (endpoint, hour) and per (account, hour) in it. A delivery delivered on its
// first attempt makes StatsRecordsPerDelivery changes that pass the
// mapping's filter (its claim and its outcome).
const StatsRecordsPerDelivery = 2

// StatsWriteUnitsPerDelivery is the stats writes' share of one such
// delivery in a full batch whose deliveries go to endpoints endpoints of one
// account, within one hour: Fold's updates over the deliveries the batch
// holds (TestStatsWriteUnitsPerDelivery builds the batch and folds it).
// One endpoint: 2 / 50 = 0.04; ten: 11 / 50 = 0.22.
func StatsWriteUnitsPerDelivery(endpoints int) float64 {
	deliveries := schema.StatsBatch / StatsRecordsPerDelivery
	return float64(endpoints+1) / float64(deliveries)
}

// StatsBatchOf is a full batch of delivered-at-first-attempt changes spread
// over endpoints endpoints of one account, at t: what the stats function
// folds, for the test that prices it.
func StatsBatchOf(endpoints int, t time.Time) []stats.Change {
	var out []stats.Change
	for i := 0; len(out) < schema.StatsBatch; i++ {
		ep := "ep_" + strconv.Itoa(i%endpoints)
		pending := &stats.Image{Account: "acct_1", Endpoint: ep, Status: "pending"}
		done := &stats.Image{Account: "acct_1", Endpoint: ep, Status: "delivered", LastAttemptID: "att_" + strconv.Itoa(i), LastStatus: 200, LastMs: 80}
		out = append(out, stats.Change{Old: pending, New: pending, At: t}, stats.Change{Old: pending, New: done, At: t})
	}
	return out
}
