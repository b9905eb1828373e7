package store_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// Ingest's own first message of a delivery carries the delivery as ingest
// wrote it (queue.Message.First): the load reads two items, the endpoint
// and its slot item, not three; the claim holds that delivery to what the
// message says (its gen, attempts and ids) and returns the item as
// claimed, which the record then works from. A claim for a delivery that
// moved on since, or named with another delivery's ids, is refused and
// writes nothing.
func TestIngestsFirstMessageReadsNoDeliveryAndItsClaimReturnsTheItem(t *testing.T) {
	s, calls := countedStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	ev, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	m := queue.For(d).Carrying(ev.Type, ev.Body)
	m.First = &queue.First{CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt}
	ref := store.Ref{DeliveryID: m.DeliveryID, AccountID: m.AccountID, EndpointID: m.EndpointID, EventID: m.EventID, Event: m.Event(), Delivery: m.Delivery()}
	calls.Reset()
	snap, err := s.LoadForAttempt(ctx, ref)
	if err != nil || snap.Delivery == nil || snap.Endpoint == nil || snap.Event == nil {
		t.Fatalf("load: %+v, %v", snap, err)
	}
	if got := calls.ReadUnits(); got != 2 {
		t.Fatalf("%g read units, want 2 (the endpoint and its slot item)", got)
	}
	// Eventually consistent (what the step asks of ingest's first
	// message): the same items at half the units.
	calls.Reset()
	eventual := ref
	eventual.Eventual = true
	if again, err := s.LoadForAttempt(ctx, eventual); err != nil || !reflect.DeepEqual(again, snap) {
		t.Fatalf("eventual load: %+v, %v; want %+v", again, err, snap)
	}
	if got := calls.ReadUnits(); got != 1 {
		t.Fatalf("eventual: %g read units, want 1 (the endpoint and its slot item, half a unit each)", got)
	}
	// Without the delivery or the event carried, a load is strong whatever
	// is asked: an item just written may be missing from an eventual read.
	calls.Reset()
	eventual.Delivery = nil
	if _, err := s.LoadForAttempt(ctx, eventual); err != nil {
		t.Fatal(err)
	}
	if got := calls.ReadUnits(); got != 3 {
		t.Fatalf("eventual asked, delivery not carried: %g read units, want 3 (strong: endpoint, slot item, delivery)", got)
	}
	stored, err := s.GetDelivery(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	stored.UpdatedAt = stored.CreatedAt // as ingest's newDelivery writes it (this package's helper does not)
	if !reflect.DeepEqual(*snap.Delivery, stored) {
		t.Fatalf("the message's delivery\n%+v\nis not the one ingest wrote\n%+v", *snap.Delivery, stored)
	}

	// A message naming this delivery with another's ids claims nothing.
	ep2 := endpoint(t, s, account(t, s).ID)
	_, other, err := event(t, s, ep2, "")
	if err != nil {
		t.Fatal(err)
	}
	forged := *snap.Delivery
	forged.ID = other.ID
	if _, err := s.ClaimAttempt(ctx, forged, claim()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a claim of another account's delivery: %v, want ErrConflict", err)
	}
	if cur, _ := s.GetDelivery(ctx, other.ID); cur.Attempts != 0 || cur.Claim != "" {
		t.Fatalf("the other delivery after the refused claim: %+v", cur)
	}

	c := claim()
	claimed, err := s.ClaimAttempt(ctx, *snap.Delivery, c)
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.GetDelivery(ctx, d.ID)
	if err != nil || !reflect.DeepEqual(claimed, after) || claimed.Attempts != 1 || claimed.Claim != c.ID {
		t.Fatalf("claimed\n%+v\nthe item\n%+v (%v)", claimed, after, err)
	}
	// The same message again (SQS's at-least-once): the delivery moved on.
	time.Sleep(2 * time.Millisecond)
	if _, err := s.ClaimAttempt(ctx, *snap.Delivery, claim()); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the first message's claim again: %v, want ErrConflict", err)
	}
}
