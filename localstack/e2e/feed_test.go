package e2e

import (
	"fmt"
	"net/url"
	"testing"
	"time"
)

type feedPage struct {
	Data []struct {
		ID    string         `json:"id"`
		Event string         `json:"event"`
		Body  map[string]any `json:"body"`
	} `json:"data"`
	NextCursor string `json:"next_cursor"`
}

// The events feed lists exactly the events posted in a window, a page at a
// time with a cursor, newest or oldest first, of one type if asked; events
// outside the window, test events and another account's are not in it.
func TestEventsFeedListsAWindow(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	_, other := h.account(t)
	h.registerReceiver(t, key, always(200))
	h.publish(t, key, `{"event":"order.paid","n":-1}`) // before the window
	time.Sleep(20 * time.Millisecond)
	since := time.Now().UTC()
	var posted []string
	for i := range 5 {
		typ := "payout.fulfilled"
		if i%2 == 1 {
			typ = "order.paid"
		}
		posted = append(posted, h.publish(t, key, fmt.Sprintf(`{"event":%q,"n":%d}`, typ, i)).ID)
	}
	h.publish(t, other, `{"event":"order.paid","n":99}`)
	time.Sleep(20 * time.Millisecond)
	until := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	h.publish(t, key, `{"event":"order.paid","n":100}`) // after it

	read := func(extra string) (ids []string, pages int) {
		cursor := ""
		for pages < 10 {
			q := url.Values{"since": {since.Format(time.RFC3339Nano)}, "until": {until.Format(time.RFC3339Nano)}, "limit": {"2"}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			var p feedPage
			if code := h.call(t, key, "GET", "/v1/events?"+q.Encode()+extra, nil, &p); code != 200 {
				t.Fatalf("feed: %d", code)
			}
			pages++
			for _, e := range p.Data {
				ids = append(ids, e.ID)
				if e.Body["event"] != e.Event {
					t.Errorf("event %s: body %v", e.ID, e.Body)
				}
			}
			if cursor = p.NextCursor; cursor == "" {
				return ids, pages
			}
		}
		t.Fatal("the feed never ends")
		return nil, 0
	}
	same := func(name string, got, want []string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	oldest, pages := read("&order=oldest")
	same("oldest first", oldest, posted)
	if pages < 3 {
		t.Errorf("5 events in pages of 2 came in %d pages", pages)
	}
	newest, _ := read("")
	same("newest first", newest, []string{posted[4], posted[3], posted[2], posted[1], posted[0]})
	orders, _ := read("&type=order.paid&order=oldest")
	same("order.paid only", orders, []string{posted[1], posted[3]})

	for _, bad := range []string{"since=yesterday", "order=random", "type=%20", "cursor=nope", "limit=101",
		"since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z"} {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if code := h.call(t, key, "GET", "/v1/events?"+bad, nil, &e); (code != 400 && code != 422) || e.Error.Code == "" {
			t.Errorf("%s: %d %+v", bad, code, e)
		}
	}
}
