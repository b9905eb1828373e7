package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/gifq/webhooks/shared/stats"
)

// StatsReader reads hourly counters (store.StatsHours).
type StatsReader interface {
	StatsHours(ctx context.Context, account, endpoint string, from, to time.Time) ([]stats.Hour, error)
}

// getAccountStats is GET /v1/stats: the account's deliveries over a window.
func (a *API) getAccountStats(ctx context.Context, req *request) response {
	return a.statsOf(ctx, req, "")
}

// getEndpointStats is GET /v1/endpoints/{id}/stats.
func (a *API) getEndpointStats(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	return a.statsOf(ctx, req, ep.ID)
}

// statsOf reads at most a week of hourly items (one query) and sums them.
func (a *API) statsOf(ctx context.Context, req *request, endpoint string) response {
	w, given := req.QueryStringParameters["window"]
	if !given {
		w = "day" // an empty window= is refused with the others not in the enum
	}
	from, to, err := stats.Span(w, a.Now())
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_window", err.Error())
	}
	hours, err := a.Store.StatsHours(ctx, req.account, endpoint, from, to)
	if err != nil {
		return a.internal(ctx, err)
	}
	return ok(http.StatusOK, stats.Summarize(w, from, to, hours))
}
