package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/store"
)

type statsOut struct {
	Attempts, Delivered, Failed int64
	DeadLettered                int64            `json:"dead_lettered"`
	SuccessRate                 *float64         `json:"success_rate"`
	Classes                     map[string]int64 `json:"status_classes"`
	Series                      []struct{ Attempts int64 }
}

// The stats count what the receivers saw: three events delivered to one
// endpoint at the first attempt, one failing on another until its attempts
// ran out (then dead-lettered), per endpoint and for the account, through
// the table's stream (make dev's poller here, the stats function on the
// deployed stack).
func TestStatsCountWhatTheReceiverSaw(t *testing.T) {
	t.Parallel()
	statsCountWhatTheReceiverSaw(t, start(t, opts{stats: true}))
}

// The same, black-box against make dev's binary (its own stream poller).
func TestStatsCountWhatTheReceiverSawOnMakeDev(t *testing.T) {
	t.Parallel()
	localOnly(t)
	env := testenv.NewWithStream(t)
	p := startDevProc(t, env, "RETRY_SCHEDULE=1s,1s,1s,1s,1s,1s,1s", "SWEEP_INTERVAL=1s", "SWEEP_GRACE=3s")
	statsCountWhatTheReceiverSaw(t, &harness{api: p.api, store: store.New(env.DB, env.Table), sqs: env.SQS, queueURL: env.Queues.Delivery,
		dlqURL: env.Queues.DLQ, recvHost: "127.0.0.1", env: env, attempts: 8, slower: 1})
}

func statsCountWhatTheReceiverSaw(t *testing.T, h *harness) {
	_, key := h.account(t)
	okRecv, okEp := h.registerReceiver(t, key, always(200), "payout.fulfilled")
	badRecv, badEp := h.registerReceiver(t, key, always(500), "payout.failed")
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, h.publish(t, key, payout).Deliveries[0].ID)
	}
	ids = append(ids, h.publish(t, key, strings.Replace(payout, "payout.fulfilled", "payout.failed", 1)).Deliveries[0].ID)
	for _, id := range ids {
		h.waitFor(t, key, id, 3*time.Minute, settled)
	}
	seenOK, seenBad := len(okRecv.requests()), len(badRecv.requests())
	if seenOK != 3 || seenBad != h.attempts {
		t.Fatalf("receivers saw %d and %d requests, want 3 and %d", seenOK, seenBad, h.attempts)
	}
	want := map[string]string{
		"/v1/endpoints/" + okEp.ID + "/stats":  "attempts=3 delivered=3 failed=0 dead=0 2xx=3 5xx=0 rate=1.00 series=3",
		"/v1/endpoints/" + badEp.ID + "/stats": fmt.Sprintf("attempts=%d delivered=0 failed=1 dead=1 2xx=0 5xx=%d rate=0.00 series=%d", seenBad, seenBad, seenBad),
		"/v1/stats?window=week":                fmt.Sprintf("attempts=%d delivered=3 failed=1 dead=1 2xx=3 5xx=%d rate=0.75 series=%d", 3+seenBad, seenBad, 3+seenBad),
	}
	deadline := time.Now().Add(time.Duration(h.slower * float64(time.Minute)))
	for path, w := range want {
		var got string
		for {
			var s statsOut
			if code := h.call(t, key, "GET", path, nil, &s); code != 200 {
				t.Fatalf("%s: %d", path, code)
			}
			got = summarize(s)
			if got == w || time.Now().After(deadline) {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if got != w {
			t.Errorf("%s:\n got %s\nwant %s", path, got, w)
		}
	}
	for _, w := range []string{"month", ""} { // an empty window is not the default's (Schemathesis)
		if code := h.call(t, key, "GET", "/v1/stats?window="+w, nil, nil); code != 400 {
			t.Errorf("window=%s: %d, want 400", w, code)
		}
	}
}

func summarize(s statsOut) string {
	rate := -1.0
	if s.SuccessRate != nil {
		rate = *s.SuccessRate
	}
	var series int64
	for _, p := range s.Series {
		series += p.Attempts
	}
	return fmt.Sprintf("attempts=%d delivered=%d failed=%d dead=%d 2xx=%d 5xx=%d rate=%.2f series=%d",
		s.Attempts, s.Delivered, s.Failed, s.DeadLettered, s.Classes["2xx"], s.Classes["5xx"], rate, series)
}
