package ingest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// keyedStore remembers idempotency keys as the table does (one account,
// sixteen subscribed endpoints).
type keyedStore struct {
	mu         sync.Mutex        // a batch writes its events concurrently
	keys       map[string]string // key -> first event id
	events     map[string]domain.Event
	deliveries map[string]domain.Delivery // as written, due_at included
}

func (s *keyedStore) AccountWithEndpoints(_ context.Context, id string) (domain.Account, []domain.Endpoint, error) {
	eps := make([]domain.Endpoint, domain.MaxEndpoints)
	for i := range eps {
		eps[i] = domain.Endpoint{ID: domain.NewID("ep"), AccountID: id}
	}
	return domain.Account{ID: id}, eps, nil
}

// GetEventType: the account has no catalog (its EventTypeCount is 0), so
// ingest never asks.
func (s *keyedStore) GetEventType(context.Context, string, string) (domain.EventType, error) {
	return domain.EventType{}, store.ErrNotFound
}

func (s *keyedStore) CreateEvent(_ context.Context, ne store.NewEvent) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if first, ok := s.keys[ne.Event.IdempotencyKey]; ok {
		return first, store.ErrDuplicate
	}
	s.keys[ne.Event.IdempotencyKey], s.events[ne.Event.ID] = ne.Event.ID, ne.Event
	if s.deliveries == nil {
		s.deliveries = map[string]domain.Delivery{}
	}
	for i, d := range ne.Deliveries {
		d.DueAt = ne.DueAt[i]
		s.deliveries[d.ID] = d
	}
	return ne.Event.ID, nil
}

func (s *keyedStore) PriorEvent(_ context.Context, _, key string, _ []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if first, ok := s.keys[key]; ok {
		return first, store.ErrDuplicate
	}
	return "", store.ErrNotFound
}

func (s *keyedStore) GetEvent(_ context.Context, _, id string) (domain.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events[id], nil
}
func (s *keyedStore) GetDeliveries(context.Context, []string) ([]domain.Delivery, error) {
	return nil, nil
}

type countingLimiter struct{ slots int }

func (l *countingLimiter) ReserveAhead(_ context.Context, _ string, n int, _ float64, _ time.Duration) (ratelimit.Reservation, error) {
	l.slots += n
	return ratelimit.Reservation{First: time.Now(), Interval: time.Millisecond}, nil
}

type discardQueue struct{}

func (discardQueue) SendAll(context.Context, []queue.Outgoing) ([]int, error) { return nil, nil }

// An idempotent replay of POST /v1/events reserved the account's
// rate slots again (one per subscribed endpoint, up to 16), delaying every
// later event for nothing.
func TestIdempotentReplayReservesNoRateSlots(t *testing.T) {
	lim := &countingLimiter{}
	s := &Service{Store: &keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}, Queue: discardQueue{}, Limiter: lim,
		DefaultRate: 5, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
	body := []byte(`{"event":"payout.fulfilled"}`)
	first, err := s.Ingest(context.Background(), "acct_1", body, "key-1")
	if err != nil || first.Replayed {
		t.Fatalf("first: %+v %v", first, err)
	}
	if lim.slots != domain.MaxEndpoints {
		t.Fatalf("first request reserved %d slots, want %d", lim.slots, domain.MaxEndpoints)
	}
	again, err := s.Ingest(context.Background(), "acct_1", body, "key-1")
	if err != nil || !again.Replayed || again.Event.ID != first.Event.ID {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if lim.slots != domain.MaxEndpoints {
		t.Fatalf("the replay reserved %d more slots", lim.slots-domain.MaxEndpoints)
	}
}

// The same through a batch: an item whose key is already stored answers its
// first event and reserves nothing; a new key in the same batch does.
func TestBatchReplayReservesNoRateSlots(t *testing.T) {
	lim := &countingLimiter{}
	s := &Service{Store: &keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}, Queue: discardQueue{}, Limiter: lim,
		DefaultRate: 5, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
	body := []byte(`{"event":"payout.fulfilled"}`)
	first, err := s.Ingest(context.Background(), "acct_1", body, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.IngestBatch(context.Background(), "acct_1", []Item{{Body: body, IdempotencyKey: "key-1"}, {Body: body, IdempotencyKey: "key-2"}})
	if err != nil || out[0].Err != nil || out[1].Err != nil {
		t.Fatalf("batch: %+v %v", out, err)
	}
	if !out[0].Replayed || out[0].Event.ID != first.Event.ID || out[1].Replayed {
		t.Fatalf("batch answers %+v", out)
	}
	if lim.slots != 2*domain.MaxEndpoints {
		t.Fatalf("reserved %d slots in all, want %d: the replayed item reserved again", lim.slots, 2*domain.MaxEndpoints)
	}
}

func (l *countingLimiter) ReserveTaking(ctx context.Context, account string, n int, perSecond float64, lead time.Duration, _ ratelimit.KeyTake) (ratelimit.Reservation, error) {
	return l.ReserveAhead(ctx, account, n, perSecond, lead)
}

func (s *keyedStore) Sequence(context.Context, string, string, map[string]string, int64) (store.Sequenced, error) {
	return store.Sequenced{}, errors.New("not used")
}
