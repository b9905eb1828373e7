package ingest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/catalog"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/store"
)

// MaxBatch is how many events one batch may carry.
const MaxBatch = 100

// batchWriters is how many events of a batch are written at once: each is
// its own transaction, and 100 one after the other would take most of the
// api's time.
const batchWriters = 8

// ErrBatchSize: a batch with no event or more than MaxBatch.
var ErrBatchSize = errors.New("a batch carries 1 to 100 events")

// Item is one event of a batch: its body and its own optional idempotency key.
type Item struct {
	Body           []byte
	IdempotencyKey string
	OrderingKey    string // "": none
}

// ItemResult is what became of one item: accepted (Err nil, Result set) or
// refused with the same errors as Ingest.
type ItemResult struct {
	Result
	Err error
}

// IngestBatch accepts each item on its own, as Ingest would: an invalid item
// is refused and changes nothing; every valid one is written in its own
// transaction (with its idempotency key) and its deliveries are queued only
// after that write. The account and its endpoints are read once, and one
// reservation books the rate-limit slots of every delivery of the batch, in
// order. The error is for the whole batch (nothing was written).
func (s *Service) IngestBatch(ctx context.Context, accountID string, items []Item) ([]ItemResult, error) {
	if len(items) == 0 || len(items) > MaxBatch {
		return nil, ErrBatchSize
	}
	out := make([]ItemResult, len(items))
	valid := make([]checked, len(items))
	anyValid := false
	for i, it := range items {
		valid[i], out[i].Err = check(it.Body, it.IdempotencyKey)
		if out[i].Err == nil && it.OrderingKey != "" && !printable(it.OrderingKey, domain.MaxOrderingKeySize) {
			out[i].Err = ErrBadOrderingKey
		}
		anyValid = anyValid || out[i].Err == nil
	}
	if !anyValid {
		return out, nil
	}
	s.answerReplays(ctx, accountID, items, out)
	acct, endpoints, err := s.Store.AccountWithEndpoints(ctx, accountID)
	if err != nil {
		return nil, err
	}
	budget := catalog.NewBudget(catalog.BatchCheckBudget) // the batch's schema checks together
	for i := range items {
		if out[i].Err == nil && !out[i].Replayed {
			out[i].Err = s.checkSchema(ctx, acct, valid[i], budget)
		}
	}
	now := s.Now()
	events := make([]store.NewEvent, len(items))
	total := 0
	for i := range items {
		if out[i].Err == nil && !out[i].Replayed {
			events[i] = fanOut(accountID, endpoints, valid[i], now)
			total += len(events[i].Deliveries)
		}
	}
	slots, ivl, err := s.reserve(ctx, acct, total, now) // and the request's gate (gate.go)
	if err != nil {
		return nil, err
	}
	for i, next := range events {
		if out[i].Err == nil && !out[i].Replayed {
			n := len(next.Deliveries)
			events[i].DueAt, slots = dueAt(slots[:n], now), slots[n:]
		}
	}
	// Numbered one at a time, in the batch's order: a key's events of the
	// batch keep their order. One that cannot be numbered is not written
	// (its slots are spent, as for a write that fails).
	for i, it := range items {
		if out[i].Err == nil && !out[i].Replayed && it.OrderingKey != "" {
			out[i].Err = s.sequence(ctx, &events[i], endpoints, it.OrderingKey)
		}
	}
	s.writeAll(ctx, events, out)
	s.enqueueStored(ctx, endpoints, events, out, ivl, now)
	return out, nil
}

// writeAll stores each valid event, batchWriters at a time. An idempotency
// key used again later in the batch is written after its first use (in
// rounds), so the repeat answers as a repeat of a single POST would: the
// first event, or 409 for another body.
func (s *Service) writeAll(ctx context.Context, events []store.NewEvent, out []ItemResult) {
	m := s.Metrics.Batch() // one EMF line for the request, not one per event
	defer m.Flush()
	round := make([]int, len(events))
	seen := map[string]int{}
	rounds := 1
	for i, ne := range events {
		if k := ne.Event.IdempotencyKey; out[i].Err == nil && !out[i].Replayed && k != "" {
			round[i] = seen[k]
			seen[k]++
			rounds = max(rounds, seen[k])
		}
	}
	for r := range rounds {
		sem := make(chan struct{}, batchWriters)
		var wg sync.WaitGroup
		for i := range events {
			if out[i].Err != nil || out[i].Replayed || round[i] != r {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				out[i] = s.write(ctx, events[i], m)
			}()
		}
		wg.Wait()
	}
}

// answerReplays looks up every keyed item's idempotency key before any rate
// slot is reserved, as Ingest does: a key already stored answers its first
// event (or 409 for another body) and reserves nothing. A key first used in
// this batch is not found here; writeAll orders its repeats.
func (s *Service) answerReplays(ctx context.Context, accountID string, items []Item, out []ItemResult) {
	sem := make(chan struct{}, batchWriters)
	var wg sync.WaitGroup
	for i, it := range items {
		if out[i].Err != nil || it.IdempotencyKey == "" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if res, stored, err := s.prior(ctx, accountID, it.IdempotencyKey, it.Body); stored {
				out[i] = ItemResult{Result: res, Err: err}
			}
		}()
	}
	wg.Wait()
}

func (s *Service) write(ctx context.Context, ne store.NewEvent, m *obs.Batch) ItemResult {
	firstID, err := s.Store.CreateEvent(ctx, ne)
	switch {
	case errors.Is(err, store.ErrDuplicate):
		res, err := s.replay(ctx, ne.Event.AccountID, firstID)
		return ItemResult{Result: res, Err: err}
	case err != nil:
		return ItemResult{Err: err}
	}
	// The API's request line says how many were accepted: each event's line
	// is for debugging.
	s.counted(ctx, ne, m, slog.LevelDebug)
	return ItemResult{Result: Result{Event: ne.Event, Deliveries: ne.Deliveries}}
}

// enqueueStored queues the deliveries of the events just written (not of
// replays, whose deliveries are already on their way), in one SendAll.
func (s *Service) enqueueStored(ctx context.Context, eps []domain.Endpoint, events []store.NewEvent, out []ItemResult, ivl time.Duration, now time.Time) {
	var deliveries []domain.Delivery
	var written []domain.Event
	var slots []time.Time
	for i, ev := range events {
		if out[i].Err != nil || out[i].Replayed {
			continue
		}
		deliveries, written = append(deliveries, ev.Deliveries...), append(written, ev.Event)
		for _, ms := range ev.DueAt {
			slot := time.UnixMilli(ms)
			if ivl == 0 {
				slot = time.Time{} // the limiter was not reached: no slot, the worker books one
			}
			slots = append(slots, slot)
		}
	}
	s.enqueue(ctx, eps, deliveries, slots, ivl, now, written...)
}
