package ingest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// bookingLimiter books n slots ivl apart from first.
type bookingLimiter struct {
	first time.Time
	ivl   time.Duration
}

func (l bookingLimiter) ReserveAhead(context.Context, string, int, float64, time.Duration) (ratelimit.Reservation, error) {
	return ratelimit.Reservation{First: l.first, Interval: l.ivl}, nil
}

// With a paced lane deployed, a delivery delayed to its slot's second
// (pace.Delay) starts on it, so that a backlog waiting for its seconds never
// holds the fast lane; the ones whose second is under way keep the fast
// lane. Without one, all take the fast lane.
func TestDeliveriesBookedAheadStartOnThePacedLane(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	for _, paced := range []bool{true, false} {
		q := &recordingQueue{}
		st := &keyedStore{keys: map[string]string{}, events: map[string]domain.Event{}}
		s := &Service{Store: st, Queue: q, Limiter: bookingLimiter{first: now, ivl: 200 * time.Millisecond}, DefaultRate: 5,
			Lanes: true, Paced: paced, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
			Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: func() time.Time { return now }}
		if _, err := s.Ingest(context.Background(), "acct_1", []byte(`{"event":"payout.fulfilled"}`), ""); err != nil {
			t.Fatal(err)
		}
		if len(q.sent) != domain.MaxEndpoints {
			t.Fatalf("sent %d messages, want %d", len(q.sent), domain.MaxEndpoints)
		}
		onPaced := 0
		for _, o := range q.sent {
			ahead := time.UnixMilli(o.Message.SlotAt).Sub(now)
			want := ""
			if paced && pace.Delay(time.UnixMilli(o.Message.SlotAt), now) > 0 {
				want = queue.LanePaced
			}
			if o.Message.Lane != want {
				t.Fatalf("paced lane deployed %v: a slot %s ahead went on lane %q, want %q", paced, ahead, o.Message.Lane, want)
			}
			if want == queue.LanePaced {
				onPaced++
			}
		}
		if paced && onPaced != domain.MaxEndpoints-5 { // all but the 5 slots of now's second
			t.Fatalf("%d messages on the paced lane, want %d", onPaced, domain.MaxEndpoints-5)
		}
	}
}

func (l bookingLimiter) ReserveTaking(ctx context.Context, account string, n int, perSecond float64, lead time.Duration, _ ratelimit.KeyTake) (ratelimit.Reservation, error) {
	return l.ReserveAhead(ctx, account, n, perSecond, lead)
}
