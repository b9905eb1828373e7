package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

type pollOut struct {
	Data []struct {
		ID    string `json:"id"`
		Event string `json:"event"`
	} `json:"data"`
	NextCursor string `json:"next_cursor"`
	Done       bool   `json:"done"`
}

// A polling endpoint reads the events its filter takes with its own token,
// no delivery being made for it; after a commit, a read without a cursor
// returns only newer events. Its token opens nothing else, and no other
// endpoint.
func TestPollingEndpointReadsAndCommits(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	var ep struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		PollToken string `json:"poll_token"`
	}
	if code := h.call(t, key, "POST", "/v1/endpoints", `{"type":"polling","event_types":["payout.*"]}`, &ep); code != 201 ||
		ep.Type != "polling" || !strings.HasPrefix(ep.PollToken, "gpoll_") {
		t.Fatalf("register: %d %+v", code, ep)
	}
	var first []string
	for i := range 3 {
		ev := h.publish(t, key, fmt.Sprintf(`{"event":"payout.fulfilled","n":%d}`, i))
		if len(ev.Deliveries) != 0 {
			t.Fatalf("a delivery was made for a polling endpoint: %+v", ev.Deliveries)
		}
		first = append(first, ev.ID)
	}
	h.publish(t, key, `{"event":"order.paid"}`) // not its type
	read := func(token, cursor string) pollOut {
		t.Helper()
		path := "/v1/endpoints/" + ep.ID + "/poll?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		var p pollOut
		if code := h.call(t, token, "GET", path, nil, &p); code != 200 {
			t.Fatalf("poll: %d", code)
		}
		return p
	}
	// All of them, in pages, once they are 5 s old.
	var got []string
	cursor := ""
	for deadline := time.Now().Add(30 * time.Second); len(got) < 3 && time.Now().Before(deadline); {
		p := read(ep.PollToken, cursor)
		for _, e := range p.Data {
			got = append(got, e.ID)
		}
		cursor = p.NextCursor
		if p.Done {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(first) {
		t.Fatalf("read %v, want %v", got, first)
	}
	if code := h.call(t, ep.PollToken, "POST", "/v1/endpoints/"+ep.ID+"/poll/commit", map[string]string{"cursor": cursor}, nil); code != 200 {
		t.Fatalf("commit: %d", code)
	}
	newer := h.publish(t, key, `{"event":"payout.fulfilled","n":3}`)
	var after []string
	for deadline := time.Now().Add(30 * time.Second); len(after) == 0 && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		for _, e := range read(key, "").Data { // the API key reads it too
			after = append(after, e.ID)
		}
	}
	if len(after) != 1 || after[0] != newer.ID {
		t.Fatalf("after the commit: %v, want only %s", after, newer.ID)
	}
	// The token opens nothing but its own endpoint's two routes.
	other := h.endpoint(t, key, "https://hooks.example.com/x")
	if code := h.call(t, ep.PollToken, "GET", "/v1/endpoints/"+other.ID+"/poll", nil, nil); code != 401 {
		t.Errorf("another endpoint with this token: %d", code)
	}
	if code := h.call(t, ep.PollToken, "GET", "/v1/endpoints", nil, nil); code != 401 {
		t.Errorf("another route with this token: %d", code)
	}
	forged := ep.PollToken[:len(ep.PollToken)-1] + "0"
	if forged == ep.PollToken {
		forged = ep.PollToken[:len(ep.PollToken)-1] + "1"
	}
	if code := h.call(t, forged, "GET", "/v1/endpoints/"+ep.ID+"/poll", nil, nil); code != 401 {
		t.Errorf("a wrong token: %d", code)
	}
	if code := h.call(t, key, "GET", "/v1/endpoints/"+other.ID+"/poll", nil, nil); code != 409 {
		t.Errorf("polling a pushed endpoint: %d", code)
	}
}
