package store_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/cost"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// record claims d's next attempt and records it with the given response,
// failed (pending again) or delivered.
func record(t *testing.T, s *store.Store, d domain.Delivery, ep domain.Endpoint, n int, body string, delivered bool) domain.Attempt {
	t.Helper()
	cur, err := s.GetDelivery(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := store.Claim{ID: domain.NewID("clm"), LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att")}
	claimed, err := s.ClaimAttempt(ctx, cur, c)
	if err != nil {
		t.Fatalf("claim %d: %v", n, err)
	}
	a := domain.Attempt{ID: c.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptAuto, Series: 1, Number: n,
		StartedAt: time.Now().UnixMilli(), StatusCode: 500, ResponseBody: body, Outcome: domain.OutcomeRetry, ExpiresAt: cur.ExpiresAt}
	o := store.Outcome{Status: domain.StatusPending, NextAttemptAt: time.Now().UnixMilli()}
	if delivered {
		a.StatusCode, a.Outcome, o = 200, domain.OutcomeDelivered, store.Outcome{Status: domain.StatusDelivered, Healthy: true}
	}
	if err := s.RecordAttempt(ctx, claimed, &ep, c, a, o); err != nil {
		t.Fatalf("record %d: %v", n, err)
	}
	return a
}

// ownEntries counts the attempt-log items of their own under delivery id.
func ownEntries(t *testing.T, env *testenv.Env, id string) int {
	t.Helper()
	out, err := env.DB.Query(ctx, &dynamodb.QueryInput{TableName: &env.Table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :att)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "DLV#" + id}, ":att": &types.AttributeValueMemberS{Value: "ATT#"}}})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// writeUnitsOf is what a write of the delivery's item costs now, as the
// emulator bills it (a no-op update: the item's size, in 1 KB units).
func writeUnitsOf(t *testing.T, env *testenv.Env, id string) float64 {
	t.Helper()
	out, err := env.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &env.Table,
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "DLV#" + id}, "sk": &types.AttributeValueMemberS{Value: "DLV"}},
		UpdateExpression: aws.String("SET updated_at = updated_at"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
}

