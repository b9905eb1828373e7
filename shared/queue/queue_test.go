package queue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/queue"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var ctx = context.Background()

func msg(deliveryID string) queue.Message {
	return queue.Message{Kind: queue.KindDeliver, DeliveryID: deliveryID, EventID: "evt_1", EndpointID: "ep_1", AccountID: "acct_1"}
}

// gated holds a SendMessageBatch at its gate, and counts the requests.
type gated struct {
	queue.SQS
	*testenv.Gate
	requests atomic.Int32
}

func (g *gated) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	g.requests.Add(1)
	g.Pass()
	return g.SQS.SendMessageBatch(ctx, in, o...)
}

func gatedQueue(t *testing.T) (*testenv.Env, *gated, *queue.Queue) {
	t.Helper()
	env := testenv.New(t)
	g := &gated{SQS: env.SQS, Gate: testenv.NewGate()}
	return env, g, queue.New(g, env.Queues.Delivery, env.Queues.DLQ)
}

// holdOne sends one message and holds its request in flight; it returns
// once the request is held, and wait gives that send's error.
func holdOne(t *testing.T, g *gated, q *queue.Queue, id string) (wait func() error) {
	t.Helper()
	g.Arm()
	errc := make(chan error, 1)
	go func() { errc <- q.Send(ctx, msg(id), 0) }()
	select {
	case <-g.Entered:
	case err := <-errc:
		t.Fatalf("the send ended (%v) without a SendMessageBatch", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no SendMessageBatch was made")
	}
	return func() error { return <-errc }
}

// sendAtOnce sends one message for each id with ctx, concurrently, and
// returns once all are gathered behind the request in flight; wait gives
// their errors by id.
func sendAtOnce(t *testing.T, ctx context.Context, q *queue.Queue, ids ...string) (wait func() map[string]error) {
	t.Helper()
	var mu sync.Mutex
	errs := map[string]error{}
	var wg sync.WaitGroup
	before := q.Gathering()
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := q.Send(ctx, msg(id), 0)
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); q.Gathering() < before+len(ids); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages gathered behind the request in flight", q.Gathering()-before, len(ids))
		}
	}
	return func() map[string]error { wg.Wait(); return errs }
}

