package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

type attemptView struct {
	ID                string                `json:"id"`
	Kind              domain.AttemptKind    `json:"kind"`
	Series            int                   `json:"series"`
	Number            int                   `json:"number,omitempty"`
	StartedAt         string                `json:"started_at"`
	DurationMs        int64                 `json:"duration_ms"`
	StatusCode        int                   `json:"status_code,omitempty"`
	ErrorClass        string                `json:"error_class,omitempty"`
	Error             string                `json:"error,omitempty"`
	Outcome           domain.AttemptOutcome `json:"outcome"`
	ResponseBody      string                `json:"response_body,omitempty"`
	ResponseTruncated bool                  `json:"response_truncated,omitempty"`
}

type deliveryView struct {
	ID            string            `json:"id"`
	EventID       string            `json:"event_id"`
	EndpointID    string            `json:"endpoint_id"`
	Event         string            `json:"event"`
	Status        domain.Status     `json:"status"`
	AttemptCount  int               `json:"attempt_count"`
	Series        int               `json:"series"`
	NextAttemptAt string            `json:"next_attempt_at,omitempty"`
	LastAttemptAt string            `json:"last_attempt_at,omitempty"`
	LastStatus    int               `json:"last_status,omitempty"`
	LastError     string            `json:"last_error,omitempty"`
	FailReason    domain.FailReason `json:"fail_reason,omitempty"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at,omitempty"`
	DeliveredAt   string            `json:"delivered_at,omitempty"`
	FailedAt      string            `json:"failed_at,omitempty"`
	// Attempts is set (maybe empty) for one delivery and left out of lists.
	Attempts *[]attemptView `json:"attempts,omitempty"`
	// One delivery's view: its attempts are the newest, newest first. An
	// event's view: each delivery's newest, oldest first. Either way the
	// cursor, when set, pages through the older ones (GET
	// /v1/deliveries/{id}/attempts?cursor=).
	AttemptsOrder      string `json:"attempts_order,omitempty"`
	AttemptsNextCursor string `json:"attempts_next_cursor,omitempty"`
}

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
	views := viewAttempts(attempts)
	v.Attempts = &views
	return v
}

func viewAttempts(attempts []domain.Attempt) []attemptView {
	views := make([]attemptView, 0, len(attempts))
	for _, a := range attempts {
		views = append(views, attemptView{
			ID: a.ID, Kind: a.Kind, Series: a.Series, Number: a.Number, StartedAt: rfc3339(a.StartedAt),
			DurationMs: a.DurationMs, StatusCode: a.StatusCode, ErrorClass: a.ErrorClass, Error: a.Error,
			Outcome: a.Outcome, ResponseBody: a.ResponseBody, ResponseTruncated: a.ResponseTruncated,
		})
	}
	return views
}

// deliveryAttemptsShown is how many attempts GET /v1/deliveries/{id} shows
// (the newest); GET /v1/deliveries/{id}/attempts pages through the rest, at
// most maxAttemptsPage at a time. An attempt is at most ~7 KB of JSON (a
// 1 KiB response excerpt, each byte escaped to at most 6, and escaped once
// more in Lambda's response), so a page stays under 1 MB, far inside
// Lambda's 6 MB response limit, however many attempts a delivery has.
const (
	deliveryAttemptsShown = 20
	maxAttemptsPage       = 100
)

// loadDelivery reads the account's delivery named in the path.
func (a *API) loadDelivery(ctx context.Context, req *request) (domain.Delivery, response, bool) {
	id := req.params[0]
	if !domain.HasPrefix(id, "dlv") {
		return domain.Delivery{}, notFound("delivery"), true
	}
	d, err := a.Store.GetDelivery(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && d.AccountID != req.account {
		return d, notFound("delivery"), true
	}
	if err != nil {
		return d, a.internal(ctx, err), true
	}
	return d, response{}, false
}

// getDelivery: the delivery with its newest attempts, newest first, and the
// cursor of the older ones (GET /v1/deliveries/{id}/attempts?cursor=).
func (a *API) getDelivery(ctx context.Context, req *request) response {
	id := req.params[0]
	if !domain.HasPrefix(id, "dlv") {
		return notFound("delivery")
	}
	d, page, err := a.Store.DeliveryWithNewestAttempts(ctx, id, deliveryAttemptsShown)
	if errors.Is(err, store.ErrNotFound) || err == nil && d.AccountID != req.account {
		return notFound("delivery")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	v := viewDelivery(d, append([]domain.Attempt{}, page.Attempts...))
	v.AttemptsOrder = "newest_first"
	if page.After != "" {
		v.AttemptsNextCursor = encodeCursor(page.After)
	}
	return ok(http.StatusOK, v)
}

// listAttempts: GET /v1/deliveries/{id}/attempts?limit=&cursor=, the
// delivery's attempt log newest first, a page at a time.
func (a *API) listAttempts(ctx context.Context, req *request) response {
	d, r, failed := a.loadDelivery(ctx, req)
	if failed {
		return r
	}
	limit, before, r, failed := pageQuery(req, "att")
	if failed {
		return r
	}
	limit = min(limit, maxAttemptsPage)
	page, err := a.Store.DeliveryAttempts(ctx, d, limit, before)
	if err != nil {
		return a.internal(ctx, err)
	}
	out := list{Data: viewAttempts(page.Attempts)}
	if page.After != "" {
		out.NextCursor = encodeCursor(page.After)
	}
	return ok(http.StatusOK, out)
}

// A list's cursor is the last id of the page, opaque to callers.
func encodeCursor(after string) string { return base64.RawURLEncoding.EncodeToString([]byte(after)) }

// decodeCursor reads a cursor of a list of ids starting prefix ("dlv").
func decodeCursor(c, prefix string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !domain.HasPrefix(string(b), prefix) {
		return "", false
	}
	return string(b), true
}

// pageQuery reads a list's limit (1 to 100, default 20) and cursor (of ids
// starting prefix), each at most once.
func pageQuery(req *request, prefix string) (limit int, after string, r response, failed bool) {
	for name, vs := range req.MultiValueQueryStringParameters {
		if len(vs) > 1 {
			return 0, "", fail(http.StatusBadRequest, "invalid_query", name+" is given more than once"), true
		}
	}
	q := req.QueryStringParameters
	limit = 20
	if v, sent := q["limit"]; sent {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return 0, "", fail(http.StatusBadRequest, "invalid_limit", "limit must be 1 to 100"), true
		}
		limit = n
	}
	if c := q["cursor"]; c != "" {
		var ok bool
		if after, ok = decodeCursor(c, prefix); !ok {
			return 0, "", fail(http.StatusBadRequest, "invalid_cursor", "cursor is not one this API gave"), true
		}
	}
	return limit, after, response{}, false
}

func (a *API) listDeliveries(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	limit, after, r, failed := pageQuery(req, "dlv")
	if failed {
		return r
	}
	s, sent := req.QueryStringParameters["status"]
	status := domain.Status(s)
	if sent && status != domain.StatusPending && status != domain.StatusDelivered && status != domain.StatusFailed {
		return fail(http.StatusBadRequest, "invalid_status", "status must be pending, delivered or failed")
	}
	page, err := a.Store.ListEndpointDeliveries(ctx, ep.ID, status, int32(limit), after)
	if err != nil {
		return a.internal(ctx, err)
	}
	views := make([]deliveryView, 0, len(page.Deliveries))
	for _, d := range page.Deliveries {
		views = append(views, viewDelivery(d, nil))
	}
	out := list{Data: views}
	if page.After != "" {
		out.NextCursor = encodeCursor(page.After)
	}
	return ok(http.StatusOK, out)
}
