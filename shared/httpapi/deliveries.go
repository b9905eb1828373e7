package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

type attemptView struct {
	ID                string `json:"id"`
	Kind              string `json:"kind"`
	Series            int    `json:"series"`
	Number            int    `json:"number,omitempty"`
	StartedAt         string `json:"started_at"`
	DurationMs        int64  `json:"duration_ms"`
	StatusCode        int    `json:"status_code,omitempty"`
	ErrorClass        string `json:"error_class,omitempty"`
	Error             string `json:"error,omitempty"`
	Outcome           string `json:"outcome"`
	ResponseBody      string `json:"response_body,omitempty"`
	ResponseTruncated bool   `json:"response_truncated,omitempty"`
}

type deliveryView struct {
	ID            string `json:"id"`
	EventID       string `json:"event_id"`
	EndpointID    string `json:"endpoint_id"`
	Event         string `json:"event"`
	Status        string `json:"status"`
	AttemptCount  int    `json:"attempt_count"`
	Series        int    `json:"series"`
	NextAttemptAt string `json:"next_attempt_at,omitempty"`
	LastAttemptAt string `json:"last_attempt_at,omitempty"`
	LastStatus    int    `json:"last_status,omitempty"`
	LastError     string `json:"last_error,omitempty"`
	FailReason    string `json:"fail_reason,omitempty"`
	CreatedAt     string `json:"created_at"`
	UpdatedAt     string `json:"updated_at,omitempty"`
	DeliveredAt   string `json:"delivered_at,omitempty"`
	FailedAt      string `json:"failed_at,omitempty"`
	// Attempts is set (maybe empty) for one delivery and left out of lists.
	Attempts *[]attemptView `json:"attempts,omitempty"`
	// AttemptsOmitted counts older attempts left out of an event's view
	// (GET /v1/deliveries/{id} has them all).
	AttemptsOmitted int `json:"attempts_omitted,omitempty"`
}

// eventAttemptsShown bounds GET /v1/events/{id}: the newest attempts of each
// of its (at most 16) deliveries. Each attempt is at most ~6 KB of JSON (a
// 1 KiB response, escaped), so the answer stays under 16 x 10 x 6 KB + the
// 256 KiB body, well inside Lambda's 6 MB response limit, however often the
// deliveries were recovered or resent.
const eventAttemptsShown = 10

func viewDelivery(d domain.Delivery, attempts []domain.Attempt) deliveryView {
	v := deliveryView{
		ID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, Event: d.EventType, Status: d.Status,
		AttemptCount: d.Attempts, Series: d.Series, LastAttemptAt: rfc3339(d.LastAttemptAt),
		LastStatus: d.LastStatus, LastError: d.LastError, FailReason: d.FailReason,
		CreatedAt: rfc3339(d.CreatedAt), UpdatedAt: rfc3339(d.UpdatedAt),
		DeliveredAt: rfc3339(d.DeliveredAt), FailedAt: rfc3339(d.FailedAt),
	}
	if d.Status == domain.StatusPending {
		v.NextAttemptAt = rfc3339(d.NextAttemptAt)
	}
	if attempts == nil {
		return v
	}
	views := make([]attemptView, 0, len(attempts))
	for _, a := range attempts {
		views = append(views, attemptView{
			ID: a.ID, Kind: a.Kind, Series: a.Series, Number: a.Number, StartedAt: rfc3339(a.StartedAt),
			DurationMs: a.DurationMs, StatusCode: a.StatusCode, ErrorClass: a.ErrorClass, Error: a.Error,
			Outcome: a.Outcome, ResponseBody: a.ResponseBody, ResponseTruncated: a.ResponseTruncated,
		})
	}
	v.Attempts = &views
	return v
}

// loadDelivery reads the account's delivery named in the path, with its attempts.
func (a *API) loadDelivery(ctx context.Context, req *request) (domain.Delivery, []domain.Attempt, response, bool) {
	id := req.params[0]
	if !domain.HasPrefix(id, "dlv") {
		return domain.Delivery{}, nil, notFound("delivery"), true
	}
	d, attempts, err := a.Store.DeliveryWithAttempts(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && d.AccountID != req.account {
		return d, nil, notFound("delivery"), true
	}
	if err != nil {
		return d, nil, a.internal(ctx, err), true
	}
	if attempts == nil {
		attempts = []domain.Attempt{}
	}
	return d, attempts, response{}, false
}

func (a *API) getDelivery(ctx context.Context, req *request) response {
	d, attempts, r, failed := a.loadDelivery(ctx, req)
	if failed {
		return r
	}
	return ok(http.StatusOK, viewDelivery(d, attempts))
}

type eventView struct {
	ID             string          `json:"id"`
	Event          string          `json:"event"`
	ReceivedAt     string          `json:"received_at"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Body           json.RawMessage `json:"body"`
	Deliveries     []deliveryView  `json:"deliveries"`
}

func (a *API) getEvent(ctx context.Context, req *request) response {
	id := req.params[0]
	if !domain.HasPrefix(id, "evt") {
		return notFound("event")
	}
	ev, err := a.Store.GetEvent(ctx, id)
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
			d, attempts, err := a.Store.DeliveryWithAttempts(ctx, did)
			if err == nil {
				omitted := max(len(attempts)-eventAttemptsShown, 0)
				views[i] = viewDelivery(d, append([]domain.Attempt{}, attempts[omitted:]...))
				views[i].AttemptsOmitted = omitted
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	out := eventView{ID: ev.ID, Event: ev.Type, ReceivedAt: rfc3339(ev.ReceivedAt), IdempotencyKey: ev.IdempotencyKey,
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

// resendMessage is the queue message of a manual attempt of d.
func resendMessage(d domain.Delivery) queue.Message {
	m := queue.For(d)
	m.Kind = queue.KindResend
	return m
}
