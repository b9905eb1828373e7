package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var ctx = context.Background()

func newStore(t *testing.T) *store.Store {
	env := testenv.New(t)
	return store.New(env.DB, env.Table)
}

// countedStore is a store whose DynamoDB calls and units calls counts.
func countedStore(t *testing.T) (*store.Store, *testenv.Calls) {
	env := testenv.New(t)
	calls := testenv.NewCalls()
	db, _ := env.CountedClients(calls)
	return store.New(db, env.Table), calls
}

func account(t *testing.T, s *store.Store) domain.Account {
	t.Helper()
	a, err := s.CreateAccount(ctx, "acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func endpoint(t *testing.T, s *store.Store, acct string) domain.Endpoint {
	t.Helper()
	ep := domain.Endpoint{ID: domain.NewID("ep"), AccountID: acct, URL: "https://hooks.example.com/x",
		Secrets: []domain.Secret{{Value: "whsec_x", CreatedAt: 1}}, CreatedAt: 1, UpdatedAt: 1}
	if err := s.CreateEndpoint(ctx, ep); err != nil {
		t.Fatal(err)
	}
	return ep
}

func event(t *testing.T, s *store.Store, ep domain.Endpoint, idem string) (domain.Event, domain.Delivery, error) {
	t.Helper()
	now := time.Now()
	ev := domain.Event{ID: domain.NewID("evt"), AccountID: ep.AccountID, Type: "payout.fulfilled",
		Body: []byte(`{"event":"payout.fulfilled"}`), IdempotencyKey: idem, ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: ep.AccountID, EventType: ev.Type,
		Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: now.UnixMilli(), CreatedAt: now.UnixMilli(), ExpiresAt: ev.ExpiresAt}
	ev.DeliveryIDs = []string{d.ID}
	_, err := s.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: []domain.Delivery{d}, DueAt: []int64{now.UnixMilli()}})
	return ev, d, err
}

func TestAPIKeysAreHashedAndRevocable(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	k, secret, err := s.CreateAPIKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Authenticate(ctx, secret)
	if err != nil || got.AccountID != a.ID {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	if _, err := s.Authenticate(ctx, secret+"x"); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("wrong key: %v", err)
	}
	if _, _, err := s.CreateAPIKey(ctx, "acct_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("key for a missing account: %v", err)
	}
	if err := s.RevokeAPIKey(ctx, a.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, secret); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("revoked key still works: %v", err)
	}
}

func TestSeventeenthEndpointIsRefusedEvenConcurrently(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.CreateEndpoint(ctx, domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://x.example.com"})
		}()
	}
	wg.Wait()
	close(errs)
	ok, limited := 0, 0
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, store.ErrLimit):
			limited++
		default:
			// a transaction conflict between concurrent writers is also a refusal
			t.Logf("refused: %v", err)
		}
	}
	eps, err := s.ListEndpoints(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	acct, _ := s.GetAccount(ctx, a.ID)
	if len(eps) > domain.MaxEndpoints || len(eps) != ok || acct.EndpointCount != len(eps) {
		t.Fatalf("%d endpoints stored, %d creations succeeded, count %d", len(eps), ok, acct.EndpointCount)
	}
	for len(eps) < domain.MaxEndpoints {
		endpoint(t, s, a.ID)
		eps, _ = s.ListEndpoints(ctx, a.ID)
	}
	err = s.CreateEndpoint(ctx, domain.Endpoint{ID: domain.NewID("ep"), AccountID: a.ID, URL: "https://x.example.com"})
	if !errors.Is(err, store.ErrLimit) {
		t.Fatalf("17th endpoint: %v", err)
	}
}

