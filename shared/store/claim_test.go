package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// A claim written twice (the SDK retrying an UpdateItem that DynamoDB had
// applied, after a timeout or a 500) is the same claim, not a conflict:
// taken for lost, its attempt would stay claimed with no request, logged
// as interrupted and counted against the eight. Another claim's write is
// still refused.
func TestAClaimAppliedAndRetriedIsOurs(t *testing.T) {
	s := newStore(t)
	ep := endpoint(t, s, account(t, s).ID)
	_, d, err := event(t, s, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	claim := store.Claim{ID: domain.NewID("clm"), LeaseUntil: time.Now().Add(time.Minute).UnixMilli(), AttemptID: domain.NewID("att")}
	first, err := s.ClaimAttempt(ctx, d, claim)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.ClaimAttempt(ctx, d, claim)
	if err != nil {
		t.Fatalf("the same claim written again: %v", err)
	}
	if again.Attempts != first.Attempts || again.Claim != claim.ID {
		t.Fatalf("the same claim written again: %+v, want %+v", again, first)
	}
	if cur, err := s.GetDelivery(ctx, d.ID); err != nil || cur.Attempts != 1 || cur.Claim != claim.ID {
		t.Fatalf("stored %+v (%v): want one attempt claimed by %s", cur, err, claim.ID)
	}
	other := claim
	other.ID, other.AttemptID = domain.NewID("clm"), domain.NewID("att")
	if _, err := s.ClaimAttempt(ctx, d, other); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("another claim of the same attempt: %v, want ErrConflict", err)
	}
}
