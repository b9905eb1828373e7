package e2e

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

type batchEnv struct {
	env     *testenv.Env
	st      *store.Store
	svc     *ingest.Service
	account string
}

func newBatchEnv(t *testing.T, rate float64, endpoints int) batchEnv {
	t.Helper()
	localOnly(t)
	env := testenv.New(t)
	st := store.New(env.DB, env.Table)
	ctx := context.Background()
	acct, err := st.CreateAccount(ctx, "batch", rate)
	if err != nil {
		t.Fatal(err)
	}
	for i := range endpoints {
		now := domain.Millis(time.Now())
		ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: acct.ID, URL: "https://example.test/" + string(rune('a'+i)),
			Secrets: []domain.Secret{{Value: "whsec_x", CreatedAt: now}}, CreatedAt: now, UpdatedAt: now}
		if err := st.CreateEndpoint(ctx, ep); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	svc := &ingest.Service{Store: st, Queue: queue.New(env.SQS, env.Queues.Delivery, env.Queues.DLQ),
		Limiter: ratelimit.New(env.DB, env.Table, store.RateKey, rate), DefaultRate: rate,
		Log: log, Metrics: obs.NewMetrics(io.Discard, false, "test", "test"), Now: time.Now}
	return batchEnv{env: env, st: st, svc: svc, account: acct.ID}
}

// eventItems counts the events stored in the table.
func (b batchEnv) eventItems(t *testing.T) int {
	t.Helper()
	out, err := b.env.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(b.env.Table),
		FilterExpression: aws.String("begins_with(pk, :p)"), ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": &types.AttributeValueMemberS{Value: "EVTS#"}}})
	if err != nil {
		t.Fatal(err)
	}
	return int(out.Count)
}

// queuedMessages reads n messages off the delivery queue (they may be delayed to
// their slots); with n = 0, whatever one receive of a second finds.
func (b batchEnv) queuedMessages(t *testing.T, n int) []queue.Message {
	t.Helper()
	var msgs []queue.Message
	deadline := time.Now().Add(20 * time.Second)
	for first := true; first || len(msgs) < n && time.Now().Before(deadline); first = false {
		res, err := b.env.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(b.env.Queues.Delivery), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Messages {
			msg, err := queue.Decode(aws.ToString(m.Body))
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, msg)
		}
	}
	return msgs
}

// ingest.Service.IngestBatch on its own (no worker, no API), against the
// emulators: what it writes, queues and calls.

// Each item is accepted or refused on its own, with the single route's errors.
func TestBatchAcceptsAndRefusesEachEventOnItsOwn(t *testing.T) {
	b := newBatchEnv(t, 1000, 2)
	items := []ingest.Item{
		{Body: []byte(`{"event":"payout.fulfilled", "n": 1}`)},
		{Body: []byte(`not json`)},
		{Body: []byte(`{"event":"order.created"}`), IdempotencyKey: "k1"},
		{Body: []byte(`{"event":"bad type!"}`)},
		{Body: []byte(`{"event":"order.created"}`), IdempotencyKey: "k1"},                          // a repeat: the first event
		{Body: []byte(`{"event":"order.changed"}`), IdempotencyKey: "k1"},                          // the key with another body
		{Body: []byte(`{"event":"a"}`), IdempotencyKey: "bad\nkey"},                                // refused before anything is written
		{Body: []byte(`{"event":"x","event":"y"}`)},                                                // event twice
		{Body: []byte(`{"event":"big","pad":"` + strings.Repeat("a", domain.MaxBodyBytes) + `"}`)}, // too large
	}
	out, err := b.svc.IngestBatch(context.Background(), b.account, items)
	if err != nil {
		t.Fatal(err)
	}
	wantErr := []error{nil, ingest.ErrInvalidJSON, nil, ingest.ErrBadEventType, nil, store.ErrIdempotencyMismatch, ingest.ErrBadIdempotencyKey, ingest.ErrDuplicateEvent, ingest.ErrTooLarge}
	for i, want := range wantErr {
		if !errors.Is(out[i].Err, want) || want == nil && out[i].Err != nil {
			t.Errorf("item %d: err %v, want %v", i, out[i].Err, want)
		}
	}
	if string(out[0].Event.Body) != `{"event":"payout.fulfilled", "n": 1}` || len(out[0].Deliveries) != 2 {
		t.Errorf("item 0: body %q, %d deliveries", out[0].Event.Body, len(out[0].Deliveries))
	}
	if out[2].Replayed || !out[4].Replayed || out[4].Event.ID != out[2].Event.ID {
		t.Errorf("repeat of k1: first %s replayed=%v, second %s replayed=%v", out[2].Event.ID, out[2].Replayed, out[4].Event.ID, out[4].Replayed)
	}
	// Stored: the two new events, nothing for the refused ones or the repeat.
	if n := b.eventItems(t); n != 2 {
		t.Errorf("%d events stored, want 2", n)
	}
	for _, i := range []int{0, 2} {
		got, err := b.st.GetEvent(context.Background(), out[i].Event.AccountID, out[i].Event.ID)
		if err != nil || string(got.Body) != string(items[i].Body) {
			t.Errorf("item %d stored as %q (%v)", i, got.Body, err)
		}
	}
	// Queued: one message per new delivery (2 events x 2 endpoints), none for the repeat.
	if msgs := b.queuedMessages(t, 4); len(msgs) != 4 {
		t.Errorf("%d messages queued, want 4", len(msgs))
	}
	if more := b.queuedMessages(t, 0); len(more) != 0 {
		t.Errorf("%d more messages queued, want none (a repeat queues nothing)", len(more))
	}
}