func TestIdempotencyKeyReturnsFirstEvent(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	first, _, err := event(t, s, ep, "order-42")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	repeat := domain.Event{ID: domain.NewID("evt"), AccountID: ep.AccountID, Type: "payout.fulfilled", Body: first.Body,
		IdempotencyKey: "order-42", ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	id, err := s.CreateEvent(ctx, store.NewEvent{Event: repeat})
	if !errors.Is(err, store.ErrDuplicate) || id != first.ID {
		t.Fatalf("repeat = %s, %v; want %s, ErrDuplicate", id, err, first.ID)
	}
	if _, err := s.GetEvent(ctx, repeat.AccountID, repeat.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the repeat was written: %v", err)
	}
	// A repeat that carries deliveries (they are written before the event,
	// which the key's claim refuses) leaves none of them behind.
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: repeat.ID, EndpointID: ep.ID, AccountID: ep.AccountID, EventType: repeat.Type,
		Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: now.UnixMilli(), CreatedAt: now.UnixMilli(), ExpiresAt: repeat.ExpiresAt}
	repeat.DeliveryIDs = []string{d.ID}
	if id, err := s.CreateEvent(ctx, store.NewEvent{Event: repeat, Deliveries: []domain.Delivery{d}, DueAt: []int64{now.UnixMilli()}}); !errors.Is(err, store.ErrDuplicate) || id != first.ID {
		t.Fatalf("repeat with a delivery = %s, %v", id, err)
	}
	if _, err := s.GetDelivery(ctx, d.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused repeat's delivery was left behind: %v", err)
	}
	repeat.Body = []byte(`{"event":"other"}`)
	if _, err := s.CreateEvent(ctx, store.NewEvent{Event: repeat}); !errors.Is(err, store.ErrIdempotencyMismatch) {
		t.Fatalf("same key, other body: %v", err)
	}
}

// Workers race for the same attempt: exactly one wins.
func TestClaimIsExclusive(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	const workers = 8
	var wins, losses int
	winner := ""
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			c := store.Claim{ID: fmt.Sprint("c", i), LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
			_, err := s.ClaimAttempt(ctx, d, c)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
				winner = c.ID
			case errors.Is(err, store.ErrConflict):
				losses++
			default:
				t.Errorf("claim: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 || losses != workers-1 {
		t.Fatalf("%d claims won, %d lost", wins, losses)
	}
	got, _ := s.GetDelivery(ctx, d.ID)
	if got.Attempts != 1 || got.Claim != winner {
		t.Fatalf("after the claim: %+v", got)
	}
}

// The in-flight slots live on their own item, SLOT#<endpoint>, outside the
// account's item collection (the hottest partition at scale): taking one
// writes nothing under ACCT#, and LoadForAttempt shows the leases on the
// endpoint as the worker's freeSlot reads them.
func TestSlotLeasesLiveOutsideTheAccountPartition(t *testing.T) {
	env := testenv.New(t)
	s := store.New(env.DB, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	before := accountItems(t, env)
	c := store.SlotTake{Group: "c1", Slots: []string{"3"}, LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), Route: ep.Route}
	if _, err := s.TakeSlots(ctx, ep.ID, c); err != nil {
		t.Fatal(err)
	}
	if after := accountItems(t, env); !reflect.DeepEqual(before, after) {
		t.Fatalf("taking a slot changed the account's partition:\n%v\n%v", before, after)
	}
	snap, err := s.LoadForAttempt(ctx, store.Ref{DeliveryID: d.ID, AccountID: d.AccountID, EndpointID: d.EndpointID, EventID: d.EventID})
	if err != nil || snap.Endpoint == nil {
		t.Fatalf("load: %+v %v", snap, err)
	}
	if l := snap.Endpoint.Leases["3"]; len(snap.Endpoint.Leases) != 1 || l.Claim != "c1" || l.Until != c.LeaseUntil {
		t.Fatalf("leases as the worker sees them: %+v", snap.Endpoint.Leases)
	}
	out, err := env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &env.Table, ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "SLOT#" + ep.ID}, "sk": &types.AttributeValueMemberS{Value: "SLOT"}}})
	if err != nil || out.Item == nil {
		t.Fatalf("no slot item SLOT#%s: %v", ep.ID, err)
	}
	if _, ok := out.Item["ttl"]; !ok {
		t.Fatal("the slot item has no TTL: a deleted endpoint's would stay forever")
	}
}

