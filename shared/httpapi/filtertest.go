package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gifq/webhooks/shared/catalog"
	"github.com/gifq/webhooks/shared/filter"
	"github.com/gifq/webhooks/shared/store"
)

// testFilter (POST /v1/filters/test) says whether a content filter takes a
// body: one given, or the example of a type in the account's catalog. It
// reads at most the event type and writes nothing; the filter is bounded as
// an endpoint's is and the match as fan-out's (filter.Compile, Match).
func (a *API) testFilter(ctx context.Context, req *request) response {
	var in struct {
		Filter    json.RawMessage `json:"filter"`
		EventType *string         `json:"event_type"`
		Body      json.RawMessage `json:"body"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	f, err := filter.Compile(in.Filter)
	if err != nil || f == nil {
		msg := "filter is required"
		if err != nil {
			msg = err.Error()
		}
		return fail(http.StatusUnprocessableEntity, "invalid_filter", "filter: "+msg)
	}
	if (in.EventType == nil) == (len(in.Body) == 0) {
		return fail(http.StatusUnprocessableEntity, "invalid_request", "give either event_type (to test its catalog example) or body")
	}
	if len(in.Body) > 0 && in.Body[0] != '{' {
		return fail(http.StatusUnprocessableEntity, "invalid_request", "body must be a JSON object, as an event's is")
	}
	body := []byte(in.Body)
	if in.EventType != nil {
		if !catalog.ValidName(*in.EventType) {
			return notFound("event type")
		}
		et, err := a.Store.GetEventType(ctx, req.account, *in.EventType)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return notFound("event type")
		case err != nil:
			return a.internal(ctx, err)
		case et.Example == "":
			return fail(http.StatusUnprocessableEntity, "no_example", "event type "+et.Name+" has no example in the catalog: give a body")
		}
		body = []byte(et.Example)
	}
	return ok(http.StatusOK, map[string]any{"matches": f.Match(filter.Decode(body)), "body": json.RawMessage(body)})
}
