package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// hangUpStore is a producer that hangs up as soon as its event is stored:
// its request's context ends right after the write.
type hangUpStore struct {
	keyedStore
	hangUp context.CancelFunc
}

func (s *hangUpStore) CreateEvent(ctx context.Context, ne store.NewEvent) (string, error) {
	id, err := s.keyedStore.CreateEvent(ctx, ne)
	s.hangUp()
	return id, err
}

// sendingQueue notes whether the context it sends with has ended.
type sendingQueue struct{ ended []error }

func (q *sendingQueue) SendAll(ctx context.Context, msgs []queue.Outgoing) ([]int, error) {
	q.ended = append(q.ended, ctx.Err())
	return nil, ctx.Err() // as SQS's client answers an ended context
}

// An event stored is queued at once even if its producer hangs up right
// after the write: otherwise its deliveries would wait for the sweeper.
func TestAStoredEventIsQueuedThoughItsProducerHungUp(t *testing.T) {
	ctx, hangUp := context.WithCancel(context.Background())
	q := &sendingQueue{}
	s := &Service{Store: &hangUpStore{keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}, hangUp}, Queue: q,
		Limiter: &countingLimiter{}, DefaultRate: 5, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
	if _, err := s.Ingest(ctx, "acct_1", []byte(`{"event":"payout.fulfilled"}`), ""); err != nil {
		t.Fatal(err)
	}
	if len(q.ended) != 1 || q.ended[0] != nil {
		t.Fatalf("sends %v: want one, with a context the producer's hang-up did not end", q.ended)
	}
}

// failingLimiter is a rate limiter that cannot be reached.
type failingLimiter struct{}

func (failingLimiter) ReserveAhead(context.Context, string, int, float64, time.Duration) (ratelimit.Reservation, error) {
	return ratelimit.Reservation{}, errors.New("limiter unavailable")
}

func (failingLimiter) ReserveTaking(context.Context, string, int, float64, time.Duration, ratelimit.KeyTake) (ratelimit.Reservation, error) {
	return ratelimit.Reservation{}, errors.New("limiter unavailable")
}

// recordingQueue keeps what it is asked to send.
type recordingQueue struct{ sent []queue.Outgoing }

func (q *recordingQueue) SendAll(_ context.Context, msgs []queue.Outgoing) ([]int, error) {
	q.sent = append(q.sent, msgs...)
	return nil, nil
}

// When the account's limiter could not be reached, ingest
// stamped every message with a slot of "now", so a whole burst (16
// deliveries here) left at once. The messages must carry no slot, so that
// the worker books one before each attempt.
func TestALimiterThatFailsAtIngestBooksNoSlotOfNow(t *testing.T) {
	q := &recordingQueue{}
	st := &keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}
	s := &Service{Store: st, Queue: q, Limiter: failingLimiter{}, DefaultRate: 5,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
	res, err := s.Ingest(context.Background(), "acct_1", []byte(`{"event":"payout.fulfilled"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(q.sent) != domain.MaxEndpoints || len(res.Deliveries) != domain.MaxEndpoints {
		t.Fatalf("sent %d messages for %d deliveries, want %d", len(q.sent), len(res.Deliveries), domain.MaxEndpoints)
	}
	for _, o := range q.sent {
		if o.Message.SlotAt != 0 || o.Delay != 0 {
			t.Fatalf("message %+v delayed %s: want no slot (the worker books it)", o.Message, o.Delay)
		}
	}
}

// The same through batch ingest, whose messages are built from the stored
// due times.
func TestALimiterThatFailsAtBatchIngestBooksNoSlotOfNow(t *testing.T) {
	q := &recordingQueue{}
	st := &keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}
	s := &Service{Store: st, Queue: q, Limiter: failingLimiter{}, DefaultRate: 5,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
	items := []Item{{Body: []byte(`{"event":"a.b"}`), IdempotencyKey: "k1"}, {Body: []byte(`{"event":"a.c"}`), IdempotencyKey: "k2"}}
	if _, err := s.IngestBatch(context.Background(), "acct_1", items); err != nil {
		t.Fatal(err)
	}
	if len(q.sent) != 2*domain.MaxEndpoints {
		t.Fatalf("sent %d messages, want %d", len(q.sent), 2*domain.MaxEndpoints)
	}
	for _, o := range q.sent {
		if o.Message.SlotAt != 0 || o.Delay != 0 {
			t.Fatalf("message %+v delayed %s: want no slot (the worker books it)", o.Message, o.Delay)
		}
	}
}