// accountItems is the account's partition (account, endpoints, key refs) as stored.
func accountItems(t *testing.T, env *testenv.Env) []map[string]types.AttributeValue {
	t.Helper()
	out, err := env.DB.Scan(ctx, &dynamodb.ScanInput{TableName: &env.Table, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var items []map[string]types.AttributeValue
	for _, it := range out.Items {
		if pk := it["pk"].(*types.AttributeValueMemberS).Value; strings.HasPrefix(pk, "ACCT#") {
			items = append(items, it)
		}
	}
	sort.Slice(items, func(i, j int) bool {
		return items[i]["sk"].(*types.AttributeValueMemberS).Value < items[j]["sk"].(*types.AttributeValueMemberS).Value
	})
	return items
}

// claimedOne is a new endpoint's first delivery, claimed: the endpoint,
// the delivery as made, the claim, and as claimed.
func claimedOne(t *testing.T, s *store.Store) (domain.Endpoint, domain.Delivery, store.Claim, domain.Delivery) {
	t.Helper()
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	c := store.Claim{ID: "c1", LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
	claimed, err := s.ClaimAttempt(ctx, d, c)
	if err != nil {
		t.Fatal(err)
	}
	return ep, d, c, claimed
}

func TestRecordMovesTheDeliveryOn(t *testing.T) {
	s := newStore(t)
	ep, d, c, claimed := claimedOne(t, s)
	epNow, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	next := time.Now().Add(time.Second).UnixMilli()
	a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 500}
	if err := s.RecordAttempt(ctx, claimed, &epNow, c, a, store.Outcome{Status: domain.StatusPending, NextAttemptAt: next}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetDelivery(ctx, d.ID)
	if got.Status != domain.StatusPending || got.Attempts != 1 || got.Claim != "" || got.NextAttemptAt != next || got.LastStatus != 500 {
		t.Fatalf("after a 500: %+v", got)
	}
	if epNow, _ = s.GetEndpoint(ctx, ep.AccountID, ep.ID); epNow.FailingSince == 0 {
		t.Fatalf("endpoint after a failure: failing since %d", epNow.FailingSince)
	}
	// Recording again with the old claim is refused, but the attempt is still logged.
	a2 := a
	a2.ID = domain.NewID("att")
	if err := s.RecordAttempt(ctx, claimed, &epNow, c, a2, store.Outcome{Status: domain.StatusDelivered, Healthy: true}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("record without the claim: %v", err)
	}
	if got2, _ := s.GetDelivery(ctx, d.ID); got2.Status != domain.StatusPending {
		t.Fatalf("a lost claim changed the delivery: %+v", got2)
	}
	if _, attempts, _ := s.DeliveryWithAttempts(ctx, d.ID); len(attempts) != 2 {
		t.Fatalf("attempt log: %+v", attempts)
	}
}

// failingDB passes calls to the emulator, except that it fails the next n
// UpdateItem calls on a delivery item without sending them: a worker that
// died (or timed out) between the attempt's log entry and the delivery's
// outcome write.
type failingDB struct {
	store.DynamoDB
	mu          sync.Mutex
	n           int
	eventPuts   int // the next n PutItem calls of an event fail the same way: an ingest that died between its writes
	slotUpdates int // the next n UpdateItem calls of an endpoint's slot item are refused (a throttle)
}

func (f *failingDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.mu.Lock()
	fail := f.eventPuts > 0 && strings.HasPrefix(in.Item["pk"].(*types.AttributeValueMemberS).Value, "EVTS#")
	if fail {
		f.eventPuts--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("injected: the process died before this write")
	}
	return f.DynamoDB.PutItem(ctx, in, o...)
}

func (f *failingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.mu.Lock()
	pk := in.Key["pk"].(*types.AttributeValueMemberS).Value
	fail := f.n > 0 && strings.HasPrefix(pk, "DLV#")
	if fail {
		f.n--
	}
	if f.slotUpdates > 0 && strings.HasPrefix(pk, "SLOT#") {
		f.slotUpdates--
		fail = true
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("injected: the process died before this write")
	}
	return f.DynamoDB.UpdateItem(ctx, in, o...)
}

// The record is plain writes: an attempt that fits on the delivery's item is
// logged by the outcome's write itself; a bigger one (a long response kept)
// has its own entry, written first. A crash before the outcome's write
// leaves the claim to expire. Writing it again repeats nothing; the next
// claim logs the attempt as interrupted under the id the receiver saw, or,
// when its own entry was written, neither fails on it nor duplicates it, and
// the claim goes ahead.
func TestCrashBeforeTheOutcomeWriteLosesAndDuplicatesNothing(t *testing.T) {
	for _, big := range []bool{false, true} {
		for _, retried := range []bool{true, false} {
			t.Run(fmt.Sprint("big=", big, ",retried=", retried), func(t *testing.T) {
				env := testenv.New(t)
				db := &failingDB{DynamoDB: env.DB}
				s := store.New(db, env.Table)
				ep := endpoint(t, s, account(t, s).ID)
				_, d, _ := event(t, s, ep, "")
				c := store.Claim{ID: "c1", LeaseUntil: time.Now().Add(50 * time.Millisecond).UnixMilli(), AttemptID: domain.NewID("att")}
				claimed, err := s.ClaimAttempt(ctx, d, c)
				if err != nil {
					t.Fatal(err)
				}
				a := domain.Attempt{ID: c.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptAuto, Series: 1, Number: 1, StartedAt: time.Now().UnixMilli(),
					StatusCode: 200, Outcome: domain.OutcomeDelivered}
				if big {
					a.ResponseBody = strings.Repeat("r", 1024)
				}
				db.n = 1
				o := store.Outcome{Status: domain.StatusDelivered, Healthy: true}
				if err := s.RecordAttempt(ctx, claimed, &ep, c, a, o); err == nil {
					t.Fatal("the injected failure did not happen")
				}
				if retried {
					if err := s.RecordAttempt(ctx, claimed, &ep, c, a, o); err != nil {
						t.Fatalf("writing the outcome again: %v", err)
					}
					got, attempts, _ := s.DeliveryWithAttempts(ctx, d.ID)
					if got.Status != domain.StatusDelivered || len(attempts) != 1 || attempts[0].Outcome != domain.OutcomeDelivered || attempts[0].DeliveryID != d.ID {
						t.Fatalf("after the retried record: %s, log %+v", got.Status, attempts)
					}
					return
				}
				for time.Now().UnixMilli() <= c.LeaseUntil {
					time.Sleep(10 * time.Millisecond)
				}
				seen, _ := s.GetDelivery(ctx, d.ID)
				next := store.Claim{ID: "c2", LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att"),
					Interrupted: lifecycle.Interrupted(seen, domain.NewID("att"))}
				if next.Interrupted == nil || next.Interrupted.ID != a.ID {
					t.Fatalf("interrupted entry: %+v", next.Interrupted)
				}
				if _, err := s.ClaimAttempt(ctx, seen, next); err != nil {
					t.Fatalf("the next claim after the crash: %v", err)
				}
				got, attempts, _ := s.DeliveryWithAttempts(ctx, d.ID)
				want := domain.OutcomeUnknown // its result was never written: interrupted
				if big {
					want = domain.OutcomeDelivered // its own entry was, before the crash
				}
				if got.Claim != "c2" || got.Attempts != 2 || len(attempts) != 1 || attempts[0].ID != a.ID || attempts[0].Outcome != want {
					t.Fatalf("after the takeover: %+v, log %+v", got, attempts)
				}
			})
		}
	}
}

func TestFailRestartAndDeadLetterMark(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	failed, err := s.FailWithoutAttempt(ctx, d, domain.ReasonEndpointDisabled, false)
	if err != nil || failed.Status != domain.StatusFailed || !failed.DLQPending {
		t.Fatalf("fail: %+v %v", failed, err)
	}
	if _, err := s.FailWithoutAttempt(ctx, d, domain.ReasonEndpointDisabled, false); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("failing twice: %v", err)
	}
	// The sweeper index still holds it until the DLQ message is sent.
	if ids := sweepAll(t, s, time.Now().Add(time.Second)); !contains(ids, d.ID) {
		t.Fatal("failed delivery with a pending DLQ message is not in the sweep index")
	}
	// One sender at a time: the first claim wins, a second waits it out.
	if err := s.ClaimDeadLetter(ctx, d.ID); err != nil {
		t.Fatalf("claim the DLQ send: %v", err)
	}
	if err := s.ClaimDeadLetter(ctx, d.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second DLQ claim: %v", err)
	}
	if err := s.MarkDeadLettered(ctx, d.ID, failed.Gen); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimDeadLetter(ctx, d.ID); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("DLQ claim after it was sent: %v", err)
	}
	if ids := sweepAll(t, s, time.Now().Add(time.Second)); contains(ids, d.ID) {
		t.Fatal("dead-lettered delivery still in the sweep index")
	}
	if _, err := s.Restart(ctx, d.ID, d.EndpointID, failed.Gen+1); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("restart of another generation: %v", err)
	}
	r, err := s.Restart(ctx, d.ID, d.EndpointID, failed.Gen)
	if err != nil || r.Status != domain.StatusPending || r.Attempts != 0 || r.Series != 2 || r.Gen != failed.Gen+1 || r.DLQPending {
		t.Fatalf("restart: %+v %v", r, err)
	}
	if _, err := s.Restart(ctx, d.ID, d.EndpointID, failed.Gen); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second restart from the same DLQ message: %v", err)
	}
}

