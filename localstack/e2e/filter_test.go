package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// An endpoint with a content filter gets only the events its filter takes:
// a filtered-out event makes no delivery to it; the account's other
// endpoint gets every event.
func TestEndpointWithAFilterGetsOnlyMatchingEvents(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	all, allEp := h.registerReceiver(t, key, always(200))
	some := h.receiver(t, always(200))
	var ep endpointOut
	body := fmt.Sprintf(`{"url":%q,"settings":{"filter":{"payout_type":["crypto"],"amount":[{"numeric":[">",0]}]}}}`, some.URL)
	if code := h.call(t, key, "POST", "/v1/endpoints", body, &ep); code != 201 {
		t.Fatalf("create the filtered endpoint: %d", code)
	}
	some.setSecret(ep.Secret)

	crypto := h.publish(t, key, `{"event":"payout.fulfilled","payout_type":"crypto","amount":5}`)
	gift := h.publish(t, key, `{"event":"payout.fulfilled","payout_type":"gift_cards","amount":5}`)
	zero := h.publish(t, key, `{"event":"payout.fulfilled","payout_type":"crypto","amount":0}`)
	to := func(e eventOut) map[string]string {
		m := map[string]string{}
		for _, d := range e.Deliveries {
			m[d.EndpointID] = d.ID
		}
		return m
	}
	if m := to(crypto); len(m) != 2 || m[ep.ID] == "" || m[allEp.ID] == "" {
		t.Fatalf("the matching event: deliveries %v", crypto.Deliveries)
	}
	for _, e := range []eventOut{gift, zero} {
		if m := to(e); len(m) != 1 || m[allEp.ID] == "" {
			t.Fatalf("a filtered-out event: deliveries %v, want only the unfiltered endpoint's", e.Deliveries)
		}
	}
	for _, e := range []eventOut{crypto, gift, zero} {
		h.waitFor(t, key, to(e)[allEp.ID], 30*time.Second, settled)
	}
	h.waitFor(t, key, to(crypto)[ep.ID], 30*time.Second, settled)
	if got := some.requests(); len(got) != 1 || got[0].verified != nil {
		t.Fatalf("the filtered endpoint got %d requests", len(got))
	} else if want := `"amount":5`; !strings.Contains(string(got[0].body), want) || !strings.Contains(string(got[0].body), `"crypto"`) {
		t.Fatalf("the filtered endpoint got %s", got[0].body)
	}
	if n := len(all.requests()); n != 3 {
		t.Fatalf("the unfiltered endpoint got %d requests, want 3", n)
	}
}

// Replay honours the endpoint's content filter: of the window's events it
// delivers only those the filter takes.
func TestReplayHonoursTheFilter(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	since := time.Now().Add(-time.Minute)
	h.publish(t, key, `{"event":"payout.fulfilled","payout_type":"crypto"}`)
	h.publish(t, key, `{"event":"payout.fulfilled","payout_type":"gift_cards"}`)
	h.publish(t, key, `{"event":"payout.fulfilled","payout_type":"crypto","n":2}`)
	rv := h.receiver(t, always(200))
	var ep endpointOut
	if code := h.call(t, key, "POST", "/v1/endpoints", fmt.Sprintf(`{"url":%q,"settings":{"filter":{"payout_type":["crypto"]}}}`, rv.URL), &ep); code != 201 {
		t.Fatalf("create: %d", code)
	}
	var res struct{ Scanned, Replayed, Skipped int }
	body := map[string]string{"since": since.Format(time.RFC3339Nano)}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/replay", body, &res); code != 202 || res.Scanned != 3 || res.Replayed != 2 {
		t.Fatalf("replay: %d %+v, want 2 of 3 replayed", code, res)
	}
	deadline := time.Now().Add(time.Duration(float64(20*time.Second) * h.slower))
	for len(rv.requests()) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	got := rv.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests, want the 2 crypto payouts", len(got))
	}
	for _, r := range got {
		if !strings.Contains(string(r.body), `"crypto"`) {
			t.Errorf("replayed a filtered-out event: %s", r.body)
		}
	}
}

// Recover honours the endpoint's content filter as replay does: of its
// failed deliveries it restarts only those whose event the filter (set
// since they failed) takes; the others stay failed. A cursor goes on past
// them, so a window with many filtered-out failures still ends.
func TestRecoverHonoursTheFilter(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	var s scripted
	rv, ep := h.registerReceiver(t, key, s.respond(404))
	since := time.Now().Add(-time.Minute)
	var crypto, gift []string
	for _, typ := range []string{"crypto", "gift_cards", "crypto", "gift_cards"} {
		ev := h.publish(t, key, fmt.Sprintf(`{"event":"payout.fulfilled","payout_type":%q}`, typ))
		id := ev.Deliveries[0].ID
		h.waitFor(t, key, id, 15*time.Second, settled)
		if typ == "crypto" {
			crypto = append(crypto, id)
		} else {
			gift = append(gift, id)
		}
	}
	if code := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, `{"settings":{"filter":{"payout_type":["crypto"]}}}`, nil); code != 200 {
		t.Fatalf("set the filter: %d", code)
	}
	s.ok.Store(true)
	failedBefore := len(rv.requests())
	var res struct {
		Recovered, Filtered int
		More                bool
	}
	body := map[string]string{"since": since.Format(time.RFC3339Nano)}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", body, &res); code != 202 || res.Recovered != 2 || res.Filtered != 2 || res.More {
		t.Fatalf("recover: %d %+v, want 2 recovered and 2 filtered out", code, res)
	}
	for _, id := range crypto {
		if d := h.waitFor(t, key, id, 15*time.Second, settled); d.Status != "delivered" || d.Series != 2 {
			t.Fatalf("recovered delivery %+v", d)
		}
	}
	for _, id := range gift {
		if d := h.delivery(t, key, id); d.Status != "failed" || d.Series != 1 {
			t.Fatalf("a delivery the filter does not take was recovered: %+v", d)
		}
	}
	got := rv.requests()[failedBefore:]
	if len(got) != 2 {
		t.Fatalf("receiver got %d requests after recover, want the 2 crypto payouts", len(got))
	}
	for _, r := range got {
		if !strings.Contains(string(r.body), `"crypto"`) {
			t.Errorf("recovered a filtered-out event: %s", r.body)
		}
	}
}
