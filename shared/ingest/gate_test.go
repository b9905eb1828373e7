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
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// gateStore is an account with the given endpoints, counting events written.
type gateStore struct {
	Store
	endpoints []domain.Endpoint
	created   int
}

func (s *gateStore) AccountWithEndpoints(_ context.Context, id string) (domain.Account, []domain.Endpoint, error) {
	return domain.Account{ID: id}, s.endpoints, nil
}

func (s *gateStore) CreateEvent(context.Context, store.NewEvent) (string, error) {
	s.created++
	return "", nil
}

// takingLimiter records the bookings and answers them with err.
type takingLimiter struct {
	takes []ratelimit.KeyTake
	slots []int
	err   error
}

func (l *takingLimiter) ReserveTaking(_ context.Context, _ string, n int, _ float64, _ time.Duration, key ratelimit.KeyTake) (ratelimit.Reservation, error) {
	l.takes, l.slots = append(l.takes, key), append(l.slots, n)
	return ratelimit.Reservation{First: time.Now(), Interval: 200 * time.Millisecond}, l.err
}

// The key's take rides on the account's booking (one write for both), and
// a refusal writes nothing; an event no endpoint subscribes to still takes
// the key's tokens (a booking of no slot).
func TestTheGateIsTakenInTheBookingAndItsRefusalWritesNothing(t *testing.T) {
	refused := errors.New("over the limit")
	take := ratelimit.KeyTake{ID: "key_1", N: 1, Limit: ratelimit.Limit{Rate: 10, Burst: 50}}
	for _, c := range []struct {
		limitErr  error
		endpoints []domain.Endpoint
		created   int
	}{
		{nil, []domain.Endpoint{{ID: "ep_1"}}, 1},
		{&ratelimit.Limited{RetryAfter: time.Second}, []domain.Endpoint{{ID: "ep_1"}}, 0},
		{nil, nil, 1},
		{&ratelimit.Limited{RetryAfter: time.Second}, nil, 0},
	} {
		st := &gateStore{endpoints: c.endpoints}
		lim := &takingLimiter{err: c.limitErr}
		s := &Service{Store: st, Queue: &recordingQueue{}, Limiter: lim, DefaultRate: 5, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
		ctx := WithGate(context.Background(), &Gate{Take: take, Answer: func(_ context.Context, err error) error {
			if err != nil {
				return refused
			}
			return nil
		}})
		_, err := s.Ingest(ctx, "acct_1", []byte(`{"event":"a.b"}`), "")
		if wantErr := c.limitErr != nil; (err != nil) != wantErr || (wantErr && !errors.Is(err, refused)) {
			t.Fatalf("limiter %v: Ingest returned %v", c.limitErr, err)
		}
		if st.created != c.created {
			t.Fatalf("limiter %v: %d events written, want %d", c.limitErr, st.created, c.created)
		}
		if len(lim.takes) != 1 || lim.takes[0] != take || lim.slots[0] != len(c.endpoints) {
			t.Fatalf("limiter %v: bookings %v of %v slots, want one of %d slots taking %v", c.limitErr, lim.takes, lim.slots, len(c.endpoints), take)
		}
	}
}