// A redriven DLQ message of a delivery that is gone (expired: DynamoDB
// deleted it) restarts nothing, and says so: not found, never a conflict
// (which the callers took for "moved on" and logged as restarted).
func TestRestartOfAGoneDeliveryIsNotFound(t *testing.T) {
	s := newStore(t)
	if _, err := s.Restart(ctx, domain.NewID("dlv"), domain.NewID("ep"), 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("restart of a delivery that is gone: %v, want ErrNotFound", err)
	}
	if _, err := s.Restart(ctx, domain.NewID("dlv"), domain.NewID("ep"), -1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("recover of a delivery that is gone: %v, want ErrNotFound", err)
	}
}

func TestRequeueRespectsLeaseAndCeiling(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	later := time.Now().Add(time.Second).UnixMilli()
	r, err := s.Requeue(ctx, d.ID, later, later, 8)
	if err != nil || r.Gen != d.Gen+1 || r.RequeuedAt != later || r.DueAt != later || r.OverdueFrom == 0 || r.OverdueFrom >= later {
		t.Fatalf("requeue: %+v %v, want gen+1, requeued_at and due_at at `at`, overdue_from the due time before", r, err)
	}
	// Re-queued since `before`: refused, one extra message a grace at most.
	if got, err := s.Requeue(ctx, d.ID, later, later, 8); !errors.Is(err, store.ErrConflict) || got.Gen != r.Gen {
		t.Fatalf("a second requeue within the period: %+v %v", got, err)
	}
	// A live lease blocks a requeue.
	if _, err := s.ClaimAttempt(ctx, r, store.Claim{ID: "c", LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	hour := time.Now().Add(time.Hour).UnixMilli()
	if _, err := s.Requeue(ctx, d.ID, hour, hour, 8); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("requeue under a live lease: %v", err)
	}
	// With the ceiling reached, Requeue refuses and says why.
	got, err := s.Requeue(ctx, d.ID, hour, hour, 1)
	if !errors.Is(err, store.ErrConflict) || got.Attempts != 1 {
		t.Fatalf("requeue at the ceiling: %+v %v", got, err)
	}
	// A delivery gone: not found.
	if _, err := s.Requeue(ctx, "dlv_missing", hour, hour, 8); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("requeue of a missing delivery: %v", err)
	}
}

