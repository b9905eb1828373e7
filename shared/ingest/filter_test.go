package ingest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

func filtered(id, f string) domain.Endpoint {
	return domain.Endpoint{ID: id, AccountID: "acct_1", Settings: domain.EndpointSettings{Filter: f}}
}

var filterEndpoints = []domain.Endpoint{
	filtered("ep_all", ""),
	filtered("ep_crypto", `{"data":{"payout_type":["crypto"]}}`),
	filtered("ep_big", `{"data":{"amount":[{"numeric":[">=",1000]}]}}`),
	filtered("ep_not_eur", `{"data":{"currency":[{"anything-but":["EUR"]}]}}`),
	filtered("ep_broken", `{"data":"no longer valid"}`), // a filter that no longer compiles takes every event
}

var filterBodies = []struct {
	body string
	want string // endpoints that get a delivery
}{
	{`{"event":"payout.paid","data":{"payout_type":"crypto","amount":5,"currency":"EUR"}}`, "[ep_all ep_crypto ep_broken]"},
	{`{"event":"payout.paid","data":{"payout_type":"bank","amount":5000,"currency":"USD"}}`, "[ep_all ep_big ep_not_eur ep_broken]"},
	{`{"event":"payout.paid"}`, "[ep_all ep_broken]"},
}

// An endpoint's content filter decides at fan-out: a filtered-out event
// makes no delivery to it, and the event does not list it.
func TestFanOutHonoursContentFilters(t *testing.T) {
	for _, c := range filterBodies {
		body := []byte(c.body)
		typ, err := Validate(body)
		if err != nil {
			t.Fatal(err)
		}
		ne := fanOut("acct_1", filterEndpoints, checked{body: body, eventType: typ}, time.Now())
		var got []string
		for _, d := range ne.Deliveries {
			got = append(got, d.EndpointID)
		}
		if fmt.Sprint(got) != c.want || fmt.Sprint(ne.Event.EndpointIDs) != c.want {
			t.Errorf("%s: deliveries to %v (event lists %v), want %s", c.body, got, ne.Event.EndpointIDs, c.want)
		}
	}
}

// Replay picks only the events an endpoint's filter takes; an event listed
// without its body (the legacy index) is picked.
func TestMissingHonoursContentFilter(t *testing.T) {
	now := time.Now()
	exp := now.Add(24 * time.Hour).Unix()
	for _, ep := range filterEndpoints {
		var refs []store.EventRef
		var want []string
		for i, c := range filterBodies {
			id := fmt.Sprintf("evt_%d", i)
			refs = append(refs, store.EventRef{ID: id, Type: "payout.paid", ExpiresAt: exp, Body: []byte(c.body)})
			if contains(c.want, ep.ID) {
				want = append(want, id)
			}
		}
		refs = append(refs, store.EventRef{ID: "evt_legacy", Type: "payout.paid", ExpiresAt: exp})
		want = append(want, "evt_legacy")
		picked, consumed, _ := missing(ep, refs, MaxReplayCreated, now)
		var got []string
		for _, r := range picked {
			got = append(got, r.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || consumed != len(refs) {
			t.Errorf("%s: picked %v of %d, want %v", ep.ID, got, consumed, want)
		}
	}
}

func contains(list, id string) bool {
	return slices.Contains(strings.Fields(strings.Trim(list, "[]")), id)
}
