package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/store"
)

// TestEventType names the events POST /v1/endpoints/{id}/test-event sends;
// receivers can recognise and ignore them.
const TestEventType = "webhook.test"

// testEvent sends one signed test event to the endpoint (and only to it),
// whatever its filter: 202 with the event and its delivery, as POST /v1/events.
func (a *API) testEvent(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	if ep.Disabled {
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint before sending it a test event")
	}
	if ep.DestinationOf() == domain.DestinationPolling {
		return fail(http.StatusConflict, "polling_endpoint", "a polling endpoint is read, not delivered to: post an event and poll it")
	}
	var in struct {
		EventType *string `json:"event_type"`
	}
	if len(req.body) > 0 {
		if r, failed := decodeJSON(req.body, &in); failed {
			return r
		}
	}
	body, r, failed := a.testBody(ctx, req.account, ep.ID, in.EventType)
	if failed {
		return r
	}
	// A test event is an event: it counts against the key's ingest limit
	// (and books a slot of the account's rate like any other).
	gated, r, admitted := a.gated(ctx, req, 1)
	if !admitted {
		return r
	}
	res, err := a.Ingest.IngestTo(gated, req.account, ep.ID, body)
	if r, limited := limitAnswer(err); limited {
		return r
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("endpoint")
	case errors.Is(err, ingest.ErrEndpointDisabled):
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint before sending it a test event")
	case err != nil:
		return a.internal(ctx, err)
	}
	out := acceptedEvent{ID: res.Event.ID, Event: res.Event.Type, ReceivedAt: rfc3339(res.Event.ReceivedAt), Deliveries: []acceptedDelivery{}}
	for _, d := range res.Deliveries {
		out.Deliveries = append(out.Deliveries, acceptedDelivery{ID: d.ID, EndpointID: d.EndpointID, Status: d.Status})
	}
	return ok(http.StatusAccepted, out)
}

// testBody is what a test event carries: the catalog's example of
// eventType when it has one (so a receiver tests what it will really get),
// else the webhook.test body.
func (a *API) testBody(ctx context.Context, account, endpointID string, eventType *string) ([]byte, response, bool) {
	if eventType != nil {
		if !eventTypeRE.MatchString(*eventType) {
			return nil, fail(http.StatusUnprocessableEntity, "invalid_event_type", "event_type must be an event type (1-200 characters of letters, digits and . _ : / -)"), true
		}
		et, err := a.Store.GetEventType(ctx, account, *eventType)
		switch {
		case err == nil && et.Example != "":
			if t, err := ingest.Validate([]byte(et.Example)); err == nil && t == *eventType {
				return []byte(et.Example), response{}, false
			}
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, a.internal(ctx, err), true
		}
	}
	body, err := json.Marshal(map[string]string{"event": TestEventType, "endpoint_id": endpointID, "sent_at": rfc3339(domain.Millis(a.Now()))})
	if err != nil {
		return nil, a.internal(ctx, err), true
	}
	return body, response{}, false
}