// A re-queue whose write was taken and retried (its answer lost) is
// re-queued, not a conflict, so that the sweeper sends its message (taken
// for another run's, it sent none); gen is bumped once.
func TestARequeueRetriedAfterItsWriteWasTakenIsRequeued(t *testing.T) {
	env := testenv.New(t)
	s := store.New(testenv.WritesTwice{DynamoDB: env.DB}, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	later := time.Now().Add(time.Second).UnixMilli()
	r, err := s.Requeue(ctx, d.ID, later, later, 8)
	if err != nil || r.Gen != d.Gen+1 || r.RequeuedAt != later {
		t.Fatalf("re-queue retried after its write was taken: %+v %v, want re-queued, gen %d", r, err, d.Gen+1)
	}
}

func sweepAll(t *testing.T, s *store.Store, before time.Time) []string {
	var ids []string
	for shard := 0; shard < 16; shard++ {
		page, err := s.DueForSweep(ctx, shard, 0, before.UnixMilli(), 100, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, page.IDs...)
	}
	return ids
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A late mark from generation g must not clear generation g+1's
// pending DLQ message (nor take it out of the sweep index).
func TestLateDeadLetterMarkOfAnOlderGenerationChangesNothing(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	g1, err := s.FailWithoutAttempt(ctx, d, domain.ReasonEndpointDisabled, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Restart(ctx, d.ID, d.EndpointID, g1.Gen) // recovered while g1's sender is still on its way
	if err != nil {
		t.Fatal(err)
	}
	g2, err := s.FailWithoutAttempt(ctx, r, domain.ReasonEndpointDisabled, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkDeadLettered(ctx, d.ID, g1.Gen); err != nil { // g1's sender arrives late
		t.Fatal(err)
	}
	got, _ := s.GetDelivery(ctx, d.ID)
	if !got.DLQPending || got.Gen != g2.Gen {
		t.Fatalf("a late mark of gen %d cleared gen %d's pending DLQ message: %+v", g1.Gen, g2.Gen, got)
	}
	if ids := sweepAll(t, s, time.Now().Add(time.Hour)); !contains(ids, d.ID) {
		t.Fatal("a late mark took the newer generation out of the sweep index")
	}
	if err := s.MarkDeadLettered(ctx, d.ID, g2.Gen); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetDelivery(ctx, d.ID); got.DLQPending {
		t.Fatalf("the right generation's mark did not clear it: %+v", got)
	}
}

// A manual attempt left in progress by a worker that died is
// taken over once its lease has run out; under a live lease it is a duplicate.
func TestManualAttemptLeftInProgressIsTakenOverAfterItsLease(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d.ID, Kind: domain.AttemptManual, StartedAt: time.Now().UnixMilli()}
	short := store.Claim{ID: "m1", LeaseUntil: time.Now().Add(50 * time.Millisecond).UnixMilli()}
	if err := s.ClaimManual(ctx, a, short); err != nil {
		t.Fatal(err)
	}
	live := store.Claim{ID: "m2", LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
	if err := s.ClaimManual(ctx, a, live); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("second claim under a live lease: %v", err)
	}
	for time.Now().UnixMilli() <= short.LeaseUntil {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.ClaimManual(ctx, a, live); err != nil {
		t.Fatalf("the worker died: its resend must be taken over, got %v", err)
	}
}

// The last attempt of a series, claimed by a worker that died,
// is logged as interrupted when the delivery is failed as exhausted.
func TestFailingAnInterruptedLastAttemptLogsIt(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	c := store.Claim{ID: "c1", LeaseUntil: time.Now().Add(30 * time.Millisecond).UnixMilli(), AttemptID: domain.NewID("att")}
	claimed, err := s.ClaimAttempt(ctx, d, c)
	if err != nil {
		t.Fatal(err)
	}
	for time.Now().UnixMilli() <= c.LeaseUntil {
		time.Sleep(10 * time.Millisecond)
	}
	failed, err := s.FailWithoutAttempt(ctx, claimed, domain.ReasonExhausted, true)
	if err != nil || failed.Status != domain.StatusFailed || failed.FailReason != domain.ReasonExhausted || failed.Claim != "" {
		t.Fatalf("fail: %+v %v", failed, err)
	}
	_, attempts, err := s.DeliveryWithAttempts(ctx, d.ID)
	if err != nil || len(attempts) != 1 || attempts[0].ID != c.AttemptID || attempts[0].Kind != domain.AttemptInterrupted || attempts[0].Number != 1 {
		t.Fatalf("attempt log: %+v %v", attempts, err)
	}
}

// The endpoint log pages newest first, all or by status, from keys-only
// indexes; delivered and pending deliveries never enter the status index
// (only failed ones do, and a restart takes them out again).
func TestDeliveryLogByStatusFromKeysOnlyIndexes(t *testing.T) {
	env := testenv.New(t)
	s := store.New(env.DB, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	want := map[domain.Status][]string{}
	var all []string
	for i, st := range []domain.Status{"delivered", "pending", "failed", "delivered", "delivered", "pending", "failed", "delivered"} {
		_, d, err := event(t, s, ep, "")
		if err != nil {
			t.Fatal(err)
		}
		switch st {
		case domain.StatusDelivered:
			c := store.Claim{ID: fmt.Sprint("c", i), LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att")}
			claimed, err := s.ClaimAttempt(ctx, d, c)
			if err != nil {
				t.Fatal(err)
			}
			a := domain.Attempt{ID: c.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 200}
			if err := s.RecordAttempt(ctx, claimed, &ep, c, a, store.Outcome{Status: domain.StatusDelivered, Healthy: true}); err != nil {
				t.Fatal(err)
			}
		case domain.StatusFailed:
			if _, err := s.FailWithoutAttempt(ctx, d, domain.ReasonEndpointDisabled, false); err != nil {
				t.Fatal(err)
			}
		}
		want[st] = append([]string{d.ID}, want[st]...)
		all = append([]string{d.ID}, all...)
	}
	want[""] = all
	for _, ids := range want {
		// The log is newest first by id; two ids made in one millisecond
		// are not in the order they were made.
		sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	}
	for st, ids := range want {
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			page, err := s.ListEndpointDeliveries(ctx, ep.ID, st, 2, after)
			if err != nil || pages > len(all) {
				t.Fatalf("%q page %d: %v", st, pages, err)
			}
			for _, d := range page.Deliveries {
				if st != "" && d.Status != st {
					t.Fatalf("%q page holds a %s delivery", st, d.Status)
				}
				got = append(got, d.ID)
			}
			if after = page.After; after == "" {
				break
			}
		}
		if !reflect.DeepEqual(got, ids) {
			t.Errorf("status %q: listed %v, want %v", st, got, ids)
		}
	}
	for _, st := range []domain.Status{domain.StatusPending, domain.StatusDelivered} {
		out, err := env.DB.Query(ctx, &dynamodb.QueryInput{TableName: &env.Table, IndexName: aws.String("endpoint_status"),
			KeyConditionExpression:    aws.String("gsi2pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "EP#" + ep.ID + "#" + string(st)}}})
		if err != nil || len(out.Items) != 0 {
			t.Errorf("%s deliveries in the status index: %d (%v)", st, len(out.Items), err)
		}
	}
	failed, _ := s.GetDelivery(ctx, want[domain.StatusFailed][0])
	if _, err := s.Restart(ctx, failed.ID, ep.ID, -1); err != nil {
		t.Fatal(err)
	}
	if page, _ := s.ListEndpointDeliveries(ctx, ep.ID, domain.StatusFailed, 10, ""); len(page.Deliveries) != 1 {
		t.Fatalf("after a restart the failed list holds %d, want 1", len(page.Deliveries))
	}
	if page, _ := s.ListEndpointDeliveries(ctx, ep.ID, domain.StatusPending, 10, ""); len(page.Deliveries) != 3 {
		t.Fatalf("after a restart the pending list holds %d, want 3", len(page.Deliveries))
	}
}

// Ingest writes the deliveries, then the event (the commit point), without a
// transaction. An ingest that dies between the two leaves orphan deliveries
// (the producer got an error and retries): the worker never attempts one,
// and once it is older than store.OrphanAfter its read deletes it, so the
// sweeper stops finding it. A message naming another event never makes a
// delivery look orphaned.
func TestIngestDyingBetweenItsWritesLeavesOrphansThatAreDroppedAndDeleted(t *testing.T) {
	env := testenv.New(t)
	db := &failingDB{DynamoDB: env.DB}
	s := store.New(db, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	write := func(age time.Duration) domain.Delivery {
		now := time.Now()
		ev := domain.Event{ID: domain.NewID("evt"), AccountID: ep.AccountID, Type: "payout.fulfilled", Body: []byte(`{"event":"payout.fulfilled"}`),
			ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
		d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: ep.AccountID, EventType: ev.Type,
			Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: now.UnixMilli(), CreatedAt: now.Add(-age).UnixMilli(), ExpiresAt: ev.ExpiresAt}
		ev.DeliveryIDs = []string{d.ID}
		db.eventPuts = 1
		if _, err := s.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: []domain.Delivery{d}, DueAt: []int64{now.UnixMilli()}}); err == nil {
			t.Fatal("the injected failure did not happen")
		}
		if _, err := s.GetDelivery(ctx, d.ID); err != nil {
			t.Fatalf("the orphan should be there for this test: %v", err)
		}
		return d
	}
	load := func(d domain.Delivery, eventID string) store.Snapshot {
		snap, err := s.LoadForAttempt(ctx, store.Ref{DeliveryID: d.ID, AccountID: d.AccountID, EndpointID: d.EndpointID, EventID: eventID})
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	// Young: its event may still be on its way; not attempted, not deleted.
	young := write(time.Second)
	if snap := load(young, young.EventID); snap.Delivery != nil {
		t.Fatalf("a delivery without its event was handed to the worker: %+v", snap.Delivery)
	}
	if _, err := s.GetDelivery(ctx, young.ID); err != nil {
		t.Fatalf("a young orphan was deleted: %v", err)
	}
	// Past OrphanAfter, with a message naming another event: left alone.
	old := write(store.OrphanAfter + time.Minute)
	if snap := load(old, domain.NewID("evt")); snap.Delivery == nil {
		t.Fatal("a message naming another event hid the delivery")
	}
	if _, err := s.GetDelivery(ctx, old.ID); err != nil {
		t.Fatalf("a message naming another event deleted the delivery: %v", err)
	}
	// Past OrphanAfter, its own event: dropped and deleted (out of the sweep index too).
	if snap := load(old, old.EventID); snap.Delivery != nil {
		t.Fatal("an orphan was handed to the worker")
	}
	if _, err := s.GetDelivery(ctx, old.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the orphan was not deleted: %v", err)
	}
	if ids := sweepAll(t, s, time.Now().Add(time.Hour)); contains(ids, old.ID) {
		t.Fatal("the deleted orphan is still in the sweep index")
	}
	// A committed delivery is untouched by all this.
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	if snap := load(d, d.EventID); snap.Delivery == nil || snap.Event == nil {
		t.Fatalf("a committed delivery: %+v", snap)
	}
}

// The transaction parts are read by name: which condition failed decides
// the error, whatever the part's position.
func TestEndpointWritesNameWhichConditionFailed(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	ep := endpoint(t, s, a.ID)
	if err := s.CreateEndpoint(ctx, ep); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("the same endpoint again: %v, want ErrDuplicate", err)
	}
	if err := s.DeleteEndpoint(ctx, a.ID, "ep_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of an unknown endpoint: %v, want ErrNotFound", err)
	}
	if err := s.DeleteEndpoint(ctx, a.ID, ep.ID); err != nil {
		t.Fatal(err)
	}
	if acct, eps, err := s.AccountWithEndpoints(ctx, a.ID); err != nil || len(eps) != 0 || acct.EndpointCount != 0 {
		t.Fatalf("after the delete: %d endpoints, count %d, %v", len(eps), acct.EndpointCount, err)
	}
}

// A blip's record (lifecycle.Blip) writes the delivery and leaves the
// endpoint's item as it was: no failing_since, no last failure, no write of
// it at all.
func TestABlipsRecordLeavesTheEndpointAlone(t *testing.T) {
	s, calls := countedStore(t)
	ep, d, c, claimed := claimedOne(t, s)
	before, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	next := time.Now().Add(time.Second).UnixMilli()
	a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d.ID, Kind: domain.AttemptAuto, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 500}
	calls.Reset()
	if err := s.RecordAttempt(ctx, claimed, &before, c, a, store.Outcome{Status: domain.StatusPending, NextAttemptAt: next, Blip: true}); err != nil {
		t.Fatal(err)
	}
	// The outcome; nothing on the endpoint's item.
	if n := calls.Snapshot()["DynamoDB.UpdateItem"]; n != 1 {
		t.Fatalf("%d UpdateItem calls, want 1 (the outcome): %s", n, calls)
	}
	after, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
	if after.FailingSince != 0 || after.LastFailureAt != 0 || after.UpdatedAt != before.UpdatedAt {
		t.Fatalf("the endpoint after a blip: failing since %d, last failure %d", after.FailingSince, after.LastFailureAt)
	}
	if got, _ := s.GetDelivery(ctx, d.ID); got.Status != domain.StatusPending || got.Attempts != 1 || got.LastStatus != 500 {
		t.Fatalf("the delivery after a blip: %+v", got)
	}
}

// FailedDeliveryIDs pages on after a delivery id (recover's cursor), oldest
// first, within the window.
func TestFailedDeliveryIDsGoOnAfterACursor(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	var ids []string
	for range 5 {
		_, d, _ := event(t, s, ep, "")
		if _, err := s.FailWithoutAttempt(ctx, d, domain.ReasonEndpointDisabled, false); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	lo, hi := time.Now().Add(-time.Hour).UnixMilli(), time.Now().Add(time.Second).UnixMilli()
	first, err := s.FailedDeliveryIDs(ctx, ep.ID, lo, hi, "", 2)
	if err != nil || len(first) != 2 {
		t.Fatalf("first page: %v %v", first, err)
	}
	rest, err := s.FailedDeliveryIDs(ctx, ep.ID, lo, hi, first[1], 10)
	if err != nil || len(rest) != 3 {
		t.Fatalf("after %s: %v %v", first[1], rest, err)
	}
	got := append(first, rest...)
	sort.Strings(ids)
	if !slices.Equal(got, ids) {
		t.Fatalf("pages %v, want %v", got, ids)
	}
}
