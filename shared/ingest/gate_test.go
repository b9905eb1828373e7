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
	"github.com/gifq/webhooks/shared/store"
)

// gateStore's account read waits until the gate has started: Ingest only
// gets past it if the two run at the same time.
type gateStore struct {
	Store
	gateStarted chan struct{}
	created     int
}

func (s *gateStore) AccountWithEndpoints(ctx context.Context, id string) (domain.Account, []domain.Endpoint, error) {
	select {
	case <-s.gateStarted:
	case <-time.After(10 * time.Second): // a guard against a hang, not a measurement
		return domain.Account{}, nil, errors.New("the gate did not run alongside the account read")
	}
	return domain.Account{ID: id}, nil, nil
}

func (s *gateStore) CreateEvent(context.Context, store.NewEvent) (string, error) {
	s.created++
	return "", nil
}

func TestGateRunsAlongsideTheAccountReadAndItsRefusalWritesNothing(t *testing.T) {
	refused := errors.New("over the limit")
	for _, gateErr := range []error{nil, refused} {
		st := &gateStore{gateStarted: make(chan struct{})}
		s := &Service{Store: st, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Metrics: obs.NewMetrics(io.Discard, false, "t", "t"), Now: time.Now}
		ctx := WithGate(context.Background(), func(context.Context) error {
			close(st.gateStarted)
			return gateErr
		})
		_, err := s.Ingest(ctx, "acct_1", []byte(`{"event":"a.b"}`), "")
		if !errors.Is(err, gateErr) {
			t.Fatalf("gate %v: Ingest returned %v", gateErr, err)
		}
		if want := map[error]int{nil: 1, refused: 0}[gateErr]; st.created != want {
			t.Fatalf("gate %v: %d events written, want %d", gateErr, st.created, want)
		}
	}
}
