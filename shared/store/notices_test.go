package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/store"
)

// The account's notification addresses are replaced whole, removed by an
// empty list, and refused for an account that does not exist.
func TestNotificationEmailsAreSetAndCleared(t *testing.T) {
	s := newStore(t)
	a, err := s.CreateAccount(ctx, "acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ops@acme.example", "oncall@acme.example"}
	if err := s.SetNotificationEmails(ctx, a.ID, want); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetAccount(ctx, a.ID); err != nil || !slices.Equal(got.NotificationEmails, want) || got.Name != "acme" {
		t.Fatalf("account %+v %v", got, err)
	}
	if err := s.SetNotificationEmails(ctx, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetAccount(ctx, a.ID); len(got.NotificationEmails) != 0 {
		t.Fatalf("after clearing: %v", got.NotificationEmails)
	}
	if err := s.SetNotificationEmails(ctx, "acct_missing", want); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
	if _, err := s.GetAccount(ctx, "acct_missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused update made an account: %v", err)
	}
}

// A notice's mail is claimed by one sender at a time and never again once
// sent; a claim whose sender never said it sent (it died between the two)
// is taken again once stale, so the mail is not lost.
func TestMailIsClaimedOnceAndReclaimedOnlyWhenItsSenderDied(t *testing.T) {
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	s := newStore(t).WithClock(func() time.Time { return now })
	const k, stale = "notify:endpoint.failing:ep_1:2026-12-06", time.Minute
	claim := func() bool {
		t.Helper()
		ok, err := s.ClaimMail(ctx, k, stale)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !claim() {
		t.Fatal("the first claim was refused")
	}
	if claim() {
		t.Fatal("a second sender claimed a mail being sent")
	}
	now = now.Add(2 * stale) // the first sender died without sending
	if !claim() {
		t.Fatal("a stale claim was not taken over: the mail would never be sent")
	}
	if err := s.MailSent(ctx, k); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if claim() {
		t.Fatal("a sent mail was claimed again")
	}
	if ok, err := s.ClaimMail(ctx, "notify:endpoint.failing:ep_1:2026-12-07", stale); err != nil || !ok {
		t.Fatalf("the next day's notice: %v %v", ok, err)
	}
}
