package store_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// An event's body of a few kilobytes is stored compressed: a 2 KB body's
// item costs one write unit, not three, a 6 KB one's two, not seven, and
// each reads back byte for byte through GetEvent and LoadForAttempt. A
// small body, or one that does not shrink, is stored as it is; an item
// stored before (a plain body) reads as it did.
func TestAnEventsBodyIsStoredCompressedWhenThatIsSmaller(t *testing.T) {
	env := testenv.New(t)
	calls := testenv.NewCalls()
	db, _ := env.CountedClients(calls)
	s := store.New(db, env.Table)
	ep := endpoint(t, s, account(t, s).ID)
	random := make([]byte, 2000)
	_, _ = rand.Read(random)
	for name, c := range map[string]struct {
		body       []byte
		compressed bool
		units      float64 // the event's put (it is its own listing: no index entry)
	}{
		"a 2 KB payout":      {testenv.PayoutBody(2000), true, 1},
		"a 6 KB payout":      {testenv.PayoutBody(6000), true, 2},
		"a small body":       {[]byte(`{"event":"payout.fulfilled"}`), false, 1},
		"2 KB that is noise": {random, false, 3},
	} {
		t.Run(name, func(t *testing.T) {
			now := time.Now()
			ev := domain.Event{ID: domain.NewID("evt"), AccountID: ep.AccountID, Type: "payout.fulfilled", Body: c.body,
				ReceivedAt: now.UnixMilli(), ExpiresAt: now.Add(domain.DefaultRetention).Unix()}
			d := domain.Delivery{ID: domain.NewID("dlv"), EventID: ev.ID, EndpointID: ep.ID, AccountID: ep.AccountID, EventType: ev.Type,
				Status: domain.StatusPending, Gen: 1, Series: 1, NextAttemptAt: now.UnixMilli(), CreatedAt: now.UnixMilli(), ExpiresAt: ev.ExpiresAt}
			ev.DeliveryIDs = []string{d.ID}
			calls.Reset()
			if _, err := s.CreateEvent(ctx, store.NewEvent{Event: ev, Deliveries: []domain.Delivery{d}, DueAt: []int64{now.UnixMilli()}}); err != nil {
				t.Fatal(err)
			}
			// The deliveries' write (the item and its two index entries) is 3.
			units := calls.WriteUnits() - 3
			t.Logf("a body of %d bytes: the event's write units %g", len(c.body), units)
			if units != c.units {
				t.Errorf("the event's write units: %g, want %g", units, c.units)
			}
			raw, err := env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &env.Table, ConsistentRead: aws.Bool(true),
				Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "EVTS#" + ev.AccountID + "#" + now.UTC().Format(time.DateOnly)},
					"sk": &types.AttributeValueMemberS{Value: ev.ID}}})
			if err != nil {
				t.Fatal(err)
			}
			_, plain := raw.Item["body"]
			z, packed := raw.Item["body_z"].(*types.AttributeValueMemberB)
			if packed != c.compressed || plain == c.compressed || (packed && len(z.Value) >= len(c.body)) {
				t.Fatalf("stored compressed: %v (plain too: %v), want %v", packed, plain, c.compressed)
			}
			got, err := s.GetEvent(ctx, ev.AccountID, ev.ID)
			if err != nil || !bytes.Equal(got.Body, c.body) {
				t.Fatalf("GetEvent: %d bytes (%v), want the %d posted", len(got.Body), err, len(c.body))
			}
			snap, err := s.LoadForAttempt(ctx, store.Ref{DeliveryID: d.ID, AccountID: d.AccountID, EndpointID: d.EndpointID, EventID: d.EventID})
			if err != nil || snap.Event == nil || !bytes.Equal(snap.Event.Body, c.body) {
				t.Fatalf("LoadForAttempt: %+v (%v)", snap.Event, err)
			}
		})
	}

	// An item written before bodies were compressed, and before events were
	// stored under their account's day: a plain body of 2 KB at EVT#<id>.
	now := time.Now()
	old := testenv.PayoutBody(2000)
	id := domain.NewID("evt")
	_, err := env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &env.Table, Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "EVT#" + id}, "sk": &types.AttributeValueMemberS{Value: "EVT"},
		"id": &types.AttributeValueMemberS{Value: id}, "account_id": &types.AttributeValueMemberS{Value: ep.AccountID},
		"event_type": &types.AttributeValueMemberS{Value: "payout.fulfilled"}, "body": &types.AttributeValueMemberB{Value: old},
		"ttl": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Add(time.Hour).Unix())}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetEvent(ctx, ep.AccountID, id); err != nil || !bytes.Equal(got.Body, old) {
		t.Fatalf("an item of before: %d bytes (%v)", len(got.Body), err)
	}
	if _, err := s.GetEvent(ctx, "acct_other", id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an item of before, read as another account's: %v, want not found", err)
	}
	snap, err := s.LoadForAttempt(ctx, store.Ref{DeliveryID: "dlv_none", AccountID: ep.AccountID, EndpointID: ep.ID, EventID: id})
	if err != nil || snap.Event == nil || !bytes.Equal(snap.Event.Body, old) {
		t.Fatalf("LoadForAttempt of an item of before: %+v (%v)", snap.Event, err)
	}
}
