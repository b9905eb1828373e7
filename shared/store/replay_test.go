package store_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// eventAt writes an event whose id carries the time at (the account_events
// index is by the id's day), with deliveries to the given endpoints.
func eventAt(t *testing.T, s *store.Store, acct string, at time.Time, typ string, unlisted bool, eps ...string) domain.Event {
	t.Helper()
	id := domain.IDBound("evt", at.UnixMilli(), false)
	id = id[:len(id)-6] + domain.NewID("x")[len("x_")+20:] // the time's digits, then random ones
	ev := domain.Event{ID: id, AccountID: acct, Type: typ, Body: []byte(`{"event":"` + typ + `"}`),
		ReceivedAt: at.UnixMilli(), ExpiresAt: at.Add(domain.DefaultRetention).Unix(), EndpointIDs: eps}
	ne := store.NewEvent{Event: ev, Unlisted: unlisted}
	for _, ep := range eps {
		d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep, AccountID: acct, EventType: typ,
			Status: domain.StatusPending, Gen: 1, Series: 1, CreatedAt: at.UnixMilli(), ExpiresAt: ev.ExpiresAt}
		ne.Deliveries = append(ne.Deliveries, d)
		ne.DueAt = append(ne.DueAt, at.UnixMilli())
		ne.Event.DeliveryIDs = append(ne.Event.DeliveryIDs, d.ID)
	}
	if _, err := s.CreateEvent(ctx, ne); err != nil {
		t.Fatal(err)
	}
	return ne.Event
}

func ids(refs []store.EventRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.ID
	}
	return out
}

