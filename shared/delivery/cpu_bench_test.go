package delivery_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/fakeaws"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/onlambda"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// BenchmarkDelivery is our CPU per delivery (at most 1 ms,
// docs/performance.md "Our CPU per delivery"): the deliver function's
// handler for one first-attempt delivery that a receiver answers 200, wired
// by onlambda.FromEnv exactly as the deployed function is (the real SDK clients,
// their HTTP client, KMS-sealed secrets, the cap of 5, info logs and EMF
// metrics to a discarded writer, the slow lane named), its AWS endpoints
// pointed at localstack/fakeaws over loopback HTTP instead of the
// emulators, so that what is measured is our process and not an emulator
// sharing its two cores. One op is one SQS record handed to Handle alone.
//
// Reported per op: calls/op (the AWS requests the fake answered), cpu-µs/op
// (this process, getrusage), server-µs/op (the fake's and the receiver's
// server goroutines, from a CPU profile of the run: fakeaws.ReportCPU) and
// ours-µs/op, the difference: the handler, the SDK, the HTTP clients and
// the runtime. allocs/op counts the whole process's, the servers' included.
// "tracing=unsampled" starts tracing to a local UDP socket, as Active
// tracing does in Lambda, with every message's trace header Sampled=0 (the
// common case: X-Ray samples one request a second and 5 % of the rest).
func BenchmarkDelivery(b *testing.B) {
	b.Run("tracing=off", func(b *testing.B) { benchDelivery(b, false) })
	b.Run("tracing=unsampled", func(b *testing.B) { benchDelivery(b, true) })
}

func benchDelivery(b *testing.B, tracing bool) {
	ctx := context.Background()
	fake := fakeaws.New()
	defer fake.Close()
	var received atomic.Int64
	receiver := fakeaws.StartServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	defer receiver.Close()

	if tracing {
		daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer daemon.Close()
		go func() { // an X-Ray daemon that reads and forgets (an unsampled trace sends nothing)
			buf := make([]byte, 64<<10)
			for {
				if _, _, err := daemon.ReadFrom(buf); err != nil {
					return
				}
			}
		}()
		stop, err := obs.StartTracingTo(daemon.LocalAddr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer stop()
	}

	none := filepath.Join(b.TempDir(), "none")
	for k, v := range map[string]string{
		"TABLE_NAME": "gifq-bench", "QUEUE_URL": fake.URL + "/000000000000/delivery", "DLQ_URL": fake.URL + "/000000000000/dlq",
		"SLOW_QUEUE_URL": fake.URL + "/000000000000/slow", "PACED_QUEUE_URL": fake.URL + "/000000000000/paced", "KMS_KEY_ID": "alias/gifq-bench",
		"AWS_ENDPOINT_URL_DYNAMODB": fake.URL, "AWS_ENDPOINT_URL_SQS": fake.URL, "AWS_ENDPOINT_URL_KMS": fake.URL,
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_SESSION_TOKEN": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_PROFILE": "", "AWS_CA_BUNDLE": "", "AWS_EC2_METADATA_DISABLED": "true",
		"ALLOW_PRIVATE_ENDPOINTS": "true", "ALLOWED_SCHEMES": "http", // the receiver is on loopback
		"RATE_LIMIT_PER_SECOND": "1000000", // measure the handler, not the account's rate limit
	} {
		b.Setenv(k, v)
	}
	a, err := onlambda.FromEnv(ctx, "deliver", io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	w := a.Worker()

	acct, err := a.Store.CreateAccount(ctx, "bench", 0)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	ep := domain.Endpoint{
		ID: domain.NewID("ep"), AccountID: acct.ID, URL: receiver.URL + "/hook",
		Secrets:   []domain.Secret{{Value: signing.NewSecret(), CreatedAt: domain.Millis(now)}},
		CreatedAt: domain.Millis(now), UpdatedAt: domain.Millis(now),
	}
	if err := a.Store.CreateEndpoint(ctx, ep); err != nil { // seals the secret: the data key is made and cached here
		b.Fatal(err)
	}

	// b.N events with one delivery each, as ingest writes them: through a
	// client and connections of their own, labelled side=setup for the
	// profiler, so that a -cpuprofile of the run tells them apart.
	seedDB, _ := emulator.Clients(fake.URL, fake.URL)
	seed := store.New(seedDB, a.Config.TableName)
	msgs := make([]queue.Message, b.N)
	pprof.Do(ctx, pprof.Labels("side", "setup"), func(ctx context.Context) { seedEvents(ctx, b, seed, msgs, acct.ID, ep.ID, tracing) })

	// The functions' garbage collector (onlambda.Start's TuneGC), for this run only.
	if percent, _ := app.GCSettings(os.Getenv); percent > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(percent))
	}

	fake.ResetCalls()
	b.ReportAllocs()
	b.ResetTimer()
	fakeaws.ReportCPU(b, func() {
		for i, m := range msgs {
			m.SlotAt, m.SlotFor = domain.Millis(time.Now()), 0 // the slot ingest reserved: now
			raw, _ := json.Marshal(m)
			ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m" + strconv.Itoa(i), ReceiptHandle: "r" + strconv.Itoa(i),
				Body: string(raw), Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}}
			resp, err := w.Handle(ctx, ev)
			if err != nil || len(resp.BatchItemFailures) > 0 {
				b.Fatalf("Handle: %v, %d batch item failures", err, len(resp.BatchItemFailures))
			}
		}
	})
	b.ReportMetric(float64(fake.Total())/float64(b.N), "calls/op")
	b.Logf("N=%d: %s", b.N, fake.CallsString())

	if got := received.Load(); got != int64(b.N) {
		b.Fatalf("the receiver got %d requests for %d messages", got, b.N)
	}
	last, err := a.Store.GetDelivery(ctx, msgs[len(msgs)-1].DeliveryID)
	if err != nil || last.Status != domain.StatusDelivered || last.Attempts != 1 {
		b.Fatalf("last delivery: %+v, %v", last, err)
	}
}

// seedEvents writes len(msgs) events with one delivery each to the endpoint,
// as ingest does, and fills msgs with their queue messages.
func seedEvents(ctx context.Context, b *testing.B, st *store.Store, msgs []queue.Message, accountID, endpointID string, tracing bool) {
	body := []byte(`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123","amount":"12.50","currency":"USDC","updated_at":"2026-11-30T12:00:00Z"}}`)
	const unsampled = "Root=1-6750a1b2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=0"
	now := time.Now()
	for i := range msgs {
		ev := domain.Event{ID: domain.NewID("evt"), AccountID: accountID, Type: "payout.fulfilled", Body: body,
			ReceivedAt: domain.Millis(now), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
		d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: endpointID, AccountID: accountID, EventType: ev.Type,
			Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: domain.Millis(now),
			CreatedAt: domain.Millis(now), UpdatedAt: domain.Millis(now), ExpiresAt: ev.ExpiresAt}
		ev.DeliveryIDs = []string{d.ID}
		if _, err := st.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: []domain.Delivery{d}, DueAt: []int64{domain.Millis(now)}}); err != nil {
			b.Fatal(err)
		}
		msgs[i] = queue.For(d).Carrying(ev.Type, ev.Body) // as ingest sends it: with its body and delivery
		msgs[i].First = &queue.First{CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt}
		if tracing {
			msgs[i].Trace = unsampled
		}
	}
}