// received drains the queue's visible messages and returns their delivery ids, sorted.
func received(t *testing.T, env *testenv.Env, want int) []string {
	t.Helper()
	var ids []string
	for deadline := time.Now().Add(10 * time.Second); len(ids) < want && time.Now().Before(deadline); {
		out, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(env.Queues.Delivery),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var body struct {
				DeliveryID string `json:"delivery_id"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &body); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, body.DeliveryID)
		}
	}
	sort.Strings(ids)
	return ids
}

// The messages a process sends while a request of its own is in flight go
// together in the next: 7 sends, 2 requests, 7 messages on the queue.
func TestSendsWhileOneIsInFlightShareTheNextRequest(t *testing.T) {
	env, g, q := gatedQueue(t)
	first := holdOne(t, g, q, "dlv_0")
	wait := sendAtOnce(t, ctx, q, "dlv_1", "dlv_2", "dlv_3", "dlv_4", "dlv_5", "dlv_6")
	g.Open()
	if err := first(); err != nil {
		t.Fatal(err)
	}
	for id, err := range wait() {
		if err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if n := g.requests.Load(); n != 2 {
		t.Fatalf("7 sends made %d requests; want 2 (the first alone, the six that waited for it together)", n)
	}
	if ids := received(t, env, 7); len(ids) != 7 || ids[0] != "dlv_0" || ids[6] != "dlv_6" {
		t.Fatalf("on the queue: %v", ids)
	}
}

// A message SQS refuses in a shared request fails its own send only, and a
// send with no room left in the next request goes alone, at once.
func TestASharedRequestsRefusalsAndOverflowStayTheirSendersOwn(t *testing.T) {
	env, g, q := gatedQueue(t)
	first := holdOne(t, g, q, "dlv_0")
	bad := "dlv_\uffff" // not a character SQS accepts in a body
	wait := sendAtOnce(t, ctx, q, "dlv_1", bad, "dlv_2")
	// Eight more do not fit beside the three gathered: their request is
	// made now, while the first is still held.
	var eight []queue.Outgoing
	for i := range 8 {
		eight = append(eight, queue.Outgoing{Message: msg("dlv_x" + string(rune('a'+i)))})
	}
	if failed, err := q.SendAll(ctx, eight); err != nil || len(failed) != 0 {
		t.Fatalf("eight alone: failed %v, %v", failed, err)
	}
	g.Open()
	if err := first(); err != nil {
		t.Fatal(err)
	}
	errs := wait()
	if errs[bad] == nil || errs["dlv_1"] != nil || errs["dlv_2"] != nil {
		t.Fatalf("errors %v: want only %q refused", errs, bad)
	}
	if n := g.requests.Load(); n != 3 {
		t.Fatalf("%d requests; want 3 (the first, the eight alone, the three together)", n)
	}
	if ids := received(t, env, 11); len(ids) != 11 {
		t.Fatalf("on the queue: %v, want the 11 SQS took", ids)
	}
}

// The request a group's first sender makes is the others' too: that sender
// going away (a producer that hung up, its context canceled) fails no other
// send, and the request is still made.
func TestASendersCanceledContextFailsNoOtherSend(t *testing.T) {
	env, g, q := gatedQueue(t)
	first := holdOne(t, g, q, "dlv_0")
	gone, hangUp := context.WithCancel(ctx)
	goneWait := sendAtOnce(t, gone, q, "dlv_a") // the next request's maker
	wait := sendAtOnce(t, ctx, q, "dlv_b")
	hangUp()
	g.Open()
	if err := first(); err != nil {
		t.Fatal(err)
	}
	if err := wait()["dlv_b"]; err != nil {
		t.Fatalf("the other sender's send failed with the first's context: %v", err)
	}
	if err := goneWait()["dlv_a"]; err != nil {
		t.Fatalf("the request was not made: %v", err)
	}
	if ids := received(t, env, 3); len(ids) != 3 {
		t.Fatalf("on the queue: %v, want all three", ids)
	}
}

// recordingSQS keeps every batch entry it is asked to send.
type recordingSQS struct {
	queue.SQS
	mu      sync.Mutex
	entries []string // "group body" per entry
}

func (r *recordingSQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	r.mu.Lock()
	for _, e := range in.Entries {
		r.entries = append(r.entries, aws.ToString(e.MessageGroupId)+" "+aws.ToString(e.MessageBody))
	}
	r.mu.Unlock()
	return r.SQS.SendMessageBatch(ctx, in, o...)
}

// Every delivery-queue message carries its account as its
// MessageGroupId, which turns on SQS fair queues for the standard queue; the
// emulator takes such messages, with their per-message delays, and hands
// them back.
func TestEveryDeliveryMessageIsGroupedByItsAccount(t *testing.T) {
	env := testenv.New(t)
	rec := &recordingSQS{SQS: env.SQS}
	q := queue.New(rec, env.Queues.Delivery, env.Queues.DLQ)
	a, b := msg("dlv_a"), msg("dlv_b")
	b.AccountID = "acct_2"
	if _, err := q.SendAll(ctx, []queue.Outgoing{{Message: a}, {Message: b, Delay: time.Second}}); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(ctx, msg("dlv_c"), 0); err != nil {
		t.Fatal(err)
	}
	if len(rec.entries) != 3 {
		t.Fatalf("%d entries sent, want 3", len(rec.entries))
	}
	for _, e := range rec.entries {
		var m queue.Message
		group, body, _ := strings.Cut(e, " ")
		if err := json.Unmarshal([]byte(body), &m); err != nil || group != m.AccountID {
			t.Fatalf("entry %q: group %q, want the message's account", e, group)
		}
	}
	got := 0
	for deadline := time.Now().Add(5 * time.Second); got < 3 && time.Now().Before(deadline); {
		out, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &env.Queues.Delivery, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		got += len(out.Messages)
	}
	if got != 3 {
		t.Fatalf("received %d of 3 grouped messages", got)
	}
}

// A message carries an event's body up to CarriedBodyMax, byte for byte
// through its encoding; it keeps it when put back; a dead letter never
// carries one.
func TestAMessageCarriesASmallBodyAndKeepsIt(t *testing.T) {
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: domain.NewID("evt"), EndpointID: "ep_1", AccountID: "acct_1", Gen: 1, EventType: "a.b"}
	// Spaces, a newline, non-ASCII and HTML's characters: the receiver gets
	// these bytes as they were posted, through the message's encoding.
	body := []byte("{ \"a\": 1,\n  \"b\": \"caf\u00e9 <&>\" }")
	m := queue.For(d).Carrying("a.b", body)
	got, err := queue.Decode(m.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if ev := got.Event(); ev == nil || !bytes.Equal(ev.Body, body) || ev.Type != "a.b" || ev.ID != d.EventID || ev.AccountID != "acct_1" {
		t.Fatalf("carried through the encoding: %+v, want the body %q byte for byte", ev, body)
	}
	if back := m.PutBack(lifecycle.Effect{Do: lifecycle.DoPutBack}); !bytes.Equal(back.Body, body) {
		t.Fatalf("put back without its body: %+v", back)
	}
	for _, b := range [][]byte{nil, []byte(`{"a":` + strings.Repeat("1", queue.CarriedBodyMax) + `}`)} {
		if m := queue.For(d).Carrying("a.b", b); m.Body != nil || m.Event() != nil {
			t.Fatalf("a body of %d bytes carried", len(b))
		}
	}
	if dl := queue.DeadLetterFor(d); dl.Body != nil {
		t.Fatalf("a dead letter carries %q", dl.Body)
	}
}

// Ingest's first message carries the delivery it wrote (First) through the
// encoding; a message sent again (a retry, a deferral) does not, since the
// delivery has moved on by then, and neither does one without the body.
func TestOnlyIngestsFirstMessageCarriesItsDelivery(t *testing.T) {
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: domain.NewID("evt"), EndpointID: "ep_1", AccountID: "acct_1", EventType: "a.b",
		Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: 1_000, DueAt: 1_000, CreatedAt: 1_000, UpdatedAt: 1_000, ExpiresAt: 9_000}
	m := queue.For(d).Carrying("a.b", []byte(`{}`))
	m.First = &queue.First{CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt}
	got, err := queue.Decode(m.Encode())
	if err != nil || got.Delivery() == nil || !reflect.DeepEqual(*got.Delivery(), d) {
		t.Fatalf("carried through the encoding: %+v (%v), want %+v", got.Delivery(), err, d)
	}
	slotted := m
	slotted.SlotAt = 1_500
	if due := slotted.Delivery().DueAt; due != 1_500 {
		t.Fatalf("with a slot, due at %d, want the slot", due)
	}
	if !m.ForStep(events.SQSMessage{}).Carried {
		t.Fatal("the step is not told the message carries its delivery (its load would read strongly)")
	}
	back := m.PutBack(lifecycle.Effect{Do: lifecycle.DoPutBack})
	if back.First != nil || back.Delivery() != nil || back.ForStep(events.SQSMessage{}).Carried {
		t.Fatalf("put back with its delivery: %+v", back.First)
	}
	bare := m
	bare.Body = nil
	if bare.Delivery() != nil || bare.ForStep(events.SQSMessage{}).Carried {
		t.Fatal("a message without its event's body carries its delivery")
	}
}

// A message's lead goes with it through the encoding when a put-back gives
// it one, and the step reads it; a put-back that gives none drops it.
func TestAPutBackCarriesItsLead(t *testing.T) {
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: domain.NewID("evt"), EndpointID: "ep_1", AccountID: "acct_1", Gen: 1}
	led := queue.For(d).PutBack(lifecycle.Effect{Do: lifecycle.DoPutBack, Lead: time.Second})
	got, err := queue.Decode(led.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if lead := got.ForStep(events.SQSMessage{}).Lead; lead != time.Second {
		t.Fatalf("lead %s through the encoding, want 1s", lead)
	}
	if lead := got.PutBack(lifecycle.Effect{Do: lifecycle.DoPutBack}).ForStep(events.SQSMessage{}).Lead; lead != 0 {
		t.Fatalf("lead %s after a put-back that gives none, want 0", lead)
	}
}
