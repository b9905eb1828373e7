package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

func TestEventTypesCountAndVersionTheCatalog(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	et := domain.EventType{AccountID: a.ID, Name: "payout.sent", Description: "a payout left", Schema: `{"type":"object"}`, CreatedAt: 1, UpdatedAt: 1}
	if err := s.CreateEventType(ctx, et); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateEventType(ctx, et); !errors.Is(err, store.ErrDuplicate) {
		t.Fatalf("the same name again: %v", err)
	}
	acct, err := s.GetAccount(ctx, a.ID)
	if err != nil || acct.EventTypeCount != 1 || acct.CatalogVersion != 1 {
		t.Fatalf("after one create (and a refused one): %+v %v", acct, err)
	}
	// The catalog is not in the account's partition: ingest's read of it is unchanged.
	if _, eps, err := s.AccountWithEndpoints(ctx, a.ID); err != nil || len(eps) != 0 {
		t.Fatalf("AccountWithEndpoints: %v %v", eps, err)
	}

	got, err := s.GetEventType(ctx, a.ID, "payout.sent")
	if err != nil || got.Schema != et.Schema || got.Rev != 0 {
		t.Fatalf("get: %+v %v", got, err)
	}
	got.Deprecated = true
	updated, err := s.UpdateEventType(ctx, got, got.Rev)
	if err != nil || updated.Rev != 1 {
		t.Fatalf("update: %+v %v", updated, err)
	}
	// A second writer that read revision 0 loses, and changes nothing.
	stale := got
	stale.Description = "stale"
	if _, err := s.UpdateEventType(ctx, stale, 0); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale update: %v", err)
	}
	if _, err := s.UpdateEventType(ctx, domain.EventType{AccountID: a.ID, Name: "nope"}, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("update of a missing type: %v", err)
	}
	got, _ = s.GetEventType(ctx, a.ID, "payout.sent")
	acct, _ = s.GetAccount(ctx, a.ID)
	if !got.Deprecated || got.Description != "a payout left" || acct.CatalogVersion != 2 || acct.EventTypeCount != 1 {
		t.Fatalf("after the updates: %+v, account %+v", got, acct)
	}
	if _, err := s.GetEventType(ctx, account(t, s).ID, "payout.sent"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another account's catalog: %v", err)
	}
}

func TestEventTypesListInPagesAndNames(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	for i := range 5 {
		if err := s.CreateEventType(ctx, domain.EventType{AccountID: a.ID, Name: fmt.Sprintf("t.%d", i), Schema: `{}`, Deprecated: i == 3}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the pages do not end")
		}
		page, err := s.ListEventTypes(ctx, a.ID, 2, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, et := range page.Types {
			names = append(names, et.Name)
		}
		if after = page.After; after == "" {
			break
		}
	}
	if fmt.Sprint(names) != "[t.0 t.1 t.2 t.3 t.4]" {
		t.Fatalf("listed %v", names)
	}
	entries, err := s.EventTypeNames(ctx, a.ID)
	if err != nil || len(entries) != 5 || !entries[3].Deprecated || entries[0].Schema != "" {
		t.Fatalf("names: %+v %v", entries, err)
	}
}

func TestEventTypesAreBoundedPerAccount(t *testing.T) {
	s := newStore(t)
	a := account(t, s)
	for i := range domain.MaxEventTypes {
		if err := s.CreateEventType(ctx, domain.EventType{AccountID: a.ID, Name: fmt.Sprintf("t.%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateEventType(ctx, domain.EventType{AccountID: a.ID, Name: "one.more"}); !errors.Is(err, store.ErrLimit) {
		t.Fatalf("past the limit: %v", err)
	}
	if _, err := s.GetEventType(ctx, a.ID, "one.more"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused type was stored: %v", err)
	}
}
