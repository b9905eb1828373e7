package store_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

var errDied = errors.New("the api process died here")

// dyingBeforeTheEvent is a client on the emulator whose process dies just
// before the event's put once armed: the writes before it are made, the
// event's never.
func dyingBeforeTheEvent(env *testenv.Env, armed *atomic.Bool) *dynamodb.Client {
	return dynamodb.NewFromConfig(emulator.Config(), func(o *dynamodb.Options) {
		o.BaseEndpoint = &env.DynamoURL
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("die", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if put, ok := in.Parameters.(*dynamodb.PutItemInput); ok && armed.Load() && strings.HasPrefix(stringOf(put.Item["pk"]), "EVTS#") {
					return middleware.InitializeOutput{}, middleware.Metadata{}, errDied
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
}

// With an Idempotency-Key, the key's claim and the event are two plain
// writes, no transaction. A request that dies between them: its retry
// (same key, same body) is told to come back while the first could still
// be writing (ErrKeyInProgress, nothing written), and past KeyTakeoverAfter
// takes the key over and writes its event: one event for the key, none
// lost, and the first request's delivery never attempted (an orphan). A
// retry after an event committed gets that event (ErrDuplicate).
func TestIdempotentEventSurvivesACrashBetweenItsTwoWrites(t *testing.T) {
	env := testenv.New(t)
	var armed atomic.Bool
	clock := time.Now()
	now := func() time.Time { return clock }
	dying := store.New(dyingBeforeTheEvent(env, &armed), env.Table).WithClock(now)
	s := store.New(env.DB, env.Table).WithClock(now)
	ep := endpoint(t, s, account(t, s).ID)
	newEvent := func() store.NewEvent {
		ev := domain.Event{ID: domain.NewID("evt"), AccountID: ep.AccountID, Type: "payout.fulfilled", Body: []byte(`{"event":"payout.fulfilled"}`),
			IdempotencyKey: "po-7", ReceivedAt: clock.UnixMilli(), ExpiresAt: clock.Add(domain.DefaultRetention).Unix()}
		d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: ep.AccountID, EventType: ev.Type,
			Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: clock.UnixMilli(), CreatedAt: clock.UnixMilli(), ExpiresAt: ev.ExpiresAt}
		ev.DeliveryIDs = []string{d.ID}
		return store.NewEvent{Event: ev, Deliveries: []domain.Delivery{d}, DueAt: []int64{clock.UnixMilli()}}
	}
	armed.Store(true)
	first := newEvent()
	if _, err := dying.CreateEvent(ctx, first); !errors.Is(err, errDied) {
		t.Fatalf("the first request: %v, want it to die before its event", err)
	}
	retry := newEvent()
	if id, err := s.CreateEvent(ctx, retry); !errors.Is(err, store.ErrKeyInProgress) || id != first.Event.ID {
		t.Fatalf("a retry while the first could still write: %s, %v; want %s, ErrKeyInProgress", id, err, first.Event.ID)
	}
	if _, err := s.GetDelivery(ctx, retry.Deliveries[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused retry left its delivery: %v", err)
	}
	if _, err := s.PriorEvent(ctx, ep.AccountID, "po-7", retry.Event.Body); !errors.Is(err, store.ErrKeyInProgress) {
		t.Fatalf("the key's look-up while the first could still write: %v", err)
	}
	clock = clock.Add(store.KeyTakeoverAfter - time.Second)
	if _, err := s.PriorEvent(ctx, ep.AccountID, "po-7", retry.Event.Body); !errors.Is(err, store.ErrKeyInProgress) {
		t.Fatalf("the key's look-up just before KeyTakeoverAfter: %v", err)
	}
	clock = clock.Add(2 * time.Second)
	if _, err := s.PriorEvent(ctx, ep.AccountID, "po-7", retry.Event.Body); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the key's look-up past KeyTakeoverAfter: %v, want free", err)
	}
	later := newEvent()
	if id, err := s.CreateEvent(ctx, later); err != nil || id != later.Event.ID {
		t.Fatalf("a retry past KeyTakeoverAfter: %s, %v; want its own event written", id, err)
	}
	again := newEvent()
	if id, err := s.CreateEvent(ctx, again); !errors.Is(err, store.ErrDuplicate) || id != later.Event.ID {
		t.Fatalf("a retry after the event committed: %s, %v; want %s, ErrDuplicate", id, err, later.Event.ID)
	}
	if _, err := s.GetEvent(ctx, ep.AccountID, first.Event.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the dead request's event: %v, want never written", err)
	}
	// Past OrphanAfter its delivery is an orphan: the attempt's load finds
	// no delivery to attempt, and deletes it.
	clock = clock.Add(store.OrphanAfter)
	snap, err := s.LoadForAttempt(ctx, store.Ref{DeliveryID: first.Deliveries[0].ID, AccountID: ep.AccountID, EndpointID: ep.ID, EventID: first.Event.ID})
	if err != nil || snap.Delivery != nil {
		t.Fatalf("the dead request's delivery loaded as %+v, %v; want none", snap.Delivery, err)
	}
	if _, err := s.GetDelivery(ctx, first.Deliveries[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the orphan was not deleted: %v", err)
	}
}

func stringOf(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// An event with an Idempotency-Key costs its claim's write unit beside the
// event's, and no transaction (which bills each item twice: 4 units).
func TestAnIdempotentEventCostsTwoWriteUnits(t *testing.T) {
	s, calls := countedStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	now := time.Now()
	ev := domain.Event{ID: domain.NewID("evt"), AccountID: ep.AccountID, Type: "payout.fulfilled", Body: []byte(`{"event":"payout.fulfilled"}`),
		IdempotencyKey: "po-8", ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	calls.Reset()
	if _, err := s.CreateEvent(ctx, store.NewEvent{Event: ev}); err != nil {
		t.Fatal(err)
	}
	if w := calls.WriteUnits(); w != 2 || calls.Count("DynamoDB.TransactWriteItems") != 0 {
		t.Fatalf("an idempotent event: %g write units (%s), want 2 and no transaction", w, calls)
	}
}