// The account's rate limit applies per delivery across the whole batch:
// one slot each, 1/rate apart, as if the events had come one by one.
func TestBatchBooksOneRateSlotPerDelivery(t *testing.T) {
	b := newBatchEnv(t, 5, 2)
	items := make([]ingest.Item, 5)
	for i := range items {
		items[i] = ingest.Item{Body: []byte(`{"event":"payout.fulfilled"}`)}
	}
	out, err := b.svc.IngestBatch(context.Background(), b.account, items)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		if r.Err != nil {
			t.Fatalf("item %d: %v", i, r.Err)
		}
	}
	msgs := b.queuedMessages(t, 10)
	if len(msgs) != 10 {
		t.Fatalf("%d messages, want 10", len(msgs))
	}
	slots := make([]int64, len(msgs))
	for i, m := range msgs {
		slots[i] = m.SlotAt
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
	for i := 1; i < len(slots); i++ {
		if gap := slots[i] - slots[i-1]; gap < 199 || gap > 201 {
			t.Errorf("slots %d and %d are %d ms apart, want 200 (5/s)", i-1, i, gap)
		}
	}
}

// The AWS calls a full batch costs, counted on the service's own clients:
// the account read and the rate-limit reservation once per batch, one
// transaction per event, one SQS send per 10 deliveries. docs/cost.md prices it.
func TestBatchCallsPerEvent(t *testing.T) {
	b := newBatchEnv(t, 1000, 1)
	calls := testenv.NewCalls()
	db, q := b.env.CountedClients(calls)
	st := store.New(db, b.env.Table)
	b.svc.Store, b.svc.Queue = st, queue.New(q, b.env.Queues.Delivery, b.env.Queues.DLQ)
	b.svc.Limiter = ratelimit.New(db, b.env.Table, store.RateKey, 1000)
	items := make([]ingest.Item, ingest.MaxBatch)
	for i := range items {
		items[i] = ingest.Item{Body: []byte(`{"event":"payout.fulfilled","data":{"id":"po_` + strconv.Itoa(i) + `"}}`)}
	}
	began := time.Now()
	out, err := b.svc.IngestBatch(context.Background(), b.account, items)
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range out {
		if r.Err != nil || len(r.Deliveries) != 1 {
			t.Fatalf("item %d: %v, %d deliveries", i, r.Err, len(r.Deliveries))
		}
	}
	t.Logf("100 events, one endpoint, in %s: %s", took.Round(time.Millisecond), calls)
	want := map[string]int{"DynamoDB.Query": 1, "DynamoDB.UpdateItem": 1, "DynamoDB.BatchWriteItem": 100, "DynamoDB.PutItem": 100, "SQS.SendMessageBatch": 10}
	got := calls.Snapshot()
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s = %d, want %d", op, got[op], n)
		}
	}
	for op := range got {
		if _, ok := want[op]; !ok {
			t.Errorf("unexpected call %s = %d", op, got[op])
		}
	}
	// For the record (docs/cost.md), not asserted: the same 100 one by one.
	began = time.Now()
	for _, it := range items {
		if _, err := b.svc.Ingest(context.Background(), b.account, it.Body, ""); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("the same 100 one by one through Ingest: %s", time.Since(began).Round(time.Millisecond))
}
