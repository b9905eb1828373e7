package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/store"
)

type acceptedDelivery struct {
	ID         string `json:"id"`
	EndpointID string `json:"endpoint_id"`
	Status     string `json:"status"`
}

type acceptedEvent struct {
	ID         string             `json:"id"`
	Event      string             `json:"event"`
	ReceivedAt string             `json:"received_at"`
	Deliveries []acceptedDelivery `json:"deliveries"`
}

func (a *API) postEvent(ctx context.Context, req *request) response {
	key, sent := lookupHeader(req.APIGatewayProxyRequest, "Idempotency-Key")
	if sent && key == "" {
		return a.ingestError(ctx, ingest.ErrBadIdempotencyKey) // an empty key is a bug, not "no key"
	}
	gate, err := a.KeyLimits.admit(ctx, req, 1) // the key's ingest limit (ingestlimit.go)
	if r, limited := limitAnswer(err); limited {
		return r
	}
	res, err := a.Ingest.Ingest(ingest.WithGate(ctx, gate), req.account, req.body, key)
	if err != nil {
		return a.ingestError(ctx, err)
	}
	r := ok(http.StatusAccepted, viewAccepted(res))
	if res.Replayed {
		r.headers = map[string]string{"Idempotent-Replayed": "true"}
	}
	return r
}

func viewAccepted(res ingest.Result) acceptedEvent {
	out := acceptedEvent{ID: res.Event.ID, Event: res.Event.Type, ReceivedAt: rfc3339(res.Event.ReceivedAt), Deliveries: []acceptedDelivery{}}
	for _, d := range res.Deliveries {
		out.Deliveries = append(out.Deliveries, acceptedDelivery{ID: d.ID, EndpointID: d.EndpointID, Status: d.Status})
	}
	return out
}

// ingestError is the answer to an event that was not accepted: the same for
// POST /v1/events and for one event of a batch.
func (a *API) ingestError(ctx context.Context, err error) response {
	if r, limited := limitAnswer(err); limited { // the key's ingest limit, checked inside ingest
		return r
	}
	switch {
	case errors.Is(err, ingest.ErrTooLarge):
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", err.Error())
	case errors.Is(err, ingest.ErrInvalidJSON):
		return fail(http.StatusBadRequest, "invalid_json", err.Error())
	case errors.Is(err, ingest.ErrNoEventType), errors.Is(err, ingest.ErrBadEventType), errors.Is(err, ingest.ErrDuplicateEvent):
		return fail(http.StatusUnprocessableEntity, "invalid_event", err.Error())
	case errors.Is(err, ingest.ErrBadIdempotencyKey):
		return fail(http.StatusBadRequest, "invalid_idempotency_key", err.Error())
	case errors.Is(err, store.ErrIdempotencyMismatch):
		return fail(http.StatusConflict, "idempotency_key_reused", "this Idempotency-Key was used in the last 24 hours with a different body")
	}
	return a.internal(ctx, err)
}
