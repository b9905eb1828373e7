package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/store"
)

type acceptedDelivery struct {
	ID         string        `json:"id"`
	EndpointID string        `json:"endpoint_id"`
	Status     domain.Status `json:"status"`
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
	okey, keyed := lookupHeader(req.APIGatewayProxyRequest, "Ordering-Key")
	if keyed && okey == "" {
		return a.ingestError(ctx, ingest.ErrBadOrderingKey)
	}
	gated, r, admitted := a.gated(ctx, req, 1) // the key's ingest limit (ingestlimit.go)
	if !admitted {
		return r
	}
	res, err := a.Ingest.IngestKeyed(gated, req.account, req.body, key, okey)
	if err != nil {
		return a.ingestError(ctx, err)
	}
	r = ok(http.StatusAccepted, viewAccepted(res))
	// The one info line of an accepted event (ingest logs it at debug level).
	r.logged = []any{"event_id", res.Event.ID, "account_id", req.account, "event_type", res.Event.Type,
		"deliveries", len(res.Deliveries)}
	if res.Replayed {
		r.headers = map[string]string{"Idempotent-Replayed": "true"}
		r.logged = append(r.logged, "replayed", true)
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
	var schemaErr *ingest.SchemaError
	switch {
	case errors.Is(err, ingest.ErrTooLarge):
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", err.Error())
	case errors.Is(err, ingest.ErrInvalidJSON):
		return fail(http.StatusBadRequest, "invalid_json", err.Error())
	case errors.Is(err, ingest.ErrNoEventType), errors.Is(err, ingest.ErrBadEventType), errors.Is(err, ingest.ErrDuplicateEvent),
		errors.Is(err, ingest.ErrSystemEventType):
		return fail(http.StatusUnprocessableEntity, "invalid_event", err.Error())
	case errors.Is(err, ingest.ErrBadOrderingKey):
		return fail(http.StatusUnprocessableEntity, "invalid_ordering_key", err.Error())
	case errors.Is(err, ingest.ErrBadIdempotencyKey):
		return fail(http.StatusBadRequest, "invalid_idempotency_key", err.Error())
	case errors.As(err, &schemaErr):
		return failAt(http.StatusUnprocessableEntity, "schema_mismatch", err.Error(), schemaErr.Problem.Pointer)
	case errors.Is(err, store.ErrIdempotencyMismatch):
		return fail(http.StatusConflict, "idempotency_key_reused", "this Idempotency-Key was used in the last 24 hours with a different body")
	case errors.Is(err, store.ErrKeyInProgress):
		return fail(http.StatusConflict, "idempotency_key_in_progress", "a request with this Idempotency-Key is still being written: retry in a few seconds")
	}
	return a.internal(ctx, err)
}

type eventView struct {
	ID             string          `json:"id"`
	Event          string          `json:"event"`
	ReceivedAt     string          `json:"received_at"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	OrderingKey    string          `json:"ordering_key,omitempty"`
	Sequence       int64           `json:"sequence,omitempty"`
	Body           json.RawMessage `json:"body"`
	Deliveries     []deliveryView  `json:"deliveries"`
}

// eventAttemptsShown bounds GET /v1/events/{id}: the newest attempts of each
// of its (at most 16) deliveries. Each attempt is at most ~6 KB of JSON (a
// 1 KiB response, escaped), so the answer stays under 16 x 10 x 6 KB + the
// 256 KiB body, well inside Lambda's 6 MB response limit, however often the
// deliveries were recovered or resent.
const eventAttemptsShown = 10

func (a *API) getEvent(ctx context.Context, req *request) response {
	id := req.params[0]
	if !domain.HasPrefix(id, "evt") {
		return notFound("event")
	}
	ev, err := a.Store.GetEvent(ctx, req.account, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && ev.AccountID != req.account {
		return notFound("event")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	views := make([]deliveryView, len(ev.DeliveryIDs))
	errs := make([]error, len(ev.DeliveryIDs))
	var wg sync.WaitGroup
	for i, did := range ev.DeliveryIDs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One query per delivery, however long its log: the newest
			// attempts shown and one more to tell whether older ones follow.
			d, page, err := a.Store.DeliveryWithNewestAttempts(ctx, did, eventAttemptsShown)
			if err == nil {
				shown := append([]domain.Attempt{}, page.Attempts...)
				slices.Reverse(shown) // oldest first, as the event's view has always shown them
				views[i] = viewDelivery(d, shown)
				if page.After != "" {
					views[i].AttemptsNextCursor = encodeCursor(page.After)
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	out := eventView{ID: ev.ID, Event: ev.Type, ReceivedAt: rfc3339(ev.ReceivedAt), IdempotencyKey: ev.IdempotencyKey, OrderingKey: ev.OrderingKey, Sequence: ev.Seq,
		Body: json.RawMessage(ev.Body), Deliveries: []deliveryView{}}
	for i, err := range errs {
		switch {
		case err == nil:
			out.Deliveries = append(out.Deliveries, views[i])
		case !errors.Is(err, store.ErrNotFound):
			return a.internal(ctx, err)
		}
	}
	return ok(http.StatusOK, out)
}
