package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
)

func TestBatchSize(t *testing.T) {
	svc := &Service{}
	for _, n := range []int{0, MaxBatch + 1} {
		if _, err := svc.IngestBatch(context.Background(), "acct", make([]Item, n)); !errors.Is(err, ErrBatchSize) {
			t.Errorf("%d items: %v, want ErrBatchSize", n, err)
		}
	}
}

// A batch request writes one EMF line for all its events (CloudWatch Logs
// bills each byte), and logs no info line per event (the API's request line
// says how many were accepted).
func TestABatchWritesOneMetricLineAndNoInfoLinePerEvent(t *testing.T) {
	var metrics, logs bytes.Buffer
	st := &keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}
	s := &Service{Store: st, Queue: discardQueue{}, Limiter: &countingLimiter{}, DefaultRate: 5,
		Log: slog.New(slog.NewJSONHandler(&logs, nil)), Metrics: obs.NewMetrics(&metrics, true, "t", "t"), Now: time.Now}
	items := make([]Item, 20)
	for i := range items {
		items[i] = Item{Body: []byte(`{"event":"payout.fulfilled"}`), IdempotencyKey: fmt.Sprint("k", i)} // the fake store keys events by it
	}
	out, err := s.IngestBatch(context.Background(), "acct_1", items)
	if err != nil || out[0].Err != nil {
		t.Fatal(err, out[0].Err)
	}
	if n := strings.Count(metrics.String(), "\n"); n != 1 || !strings.Contains(metrics.String(), `"EventsIngested":20`) {
		t.Fatalf("%d EMF lines for a batch of 20, want one counting 20:\n%s", n, metrics.String())
	}
	if logs.Len() != 0 {
		t.Fatalf("info lines for a batch's events:\n%s", logs.String())
	}
}
