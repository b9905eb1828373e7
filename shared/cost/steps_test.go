package cost_test

import (
	"testing"

	"github.com/gifq/webhooks/shared/cost"
)

// The steps' units add up to the counted ones: a first-attempt delivery
// (9 / 2), each further delivery of the same event (7 / 1), the same with
// the cap off (7 and 5), and a retry (5 / 3).
func TestStepUnitsAddUpToTheCounted(t *testing.T) {
	firstW := cost.IngestEventWrites + cost.IngestDeliveryWrites + cost.AttemptWrites + cost.DeliveredSweepWrite
	firstR := cost.IngestAccountRead + cost.AttemptReads
	furtherW := cost.IngestDeliveryWrites + cost.AttemptWrites + cost.DeliveredSweepWrite
	furtherR := cost.AttemptReads
	// A retry: the failed attempt (its outcome keeps the sweep entry where
	// it is: the retry is due a second on) and its booking; the
	// first attempt's 500 is a blip, which writes no endpoint health.
	retryW := cost.RetryRateBookingWrite + cost.AttemptWrites + cost.RetrySweepWrite
	retryR := cost.RetryAttemptReads
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"first delivery, write units", firstW, cost.SingleWriteUnits},
		{"first delivery, read units", firstR, cost.SingleReadUnits},
		{"first delivery, cap off, write units", firstW - cost.SlotWrites, cost.SingleWriteUnits - 2},
		{"further delivery, write units", furtherW, cost.FanOutWriteUnits},
		{"further delivery, read units", furtherR, cost.FanOutReadUnits},
		{"further delivery, cap off, write units", furtherW - cost.SlotWrites, cost.FanOutWriteUnits - 2},
		{"retry, write units", retryW, cost.RetryWriteUnits},
		{"retry, read units", retryR, cost.RetryReadUnits},
		{"retry, cap off, write units", retryW - cost.SlotWrites, cost.RetryWriteUnits - 2},
		// A batch of 100 shares the key's limiter, the account's booking and
		// the account's endpoint query (a hundredth each, rounded away).
		// and the slots' take and free by the receive batch (BatchSlotWrites).
		{"batch event, write units", firstW - cost.IngestKeyLimitWrite - cost.IngestRateBookingWrite - cost.SlotWrites, cost.BatchWriteUnits},
		{"batch event, read units", firstR - cost.IngestAccountRead, cost.BatchReadUnits},
	} {
		if c.got != c.want {
			t.Errorf("%s: the steps add up to %d, counted %d", c.name, c.got, c.want)
		}
	}
}
