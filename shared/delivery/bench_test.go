//go:build emulators

package delivery_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.BenchMain(m) }

// BenchmarkHandle is the deliver function's handler per message, first
// attempts that succeed, against the DynamoDB and SQS emulators and a local
// receiver, with the deployed defaults (per-endpoint cap 5): read the
// delivery, endpoint and body (BatchGetItem), claim (TransactWriteItems with
// the endpoint's slot), sign and POST, record (TransactWriteItems). Each
// message carries its rate-limit slot, as ingest sends it. One op is one
// message; batch=10 hands Handle ten at a time, as the event source does,
// spread over as many endpoints so that none waits for the cap. cpu-ms/op
// is this process's CPU (user + system, getrusage) per message: the handler,
// the SDK and the in-process receiver, not the emulators.
func BenchmarkHandle(b *testing.B) {
	for _, batch := range []int{1, 10} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) { benchHandle(b, batch) })
	}
}

func benchHandle(b *testing.B, batch int) {
	ctx := context.Background()
	env := testenv.New(b)
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	cfg := config.Defaults()
	cfg.TableName, cfg.QueueURL, cfg.DLQURL = env.Table, env.Queues.Delivery, env.Queues.DLQ
	cfg.AllowPrivateEndpoints, cfg.AllowedSchemes = true, []string{"http"}
	cfg.RatePerSecond = 1e6 // measure the handler, not the account's rate limit
	a := app.New(cfg, env.DB, env.SQS, io.Discard, "deliver")
	w := a.Worker()

	acct, err := a.Store.CreateAccount(ctx, "bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	endpoints := make([]domain.Endpoint, batch)
	for i := range endpoints {
		endpoints[i] = domain.Endpoint{
			ID: domain.NewID("ep"), AccountID: acct.ID, URL: receiver.URL + "/hook",
			Secrets:   []domain.Secret{{Value: signing.NewSecret(), CreatedAt: domain.Millis(now)}},
			CreatedAt: domain.Millis(now), UpdatedAt: domain.Millis(now),
		}
		if err := a.Store.CreateEndpoint(ctx, endpoints[i]); err != nil {
			b.Fatal(err)
		}
	}
	body := []byte(`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123","amount":"12.50","currency":"USDC","updated_at":"2026-11-30T12:00:00Z"}}`)

	// Seed b.N events with one delivery each, as ingest writes them.
	msgs := make([]queue.Message, b.N)
	for i := range msgs {
		ep := endpoints[i%len(endpoints)]
		ev := domain.Event{ID: domain.NewID("evt"), AccountID: acct.ID, Type: "payout.fulfilled", Body: body,
			ReceivedAt: domain.Millis(now), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
		d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: acct.ID, EventType: ev.Type,
			Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: domain.Millis(now),
			CreatedAt: domain.Millis(now), UpdatedAt: domain.Millis(now), ExpiresAt: ev.ExpiresAt}
		ev.DeliveryIDs = []string{d.ID}
		if _, err := a.Store.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: []domain.Delivery{d}, DueAt: []int64{domain.Millis(now)}}); err != nil {
			b.Fatal(err)
		}
		msgs[i] = queue.For(d)
	}

	b.ReportAllocs()
	b.ResetTimer()
	cpu := testenv.CPUTime()
	for i := 0; i < len(msgs); i += batch {
		var ev events.SQSEvent
		for j := i; j < min(i+batch, len(msgs)); j++ {
			m := msgs[j]
			m.SlotAt, m.SlotFor = domain.Millis(time.Now()), 0 // the slot ingest reserved: now
			raw, _ := json.Marshal(m)
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: "m" + strconv.Itoa(j), ReceiptHandle: "r" + strconv.Itoa(j),
				Body: string(raw), Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
		}
		resp, err := w.Handle(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) > 0 {
			b.Fatalf("Handle: %v, %d batch item failures", err, len(resp.BatchItemFailures))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(testenv.CPUTime()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")

	if got := received.Load(); got != int64(b.N) {
		b.Fatalf("the receiver got %d requests for %d messages", got, b.N)
	}
	last, err := a.Store.GetDelivery(ctx, msgs[len(msgs)-1].DeliveryID)
	if err != nil || last.Status != domain.StatusDelivered || last.Attempts != 1 {
		b.Fatalf("last delivery: %+v, %v", last, err)
	}
}
