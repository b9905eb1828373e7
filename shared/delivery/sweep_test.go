package delivery

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"maps"
	"sort"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
	"github.com/gifq/webhooks/shared/sweep"
)

// DueForSweep is store.DueForSweep over the map: every delivery due in
// [from, before), oldest first, all in shard 0.
func (m *memStore) DueForSweep(_ context.Context, shard int, from, before int64, _ int32, _ store.Cursor) (store.SweepPage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var page store.SweepPage
	if shard != 0 {
		return page, nil
	}
	var due []domain.Delivery
	for _, d := range m.deliveries {
		if d.DueAt != 0 && d.DueAt >= from && d.DueAt < before {
			due = append(due, d)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].DueAt < due[j].DueAt })
	for _, d := range due {
		page.IDs, page.DueAt = append(page.IDs, d.ID), append(page.DueAt, d.DueAt)
	}
	return page, nil
}

func (m *memStore) GetDeliveriesEventually(_ context.Context, ids []string) ([]domain.Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.Delivery
	for _, id := range ids {
		if d, ok := m.deliveries[id]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}

func (m *memStore) SweepMarks(context.Context) (map[int]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.marks), nil
}

func (m *memStore) SetSweepMarks(_ context.Context, marks map[int]int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.marks == nil {
		m.marks = map[int]int64{}
	}
	maps.Copy(m.marks, marks)
	return nil
}

// Requeue applies store.Requeue's condition and write.
func (m *memStore) Requeue(_ context.Context, id string, before, at int64, maxAttempts int) (domain.Delivery, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.deliveries[id]
	if !ok {
		return d, store.ErrNotFound
	}
	now := m.now()
	if d.Status != domain.StatusPending || d.DueAt >= before || d.RequeuedAt >= before || d.Attempts >= maxAttempts ||
		lifecycle.NearExpiry(d.ExpiresAt, now) || d.LeaseUntil >= domain.Millis(now) {
		return d, store.ErrConflict
	}
	d.Gen++
	d.RequeuedAt, d.OverdueFrom, d.DueAt = at, cmp.Or(d.OverdueFrom, d.DueAt), at
	m.deliveries[id] = d
	return d, nil
}

// Revisit applies store.Revisit's condition and write.
func (m *memStore) Revisit(_ context.Context, id string, at int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.deliveries[id]
	if ok && d.DueAt != 0 && d.DueAt < at && (d.Status == domain.StatusPending || d.DLQPending) {
		d.OverdueFrom, d.DueAt = cmp.Or(d.OverdueFrom, d.DueAt), at
		m.deliveries[id] = d
	}
	return nil
}

// A lost send on a busy queue, with the real sweeper and the real worker on
// in-memory ports and a simulated clock: the sweeper re-queues the delivery
// at its first sweep, the worker drops the original message when it turns
// up late (a stale generation: no attempt) and delivers the new one; eight
// sweeps over two hours make one POST in all.
func TestALostSendIsDeliveredOnABusyQueueByTheSweeper(t *testing.T) {
	r := newRig(t, 200)
	d := r.st.deliveries[r.d.ID]
	d.DueAt = d.CreatedAt // written as ingest writes it; its send lost
	r.st.deliveries[d.ID] = d
	original := queue.For(d)
	sw := &sweep.Sweeper{Store: r.st, Queue: r.q, MaxAttempts: 8, Grace: 5 * time.Minute,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: r.w.Now}
	requeued := 0
	for i := 1; i <= 8; i++ {
		r.clock += 15 * time.Minute
		sent := len(r.q.sent)
		res, err := sw.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		requeued += res.Requeued
		if len(r.q.sent) == sent {
			continue
		}
		m := r.q.sent[len(r.q.sent)-1]
		handleOne(t, r.w, original) // the lost send, arriving after all
		if len(r.recv.got) != 0 {
			t.Fatalf("the stale message made an attempt")
		}
		r.deliver(t, m)
	}
	got := r.st.deliveries[d.ID]
	if requeued != 1 || got.Status != domain.StatusDelivered || got.Attempts != 1 || len(r.recv.got) != 1 {
		t.Fatalf("after 8 sweeps: re-queued %d, %s after %d attempts, %d POSTs; want re-queued once, delivered with 1 POST",
			requeued, got.Status, got.Attempts, len(r.recv.got))
	}
}
