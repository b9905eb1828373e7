package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/store"
)

// replayView is one replay call's answer.
type replayView struct {
	Scanned  int  `json:"scanned"`
	Replayed int  `json:"replayed"`
	Skipped  int  `json:"skipped"`
	More     bool `json:"more"`
	// NextCursor is given when More: send the same since/until with it to go on.
	NextCursor string `json:"next_cursor,omitempty"`
}

// replayEndpoint (POST /v1/endpoints/{id}/replay) delivers to the endpoint
// the events received in [since, until] that match its filter and never had
// a delivery to it (created, say, after them, or re-filtered since): as
// recover, bounded per call (ingest.MaxReplayScan events read,
// ingest.MaxReplayCreated deliveries made) and paced by the account's rate;
// unlike recover, a window that starts before the retention is refused,
// since the events before it are gone and the caller would believe them
// replayed.
func (a *API) replayEndpoint(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	if ep.Disabled {
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint (PATCH disabled=false) before replaying events to it")
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
	oldest := now.Add(-domain.DefaultRetention)
	if since.Before(oldest) {
		return fail(http.StatusUnprocessableEntity, "window_past_retention",
			"since is before the retention: events are kept 30 days, so since must be at or after "+rfc3339(domain.Millis(oldest)))
	}
	w := ingest.ReplayWindow{Since: since.UnixMilli(), Until: min(until.UnixMilli(), now.UnixMilli())}
	if in.Cursor != nil {
		after, valid := decodeCursor(*in.Cursor, "evt")
		if !valid {
			return fail(http.StatusUnprocessableEntity, "invalid_cursor", "cursor must be the next_cursor of an earlier answer")
		}
		w.After = after
	}
	// One call counts as one event against the key's ingest limit, as
	// recover: it makes at most ingest.MaxReplayCreated deliveries, each
	// booking a slot of the account's rate.
	gated, r, admitted := a.gated(ctx, req, 1)
	if !admitted {
		return r
	}
	res, err := a.Ingest.ReplayMissing(gated, req.account, ep.ID, w)
	if r, limited := limitAnswer(err); limited {
		return r
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("endpoint")
	case errors.Is(err, ingest.ErrEndpointDisabled):
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint (PATCH disabled=false) before replaying events to it")
	case err != nil:
		return a.internal(ctx, err)
	}
	v := replayView{Scanned: res.Scanned, Replayed: res.Replayed, Skipped: res.Skipped, More: res.More}
	if res.More {
		v.NextCursor = encodeCursor(res.Cursor)
	}
	return ok(http.StatusAccepted, v)
}
