package httpapi

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/delivery"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// How much one request may do; the caller repeats for the rest.
const (
	maxRecoverPerCall = 1000
	maxStopPerCall    = 1000
	maxRotationGrace  = 7 * 24 * time.Hour
)

func (a *API) patchEndpoint(ctx context.Context, req *request) response {
	if _, r, failed := a.loadEndpoint(ctx, req); failed {
		return r
	}
	var in struct {
		URL         *string   `json:"url"`
		EventTypes  *[]string `json:"event_types"`
		Description *string   `json:"description"`
		Disabled    *bool     `json:"disabled"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	if in.URL != nil {
		url, r, failed := a.checkURL(ctx, *in.URL)
		if failed {
			return r
		}
		in.URL = &url
	}
	if in.EventTypes != nil {
		if r, failed := checkEventTypes(*in.EventTypes); failed {
			return r
		}
	}
	if in.Description != nil && descriptionTooLong(*in.Description) {
		return fail(http.StatusUnprocessableEntity, "invalid_description", fmt.Sprintf("description is longer than %d characters", domain.MaxDescriptionLength))
	}
	ep, err := a.Store.UpdateEndpoint(ctx, req.account, req.params[0], store.EndpointPatch{
		URL: in.URL, EventTypes: in.EventTypes, Description: in.Description, Disabled: in.Disabled})
	if errors.Is(err, store.ErrNotFound) {
		return notFound("endpoint")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	if in.Disabled != nil && *in.Disabled {
		a.stopPending(ctx, ep.ID, domain.ReasonEndpointDisabled)
	}
	return ok(http.StatusOK, viewEndpoint(ep))
}

func (a *API) deleteEndpoint(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	switch err := a.Store.DeleteEndpoint(ctx, req.account, ep.ID); {
	case errors.Is(err, store.ErrNotFound):
		return notFound("endpoint")
	case err != nil:
		return a.internal(ctx, err)
	}
	a.stopPending(ctx, ep.ID, domain.ReasonEndpointDeleted)
	return response{status: http.StatusNoContent}
}

// stopPending fails an endpoint's pending deliveries at once with the
// reason, so the log shows why they stopped; their DLQ messages follow from
// the deliver function (their queued message) or the sweeper. An attempt in
// flight right now finishes, and its retry finds the endpoint gone. The
// worker does the same for anything past this call's bound.
func (a *API) stopPending(ctx context.Context, endpointID, reason string) {
	after, stopped := "", 0
	for stopped < maxStopPerCall {
		page, err := a.Store.ListEndpointDeliveries(ctx, endpointID, domain.StatusPending, 100, after)
		if err != nil {
			a.Log.Warn("stopping pending deliveries; the worker will stop the rest", "endpoint_id", endpointID, "error", err)
			return
		}
		var mu sync.Mutex
		eachConcurrently(len(page.Deliveries), func(i int) {
			if _, err := a.Store.FailWithoutAttempt(ctx, page.Deliveries[i], reason, false); err == nil {
				mu.Lock()
				stopped++
				mu.Unlock()
			}
		})
		if after = page.After; after == "" {
			break
		}
	}
	a.Log.Info("pending deliveries stopped", "endpoint_id", endpointID, "reason", reason, "count", stopped)
}

func (a *API) rotateSecret(ctx context.Context, req *request) response {
	if _, r, failed := a.loadEndpoint(ctx, req); failed {
		return r
	}
	var in struct {
		// How long the previous secret keeps signing (default 24 h, at most
		// 7 days). A float: JSON Schema's integer includes 100.0.
		ExpireAfterSeconds *float64 `json:"expire_previous_after_seconds"`
	}
	if len(req.body) > 0 {
		if r, failed := decodeJSON(req.body, &in); failed {
			return r
		}
	}
	grace := a.RotationGrace
	if n := in.ExpireAfterSeconds; n != nil {
		if !wholeNumber(*n) || *n < 0 || *n > maxRotationGrace.Seconds() {
			return fail(http.StatusUnprocessableEntity, "invalid_grace", "expire_previous_after_seconds must be a whole number from 0 to 604800")
		}
		grace = time.Duration(*n) * time.Second
	}
	secret := signing.NewSecret()
	ep, err := a.Store.RotateSecret(ctx, req.account, req.params[0], secret, grace.Milliseconds())
	if errors.Is(err, store.ErrNotFound) {
		return notFound("endpoint")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	v := struct {
		endpointView
		PreviousSecretExpiresAt string `json:"previous_secret_expires_at,omitempty"`
	}{endpointView: viewEndpoint(ep)}
	v.Secret = secret
	if len(ep.Secrets) > 1 {
		v.PreviousSecretExpiresAt = rfc3339(ep.Secrets[1].ExpiresAt)
	}
	return ok(http.StatusOK, v)
}

// The delivery log's cursor is the last delivery id of the page, opaque to callers.
func encodeCursor(after string) string { return base64.RawURLEncoding.EncodeToString([]byte(after)) }

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !domain.HasPrefix(string(b), "dlv") {
		return "", false
	}
	return string(b), true
}

func (a *API) listDeliveries(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	for name, vs := range req.MultiValueQueryStringParameters {
		if len(vs) > 1 {
			return fail(http.StatusBadRequest, "invalid_query", name+" is given more than once")
		}
	}
	q := req.QueryStringParameters
	status, sent := q["status"]
	if sent && status != domain.StatusPending && status != domain.StatusDelivered && status != domain.StatusFailed {
		return fail(http.StatusBadRequest, "invalid_status", "status must be pending, delivered or failed")
	}
	limit := 20
	if v, sent := q["limit"]; sent {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return fail(http.StatusBadRequest, "invalid_limit", "limit must be 1 to 100")
		}
		limit = n
	}
	after := ""
	if c := q["cursor"]; c != "" {
		var ok bool
		if after, ok = decodeCursor(c); !ok {
			return fail(http.StatusBadRequest, "invalid_cursor", "cursor is not one this API gave")
		}
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

func (a *API) recoverEndpoint(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	if ep.Disabled {
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint (PATCH disabled=false) before recovering its deliveries")
	}
	var in struct {
		Since *time.Time `json:"since"`
		Until *time.Time `json:"until"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	now := a.Now()
	until := now
	if in.Until != nil {
		until = *in.Until
	}
	if in.Since == nil || !in.Since.Before(until) {
		return fail(http.StatusUnprocessableEntity, "invalid_window", "since (RFC 3339) is required and must be before until")
	}
	// Nothing older than the retention or newer than now exists: clamp, so
	// the year 0347 is the start of the retention (ids do not encode times
	// before 1970) and the query's bounds stay in order.
	lo := max(in.Since.UnixMilli(), now.Add(-domain.DefaultRetention).UnixMilli())
	hi := min(until.UnixMilli(), now.UnixMilli())
	if lo > hi {
		return ok(http.StatusAccepted, map[string]any{"recovered": 0, "more": false})
	}
	ids, err := a.Store.FailedDeliveryIDs(ctx, ep.ID, lo, hi, maxRecoverPerCall+1)
	if err != nil {
		return a.internal(ctx, err)
	}
	more := len(ids) > maxRecoverPerCall
	ids = ids[:min(len(ids), maxRecoverPerCall)]
	var recovered, skipped int
	var firstErr error
	var mu sync.Mutex
	eachConcurrently(len(ids), func(i int) {
		_, err := delivery.Restart(ctx, a.Store, a.Queue, ids[i], ep.ID, -1)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil, errors.Is(err, delivery.ErrNotQueued): // queued by the sweeper if the send was lost
			recovered++
		case errors.Is(err, store.ErrConflict): // restarted meanwhile
			skipped++
		default:
			firstErr = err
		}
	})
	if firstErr != nil && recovered == 0 {
		return a.internal(ctx, firstErr)
	}
	a.Log.Info("deliveries recovered", "endpoint_id", ep.ID, "recovered", recovered, "skipped", skipped, "more", more)
	return ok(http.StatusAccepted, map[string]any{"recovered": recovered, "more": more})
}

