package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/window"
	"github.com/gifq/webhooks/shared/config"
)

// postBatch posts one batch of n events through POST /v1/events/batch and
// returns the answer's status and its accepted count.
func (h *harness) postBatch(t *testing.T, key string, from, n int) (status, accepted int) {
	t.Helper()
	var events []map[string]json.RawMessage
	for i := from; i < from+n; i++ {
		events = append(events, map[string]json.RawMessage{"body": json.RawMessage(fmt.Sprintf(`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_b%d"}}`, i))})
	}
	raw, _ := json.Marshal(map[string]any{"events": events})
	req, _ := http.NewRequest("POST", h.api+"/v1/events/batch", bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Accepted int }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Accepted
}

// With the deployment's default per-key ingest limit,
// a burst of 500 events for one account was mostly refused (33 of 60
// accepted at 10/s, burst 50), where the contract spreads a burst at the
// account's delivery rate. Now 500 events posted at once one by one, and
// 500 more through batch ingest, are all accepted and delivered at the
// account's rate. That the default still answers a flood with 429 is
// shared/config's TestTheDefaultKeyLimitTakesABurstAndStopsAFlood (the
// rule, with its clock), and the limiter's own tests here
// (ingestlimit_test.go) prove it end to end.
func TestABurstIsAcceptedAndSpreadWithTheDefaultKeyLimit(t *testing.T) {
	localOnly(t) // sets the key limit to the deployment's defaults
	def := config.Defaults()
	const n, rate = 500, 25 // 25/s keeps the drain at ~40 s; the contract's 5/s is the default
	h := start(t, opts{rate: rate, env: map[string]string{
		"INGEST_RATE_PER_SECOND": strconv.FormatFloat(def.IngestRatePerSecond, 'f', -1, 64), "INGEST_BURST": strconv.Itoa(def.IngestBurst)}})
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, always(200))

	var one tally
	inParallel(n, 8, func(i int) { one.add(t, h.post(t, key, i)) })
	if one.byStatus[http.StatusAccepted] != n {
		t.Fatalf("one by one: %v, want all %d accepted", one.byStatus, n)
	}
	for from := 0; from < n; from += 100 {
		if status, accepted := h.postBatch(t, key, from, 100); status != http.StatusOK || accepted != 100 {
			t.Fatalf("batch from %d: %d with %d accepted, want 200 with 100", from, status, accepted)
		}
	}
	waitCount(t, "delivered", 2*n, 2*time.Minute, func() int { return len(rv.requests()) })
	var at []time.Time
	for _, r := range rv.requests() {
		at = append(at, r.at)
	}
	busiest := window.BusiestWallClockSecond(at)
	if busiest > rate {
		t.Errorf("%d requests in one wall-clock second at %d/s", busiest, rate)
	}
	t.Logf("%d accepted one by one and %d in batches, all delivered; busiest wall-clock second %d (sliding second %d) at %d/s",
		n, n, busiest, window.Busiest(at, time.Second), rate)

}