// The account_events index lists an account's events by time across its
// day partitions, oldest first, bounded and resumable after a cursor; test
// events and other accounts' events are not in it.
func TestAccountEventsByTimeAcrossDays(t *testing.T) {
	s := newStore(t)
	a, b := account(t, s), account(t, s)
	now := time.Now()
	e1 := eventAt(t, s, a.ID, now.Add(-50*time.Hour), "order.paid", false, "ep_x")
	e2 := eventAt(t, s, a.ID, now.Add(-26*time.Hour), "payout.paid", false)
	eventAt(t, s, a.ID, now.Add(-25*time.Hour), "webhook.test", true, "ep_x") // a test event
	e3 := eventAt(t, s, a.ID, now.Add(-time.Minute), "order.paid", false)
	eventAt(t, s, b.ID, now.Add(-time.Minute), "order.paid", false)
	since, until := now.Add(-72*time.Hour).UnixMilli(), now.UnixMilli()

	refs, more, err := s.AccountEvents(ctx, a.ID, "", since, until, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(refs); more || len(got) != 3 || got[0] != e1.ID || got[1] != e2.ID || got[2] != e3.ID {
		t.Fatalf("all: %v more=%v, want %s %s %s", got, more, e1.ID, e2.ID, e3.ID)
	}
	if refs[0].Type != "order.paid" || len(refs[0].EndpointIDs) != 1 || refs[0].EndpointIDs[0] != "ep_x" || refs[0].ExpiresAt != e1.ExpiresAt || refs[0].Body != nil {
		t.Errorf("ref: %+v", refs[0])
	}
	// With bodies (an endpoint's content filter): the same events, each with its body.
	withBodies, more, err := s.AccountEventsWithBodies(ctx, a.ID, "", since, until, 10)
	if err != nil || more || len(withBodies) != 3 || string(withBodies[1].Body) != string(e2.Body) || withBodies[1].ID != e2.ID {
		t.Fatalf("with bodies: %+v more=%v %v", withBodies, more, err)
	}
	// A body large enough to be stored compressed comes back inflated.
	big := domain.Event{ID: domain.NewID("evt"), AccountID: b.ID, Type: "order.paid",
		Body:       []byte(`{"event":"order.paid","items":"` + strings.Repeat("gift card ", 200) + `"}`),
		ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
	if _, err := s.CreateEvent(ctx, store.NewEvent{Event: big}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.AccountEventsWithBodies(ctx, b.ID, "", since, time.Now().Add(time.Minute).UnixMilli(), 10); err != nil || len(got) != 2 || string(got[1].Body) != string(big.Body) {
		t.Fatalf("a compressed body: %d events %v; want its body inflated", len(got), err)
	}
	page, more, err := s.AccountEvents(ctx, a.ID, "", since, until, 2)
	if err != nil || !more || len(page) != 2 || page[1].ID != e2.ID {
		t.Fatalf("page of 2: %v more=%v %v", ids(page), more, err)
	}
	rest, more, err := s.AccountEvents(ctx, a.ID, page[1].ID, since, until, 2)
	if err != nil || more || len(rest) != 1 || rest[0].ID != e3.ID {
		t.Fatalf("after the cursor: %v more=%v %v", ids(rest), more, err)
	}
	if past, more, err := s.AccountEvents(ctx, a.ID, e3.ID, since, now.Add(-10*time.Hour).UnixMilli(), 10); err != nil || more || len(past) != 0 {
		t.Fatalf("a cursor past the window: %v more=%v %v", ids(past), more, err)
	}
	window, _, err := s.AccountEvents(ctx, a.ID, "", now.Add(-30*time.Hour).UnixMilli(), now.Add(-10*time.Hour).UnixMilli(), 10)
	if err != nil || len(window) != 1 || window[0].ID != e2.ID {
		t.Fatalf("window: %v %v", ids(window), err)
	}
}

// AddReplayDelivery makes one delivery per event and endpoint: a second one
// (another replay, or an endpoint ingest already delivered to) is
// ErrConflict and writes nothing; a missing event is ErrNotFound.
func TestAddReplayDeliveryOncePerEndpoint(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	ep := endpoint(t, s, a.ID)
	now := time.Now()
	ev := eventAt(t, s, a.ID, now.Add(-time.Hour), "order.paid", false, "ep_ingested")
	replay := func(endpointID, eventID string) (domain.Delivery, error) {
		d := domain.Delivery{ID: domain.NewID("dlv"), EventID: eventID, EndpointID: endpointID, AccountID: a.ID, EventType: "order.paid",
			Status: domain.StatusPending, Gen: 1, Series: 1, CreatedAt: now.UnixMilli(), ExpiresAt: ev.ExpiresAt}
		return d, s.AddReplayDelivery(ctx, d, now.UnixMilli())
	}
	d, err := replay(ep.ID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := replay(ep.ID, ev.ID); !errors.Is(err, store.ErrConflict) {
		t.Errorf("second replay: %v, want ErrConflict", err)
	}
	if _, err := replay("ep_ingested", ev.ID); !errors.Is(err, store.ErrConflict) {
		t.Errorf("replay to the endpoint ingest delivered to: %v, want ErrConflict", err)
	}
	if _, err := replay(ep.ID, domain.NewID("evt")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("replay of a missing event: %v, want ErrNotFound", err)
	}
	got, err := s.GetEvent(ctx, ev.AccountID, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.EndpointIDs) != 2 || got.EndpointIDs[1] != ep.ID || len(got.DeliveryIDs) != 2 || got.DeliveryIDs[1] != d.ID {
		t.Errorf("event after one replay: endpoints %v deliveries %v", got.EndpointIDs, got.DeliveryIDs)
	}
	stored, err := s.GetDelivery(ctx, d.ID)
	if err != nil || stored.Status != domain.StatusPending || stored.EndpointID != ep.ID {
		t.Errorf("replayed delivery: %+v %v", stored, err)
	}
	page, err := s.ListEndpointDeliveries(ctx, ep.ID, "", 10, "")
	if err != nil || len(page.Deliveries) != 1 || page.Deliveries[0].ID != d.ID {
		t.Errorf("the endpoint's log: %+v %v", page, err)
	}
}

// A failed attempt writes the endpoint's last failure (status, or error
// class) for its health view, at most once per LastFailureEvery: the next
// failures within it write nothing more on the endpoint.
func TestLastFailureIsRecordedAtMostOnceAMinute(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	record := func(status int, errClass string) domain.Endpoint {
		t.Helper()
		_, d, _ := event(t, s, ep, "")
		c := store.Claim{ID: domain.NewID("clm"), LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
		claimed, err := s.ClaimAttempt(ctx, d, c)
		if err != nil {
			t.Fatal(err)
		}
		epNow, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
		a := domain.Attempt{ID: domain.NewID("att"), DeliveryID: d.ID, Kind: domain.AttemptAuto, Number: 1,
			StartedAt: time.Now().UnixMilli(), StatusCode: status, ErrorClass: errClass}
		if err := s.RecordAttempt(ctx, claimed, &epNow, c, a, store.Outcome{Status: domain.StatusPending, NextAttemptAt: time.Now().UnixMilli()}); err != nil {
			t.Fatal(err)
		}
		after, _ := s.GetEndpoint(ctx, ep.AccountID, ep.ID)
		return after
	}
	first := record(503, "")
	if first.LastFailureAt == 0 || first.LastFailureStatus != 503 || first.LastFailureError != "" {
		t.Fatalf("after a 503: at %d status %d error %q", first.LastFailureAt, first.LastFailureStatus, first.LastFailureError)
	}
	second := record(0, "timeout")
	if second.LastFailureAt != first.LastFailureAt || second.LastFailureStatus != 503 {
		t.Errorf("a failure within the minute rewrote the last failure: %+v", second)
	}
}

// Events stored before they were keyed by their account's day (EVT#<id>,
// listed by the account_events index) are listed with the new ones, merged
// by id and paged across both, and a replay's delivery joins such an event.
func TestAccountEventsListsEventsOfTheLegacyLayout(t *testing.T) {
	env := testenv.New(t)
	s := store.New(env.DB, env.Table)
	a := account(t, s)
	now := time.Now()
	e1 := eventAt(t, s, a.ID, now.Add(-3*time.Minute), "order.paid", false)
	e3 := eventAt(t, s, a.ID, now.Add(-time.Minute), "order.paid", false)
	// e2, between them, as the old layout wrote it.
	id := domain.IDBound("evt", now.Add(-2*time.Minute).UnixMilli(), false)
	id = id[:len(id)-6] + domain.NewID("x")[len("x_")+20:]
	day := now.Add(-2 * time.Minute).UTC().Format(time.DateOnly)
	s2 := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	_, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &env.Table, Item: map[string]types.AttributeValue{
		"pk": s2("EVT#" + id), "sk": s2("EVT"), "id": s2(id), "account_id": s2(a.ID), "event_type": s2("order.paid"),
		"body":   &types.AttributeValueMemberB{Value: []byte(`{"event":"order.paid"}`)},
		"gsi3pk": s2("EVTS#" + a.ID + "#" + day), "gsi3sk": s2(id),
		"ttl": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Add(time.Hour).Unix())}}})
	if err != nil {
		t.Fatal(err)
	}
	since, until := now.Add(-time.Hour).UnixMilli(), now.UnixMilli()
	var got []string
	for after, page := "", 0; page < 5; page++ {
		refs, more, err := s.AccountEvents(ctx, a.ID, after, since, until, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(refs)...)
		if !more || len(refs) == 0 {
			break
		}
		after = refs[len(refs)-1].ID
	}
	if len(got) != 3 || got[0] != e1.ID || got[1] != id || got[2] != e3.ID {
		t.Fatalf("listed %v, want %v", got, []string{e1.ID, id, e3.ID})
	}
	d := domain.Delivery{ID: domain.NewID("dlv"), EventID: id, EndpointID: "ep_y", AccountID: a.ID, EventType: "order.paid",
		Status: domain.StatusPending, Gen: 1, Series: 1, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(time.Hour).Unix()}
	if err := s.AddReplayDelivery(ctx, d, now.UnixMilli()); err != nil {
		t.Fatalf("a replay's delivery of a legacy event: %v", err)
	}
	if ev, err := s.GetEvent(ctx, a.ID, id); err != nil || len(ev.DeliveryIDs) != 1 || ev.DeliveryIDs[0] != d.ID {
		t.Fatalf("the legacy event after the replay: %+v (%v)", ev, err)
	}
}