// A first try's attempt is logged by the write that records its outcome,
// on the delivery's item: no entry of its own, and the log reads it whole.
func TestAFirstTrysAttemptIsLoggedByItsOutcomeWrite(t *testing.T) {
	env := testenv.New(t)
	s := store.New(env.DB, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	a := record(t, s, d, ep, 1, "ok", true)
	if n := ownEntries(t, env, d.ID); n != 0 {
		t.Fatalf("%d attempt items of their own; want the attempt on the delivery's item", n)
	}
	got, log, err := s.DeliveryWithAttempts(ctx, d.ID)
	if err != nil || got.Status != domain.StatusDelivered || len(log) != 1 {
		t.Fatalf("%s, log %+v, %v", got.Status, log, err)
	}
	if log[0] != a {
		t.Fatalf("logged %+v\nwant %+v", log[0], a)
	}
	if u := writeUnitsOf(t, env, d.ID); u != 1 {
		t.Fatalf("the delivery's item costs %g write units now, want 1", u)
	}
	// Further tries with short answers: the first ones fit (the simulation
	// bills the others an item each).
	_, d, _ = event(t, s, ep, "")
	for n := 1; n <= 4; n++ {
		record(t, s, d, ep, n, "busy", false)
	}
	if own := ownEntries(t, env, d.ID); own != 4-cost.AttemptsLoggedOnDelivery {
		t.Fatalf("%d of 4 attempts on the delivery's item, want %d", 4-own, cost.AttemptsLoggedOnDelivery)
	}
}

// Attempts go on the delivery's item while it stays within one write unit,
// the others (and any with a long response kept) on items of their own; the
// log, whole or a page at a time, reads every attempt once, in order.
func TestTheAttemptLogReadsBothPlacesInOrder(t *testing.T) {
	env := testenv.New(t)
	s := store.New(env.DB, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	var want []domain.Attempt // newest first
	for n := 1; n <= 8; n++ {
		body := "busy"
		if n == 2 {
			body = strings.Repeat("x", 1024) // too big for the delivery's item
		}
		want = append([]domain.Attempt{record(t, s, d, ep, n, body, n == 8)}, want...)
		if u := writeUnitsOf(t, env, d.ID); u != 1 {
			t.Fatalf("after attempt %d the delivery's item costs %g write units, want 1", n, u)
		}
	}
	// Newest first by id (two ids made in one millisecond are not in the
	// order they were made).
	slices.SortFunc(want, func(a, b domain.Attempt) int { return strings.Compare(b.ID, a.ID) })
	own := ownEntries(t, env, d.ID)
	t.Logf("%d of 8 attempts on the delivery's item", 8-own)
	if own == 0 || own == 8 {
		t.Fatalf("%d of 8 attempts on items of their own; want some on the delivery's item and the rest on their own", own)
	}
	got, _, _ := s.DeliveryWithAttempts(ctx, d.ID)
	if len(got.Logged) != 8-own || got.Logged[0].ID != want[7].ID {
		t.Fatalf("on the delivery's item: %+v", got.Logged)
	}

	_, whole, _ := s.DeliveryWithAttempts(ctx, d.ID)
	for i, a := range whole {
		if a != want[7-i] {
			t.Fatalf("whole log, #%d: %+v\nwant %+v", i, a, want[7-i])
		}
	}
	for _, size := range []int{1, 3, 8, 20} {
		_, first, err := s.DeliveryWithNewestAttempts(ctx, d.ID, size)
		if err != nil {
			t.Fatal(err)
		}
		pages := []store.AttemptPage{first}
		for pages[len(pages)-1].After != "" {
			p, err := s.DeliveryAttempts(ctx, got, size, pages[len(pages)-1].After)
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, p)
		}
		var read []domain.Attempt
		for _, p := range pages {
			if len(p.Attempts) > size || len(p.Attempts) < size && p.After != "" {
				t.Fatalf("pages of %d: a page of %d, after %q", size, len(p.Attempts), p.After)
			}
			read = append(read, p.Attempts...)
		}
		if len(read) != len(want) {
			t.Fatalf("pages of %d read %d attempts, want %d", size, len(read), len(want))
		}
		for i := range want {
			if read[i] != want[i] {
				t.Fatalf("pages of %d, #%d: %s, want %s", size, i, read[i].ID, want[i].ID)
			}
		}
	}
}

// A retry the step lets keep its due time (lifecycle.KeepsDue) leaves
// due_at, and so the sweep index entry, as it was; any other moves it.
func TestARetryThatKeepsItsDueLeavesTheSweepEntry(t *testing.T) {
	env := testenv.New(t)
	s := store.New(env.DB, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	for _, keep := range []bool{true, false} {
		_, d, _ := event(t, s, ep, "")
		before, _ := s.GetDelivery(ctx, d.ID)
		c := store.Claim{ID: domain.NewID("clm"), LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att")}
		claimed, err := s.ClaimAttempt(ctx, before, c)
		if err != nil {
			t.Fatal(err)
		}
		next := time.Now().Add(time.Second).UnixMilli()
		a := domain.Attempt{ID: c.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptAuto, Series: 1, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 500, Outcome: domain.OutcomeRetry}
		if err := s.RecordAttempt(ctx, claimed, &ep, c, a, store.Outcome{Status: domain.StatusPending, NextAttemptAt: next, KeepDue: keep}); err != nil {
			t.Fatal(err)
		}
		got, _ := s.GetDelivery(ctx, d.ID)
		want := next
		if keep {
			want = before.DueAt
		}
		if got.NextAttemptAt != next || got.DueAt != want || before.DueAt == next {
			t.Fatalf("keep %v: next %d due %d (was %d), want next %d due %d", keep, got.NextAttemptAt, got.DueAt, before.DueAt, next, want)
		}
	}
}

// A message that carries its event (queue.Message.Event) loads three items,
// not four: the event's item is not read, and the snapshot's event is the
// one carried. Without it, the event's item is read as before.
func TestALoadWithTheEventCarriedReadsThreeItems(t *testing.T) {
	s, calls := countedStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	ev, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := store.Ref{DeliveryID: d.ID, AccountID: d.AccountID, EndpointID: d.EndpointID, EventID: d.EventID}
	for _, carried := range []*domain.Event{nil, {ID: ev.ID, AccountID: ev.AccountID, Type: ev.Type, Body: ev.Body}} {
		ref.Event = carried
		calls.Reset()
		snap, err := s.LoadForAttempt(ctx, ref)
		if err != nil || snap.Delivery == nil || snap.Endpoint == nil || snap.Event == nil || string(snap.Event.Body) != string(ev.Body) {
			t.Fatalf("carried %v: %+v, %v", carried != nil, snap, err)
		}
		want := 4.0
		if carried != nil {
			want = 3
			if snap.Event != carried {
				t.Fatal("the snapshot's event is not the one carried")
			}
		}
		if got := calls.ReadUnits(); got != want {
			t.Fatalf("carried %v: %g read units, want %g", carried != nil, got, want)
		}
	}
}

// A record written again after DynamoDB applied it (the SDK retrying a write
// whose answer was lost) is taken for written: no error, and the attempt is
// logged once, not a second time on an item of its own.
func TestARecordAppliedThenRetriedIsWrittenOnce(t *testing.T) {
	env := testenv.New(t)
	s := store.New(env.DB, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, _ := event(t, s, ep, "")
	c := store.Claim{ID: "c1", LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att")}
	claimed, err := s.ClaimAttempt(ctx, d, c)
	if err != nil {
		t.Fatal(err)
	}
	a := domain.Attempt{ID: c.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptAuto, Series: 1, Number: 1, StartedAt: time.Now().UnixMilli(), StatusCode: 200, Outcome: domain.OutcomeDelivered}
	o := store.Outcome{Status: domain.StatusDelivered, Healthy: true}
	for i := range 2 {
		if err := s.RecordAttempt(ctx, claimed, &ep, c, a, o); err != nil {
			t.Fatalf("write %d: %v", i+1, err)
		}
	}
	if _, log, _ := s.DeliveryWithAttempts(ctx, d.ID); len(log) != 1 || ownEntries(t, env, d.ID) != 0 {
		t.Fatalf("logged %d times (%d on items of their own), want once on the delivery's item", len(log), ownEntries(t, env, d.ID))
	}
}
