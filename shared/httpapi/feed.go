package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// The events feed's bounds: one call reads at most feedScan events of the
// listing (a type filter may skip many) and answers at most feedBytes of
// bodies, well inside Lambda's 6 MB response; the rest is on next_cursor.
const (
	feedScan  = 500
	feedBytes = 4 << 20
	feedReads = 8 // events read at once for their bodies
)

var eventTypeRE = regexp.MustCompile(`^` + domain.EventTypePattern + `$`)

// feedEvent is one event of the feed.
type feedEvent struct {
	ID             string          `json:"id"`
	Event          string          `json:"event"`
	ReceivedAt     string          `json:"received_at"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Body           json.RawMessage `json:"body"`
}

type feedPage struct {
	Data       []feedEvent `json:"data"`
	NextCursor string      `json:"next_cursor"` // "" on the last page
	last       string      // the last event looked at (the polling feed's position)
}

// feedQuery is what GET /v1/events asks.
type feedQuery struct {
	since, until int64 // unix ms, inclusive
	eventType    string
	oldestFirst  bool
	limit        int
	after        string
}

// parseFeedQuery reads since and until (RFC 3339; default the retention up
// to now), type, order (newest, the default, or oldest), limit and cursor.
func parseFeedQuery(req *request, now time.Time) (feedQuery, response, bool) {
	limit, after, r, failed := pageQuery(req, "evt")
	if failed {
		return feedQuery{}, r, true
	}
	q := req.QueryStringParameters
	f := feedQuery{since: domain.Millis(now.Add(-domain.DefaultRetention)), until: domain.Millis(now), limit: limit, after: after}
	for name, at := range map[string]*int64{"since": &f.since, "until": &f.until} {
		if v, sent := q[name]; sent {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return f, fail(http.StatusUnprocessableEntity, "invalid_window", name+" must be an RFC 3339 time"), true
			}
			*at = domain.Millis(t)
		}
	}
	if f.since >= f.until {
		return f, fail(http.StatusUnprocessableEntity, "invalid_window", "since must be before until"), true
	}
	f.until = min(f.until, domain.Millis(now))
	f.since = max(f.since, domain.Millis(now.Add(-domain.DefaultRetention)))
	if v, sent := q["type"]; sent && !eventTypeRE.MatchString(v) {
		return f, fail(http.StatusBadRequest, "invalid_type", "type must be an event type (1-200 characters of letters, digits and . _ : / -)"), true
	} else if sent {
		f.eventType = v
	}
	switch q["order"] {
	case "", "newest":
	case "oldest":
		f.oldestFirst = true
	default:
		return f, fail(http.StatusBadRequest, "invalid_order", "order must be newest or oldest"), true
	}
	return f, response{}, false
}

// listEvents: GET /v1/events, the account's events received in a window,
// newest (or oldest) first, optionally of one type, a page at a time: for
// reconciling what a receiver has against what was sent. Test events are
// not listed; events older than the retention are gone.
func (a *API) listEvents(ctx context.Context, req *request) response {
	f, r, failed := parseFeedQuery(req, a.Now())
	if failed {
		return r
	}
	if f.since > f.until {
		return ok(http.StatusOK, feedPage{Data: []feedEvent{}})
	}
	page, r, failed := a.readFeed(ctx, req.account, f, func(ref store.EventRef) bool {
		return f.eventType == "" || ref.Type == f.eventType
	})
	if failed {
		return r
	}
	return ok(http.StatusOK, page)
}

// readFeed is a page of the account's events in f's window and order that
// match, with their bodies; failed with the error answer.
func (a *API) readFeed(ctx context.Context, account string, f feedQuery, match func(store.EventRef) bool) (feedPage, response, bool) {
	list := a.Store.AccountEvents
	if !f.oldestFirst {
		list = a.Store.AccountEventsNewestFirst
	}
	var picked []store.EventRef
	cursor, scanned := f.after, 0
	more := true
	for more && len(picked) < f.limit && scanned < feedScan {
		refs, m, err := list(ctx, account, cursor, f.since, f.until, min(feedScan-scanned, 100))
		if err != nil {
			return feedPage{}, a.internal(ctx, err), true
		}
		more, scanned = m, scanned+len(refs)
		for _, ref := range refs {
			cursor = ref.ID
			if match(ref) {
				if picked = append(picked, ref); len(picked) == f.limit {
					more = more || ref.ID != refs[len(refs)-1].ID
					break
				}
			}
		}
	}
	events, err := a.feedBodies(ctx, account, picked)
	if err != nil {
		return feedPage{}, a.internal(ctx, err), true
	}
	out := feedPage{Data: []feedEvent{}, last: cursor}
	size := 0
	for _, ev := range events {
		if size += len(ev.Body); size > feedBytes && len(out.Data) > 0 {
			more, cursor = true, out.Data[len(out.Data)-1].ID
			out.last = cursor
			break
		}
		out.Data = append(out.Data, ev)
	}
	if more {
		out.NextCursor = encodeCursor(cursor)
	}
	return out, response{}, false
}

// feedBodies reads the events refs list, feedReads at a time, in order;
// one gone meanwhile (expired) is left out.
func (a *API) feedBodies(ctx context.Context, account string, refs []store.EventRef) ([]feedEvent, error) {
	out := make([]feedEvent, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, feedReads)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ev, err := a.Store.GetEvent(ctx, account, ref.ID)
			if err == nil && ev.AccountID != account {
				err = store.ErrNotFound
			}
			errs[i] = err
			out[i] = feedEvent{ID: ev.ID, Event: ev.Type, ReceivedAt: rfc3339(ev.ReceivedAt), IdempotencyKey: ev.IdempotencyKey,
				Body: json.RawMessage(ev.Body)}
		}()
	}
	wg.Wait()
	kept := out[:0]
	for i, err := range errs {
		switch {
		case err == nil:
			kept = append(kept, out[i])
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	return kept, nil
}
