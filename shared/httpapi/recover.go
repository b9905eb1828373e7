package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gifq/webhooks/shared/deadletter"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/store"
)

// How much one request may do; the caller repeats for the rest.
const maxRecoverPerCall = 1000

// timeWindow is the {since, until?} of recover and replay (RFC 3339). The
// times are read as strings so that a malformed one is a 422 naming its
// field, not a 400 saying the (valid) JSON is not JSON.
type timeWindow struct {
	Since *string `json:"since"`
	Until *string `json:"until"`
}

// bounds is the window at now: since is required and before until, which
// is now when not given; otherwise the 422 to answer.
func (w timeWindow) bounds(now time.Time) (since, until time.Time, r response, failed bool) {
	until = now
	for _, f := range []struct {
		name string
		raw  *string
		dst  *time.Time
	}{{"since", w.Since, &since}, {"until", w.Until, &until}} {
		if f.raw == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, *f.raw)
		if err != nil {
			return since, until, fail(http.StatusUnprocessableEntity, "invalid_window",
				fmt.Sprintf("%s must be an RFC 3339 time such as 2026-11-30T00:00:00Z, not %q", f.name, clip(*f.raw, 40))), true
		}
		*f.dst = t
	}
	if w.Since == nil || !since.Before(until) {
		return since, until, fail(http.StatusUnprocessableEntity, "invalid_window", "since (RFC 3339) is required and must be before until"), true
	}
	return since, until, response{}, false
}

// clip is s cut to at most n bytes (on a rune boundary), "..." marking a cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func (a *API) recoverEndpoint(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	if ep.Disabled {
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint (PATCH disabled=false) before recovering its deliveries")
	}
	var in struct {
		timeWindow
		Cursor *string `json:"cursor"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	now := a.Now()
	since, until, r, failed := in.bounds(now)
	if failed {
		return r
	}
	var after string
	if in.Cursor != nil {
		var valid bool
		if after, valid = decodeCursor(*in.Cursor, "dlv"); !valid {
			return fail(http.StatusUnprocessableEntity, "invalid_cursor", "cursor must be the next_cursor of an earlier answer")
		}
	}
	// Nothing older than the retention or newer than now exists: clamp, so
	// the year 0347 is the start of the retention (ids do not encode times
	// before 1970) and the query's bounds stay in order.
	// One call counts as one event against the key's ingest limit: a
	// script cannot loop recovers past it (each call restarts at most
	// maxRecoverPerCall deliveries, paced by the account's rate).
	if r, limited := limitAnswer(a.KeyLimits.take(ctx, req, 1)); limited {
		return r
	}
	lo := max(since.UnixMilli(), now.Add(-domain.DefaultRetention).UnixMilli())
	hi := min(until.UnixMilli(), now.UnixMilli())
	if lo > hi {
		return ok(http.StatusAccepted, recoverView{})
	}
	// An endpoint with a content filter reads each delivery's event to
	// honour it, as replay does: fewer per call.
	perCall := maxRecoverPerCall
	filtered := ingest.HasFilter(ep)
	if filtered {
		perCall = ingest.MaxReplayScanFiltered
	}
	ids, err := a.Store.FailedDeliveryIDs(ctx, ep.ID, lo, hi, after, perCall+1)
	if err != nil {
		return a.internal(ctx, err)
	}
	v := recoverView{More: len(ids) > perCall}
	ids = ids[:min(len(ids), perCall)]
	if v.More {
		v.NextCursor = encodeCursor(ids[len(ids)-1])
	}
	var skipped int
	var firstErr error
	var mu sync.Mutex
	eachConcurrently(len(ids), func(i int) {
		if filtered {
			takes, err := a.filterTakes(ctx, req.account, ep, ids[i])
			if err != nil || !takes {
				mu.Lock()
				defer mu.Unlock()
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					firstErr = err
				} else if err == nil {
					v.Filtered++
				}
				return
			}
		}
		_, err := deadletter.Restart(ctx, a.Store, a.Queue, ids[i], ep.ID, -1)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil, errors.Is(err, deadletter.ErrNotQueued): // queued by the sweeper if the send was lost
			v.Recovered++
		case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound): // restarted meanwhile, or expired since listed
			skipped++
		default:
			firstErr = err
		}
	})
	if firstErr != nil && v.Recovered == 0 {
		return a.internal(ctx, firstErr)
	}
	a.Log.Info("deliveries recovered", "endpoint_id", ep.ID, "recovered", v.Recovered, "filtered", v.Filtered, "skipped", skipped, "more", v.More)
	return ok(http.StatusAccepted, v)
}

// recoverView is one recover call's answer.
type recoverView struct {
	Recovered int  `json:"recovered"`
	Filtered  int  `json:"filtered,omitempty"` // failed deliveries whose event the endpoint's filter no longer takes: left failed
	More      bool `json:"more"`
	// NextCursor is given when More: send the same since/until with it to go on.
	NextCursor string `json:"next_cursor,omitempty"`
}

// filterTakes: the endpoint's content filter takes the event of its
// delivery id.
func (a *API) filterTakes(ctx context.Context, account string, ep domain.Endpoint, id string) (bool, error) {
	d, err := a.Store.GetDelivery(ctx, id)
	if err != nil {
		return false, err
	}
	ev, err := a.Store.GetEvent(ctx, account, d.EventID)
	if err != nil {
		return false, err
	}
	return ingest.FilterTakes(ep, ev.Body), nil
}