func (a *API) resend(ctx context.Context, req *request) response {
	d, _, r, failed := a.loadDelivery(ctx, req)
	if failed {
		return r
	}
	now := a.Now()
	if now.Sub(time.UnixMilli(d.CreatedAt)) > domain.DefaultRetention {
		return fail(http.StatusConflict, "too_old", "deliveries can be resent for 30 days after the event")
	}
	ep, err := a.Store.GetEndpoint(ctx, req.account, d.EndpointID)
	if errors.Is(err, store.ErrNotFound) {
		return fail(http.StatusConflict, "endpoint_deleted", "the delivery's endpoint was deleted")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	if ep.Disabled {
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint before resending to it")
	}
	acct, err := a.Store.GetAccount(ctx, req.account)
	if err != nil {
		return a.internal(ctx, err)
	}
	rate := acct.RatePerSecond
	if rate <= 0 {
		rate = a.DefaultRate
	}
	msg := resendMessage(d)
	msg.AttemptID = domain.NewID("att")
	delay := time.Duration(0)
	if res, err := a.Limiter.Reserve(ctx, req.account, 1, rate); err == nil {
		msg.SlotAt = domain.Millis(res.First)
		delay = res.First.Sub(now).Truncate(time.Second)
	}
	if err := a.Queue.Send(ctx, msg, delay); err != nil {
		return a.internal(ctx, err)
	}
	return ok(http.StatusAccepted, map[string]string{"delivery_id": d.ID, "attempt_id": msg.AttemptID, "status": "queued"})
}

// eachConcurrently calls f(i) for i in [0, n), eight at a time: bulk
// operations stay well inside the api function's timeout.
func eachConcurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}
