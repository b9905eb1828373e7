package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// endpointView is an endpoint as the API shows it. The secret appears only
// in the answers that create it (registration and rotation).
type endpointView struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	EventTypes     []string `json:"event_types"`
	Disabled       bool     `json:"disabled"`
	DisabledReason string   `json:"disabled_reason,omitempty"`
	FailingSince   string   `json:"failing_since,omitempty"`
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
	Secret         string   `json:"secret,omitempty"`
}

func viewEndpoint(ep domain.Endpoint) endpointView {
	types := ep.EventTypes
	if types == nil {
		types = []string{}
	}
	return endpointView{
		ID: ep.ID, URL: ep.URL, Description: ep.Description, EventTypes: types, Disabled: ep.Disabled,
		DisabledReason: ep.DisabledReason, FailingSince: rfc3339(ep.FailingSince),
		CreatedAt: rfc3339(ep.CreatedAt), UpdatedAt: rfc3339(ep.UpdatedAt),
	}
}

var eventFilterRE = regexp.MustCompile(`^(\*|[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}(\.\*)?)$`)

// checkEventTypes validates an endpoint's filter: event names, "prefix.*" or "*".
func checkEventTypes(types []string) (response, bool) {
	if len(types) > domain.MaxEventTypesFilter {
		return fail(http.StatusUnprocessableEntity, "invalid_event_types", fmt.Sprintf("at most %d event types", domain.MaxEventTypesFilter)), true
	}
	for _, t := range types {
		if !eventFilterRE.MatchString(t) {
			return fail(http.StatusUnprocessableEntity, "invalid_event_types", fmt.Sprintf("%q is not an event type, a prefix like payout.* or *", t)), true
		}
	}
	return response{}, false
}

// descriptionTooLong counts characters, as the message and the OpenAPI
// document's maxLength do (bytes refused 200 Chinese characters).
func descriptionTooLong(d string) bool {
	return utf8.RuneCountInString(d) > domain.MaxDescriptionLength
}

func (a *API) checkURL(ctx context.Context, raw string) (string, response, bool) {
	u, err := a.Policy.CheckURL(ctx, strings.TrimSpace(raw), a.Resolver)
	var ue *netguard.URLError
	if errors.As(err, &ue) {
		return "", fail(http.StatusUnprocessableEntity, "invalid_url", ue.Reason), true
	}
	if err != nil {
		return "", a.internal(ctx, err), true
	}
	return u.String(), response{}, false
}

func (a *API) createEndpoint(ctx context.Context, req *request) response {
	var in struct {
		URL         string   `json:"url"`
		EventTypes  []string `json:"event_types"`
		Description string   `json:"description"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	if in.URL == "" {
		return fail(http.StatusUnprocessableEntity, "invalid_url", "url is required")
	}
	url, r, failed := a.checkURL(ctx, in.URL)
	if failed {
		return r
	}
	if r, failed := checkEventTypes(in.EventTypes); failed {
		return r
	}
	if descriptionTooLong(in.Description) {
		return fail(http.StatusUnprocessableEntity, "invalid_description", fmt.Sprintf("description is longer than %d characters", domain.MaxDescriptionLength))
	}
	now := domain.Millis(a.Now())
	ep := domain.Endpoint{
		ID: domain.NewID("ep"), AccountID: req.account, URL: url, Description: in.Description, EventTypes: in.EventTypes,
		Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: now}}, CreatedAt: now, UpdatedAt: now,
	}
	switch err := a.Store.CreateEndpoint(ctx, ep); {
	case errors.Is(err, store.ErrLimit):
		return fail(http.StatusConflict, "endpoint_limit", fmt.Sprintf("an account may register at most %d endpoints", domain.MaxEndpoints))
	case err != nil:
		return a.internal(ctx, err)
	}
	v := viewEndpoint(ep)
	v.Secret = ep.Secrets[0].Value
	return ok(http.StatusCreated, v)
}

func (a *API) listEndpoints(ctx context.Context, req *request) response {
	eps, err := a.Store.ListEndpoints(ctx, req.account)
	if err != nil {
		return a.internal(ctx, err)
	}
	views := make([]endpointView, 0, len(eps))
	for _, ep := range eps {
		views = append(views, viewEndpoint(ep))
	}
	return ok(http.StatusOK, list{Data: views})
}

// list is the shape of every list answer.
type list struct {
	Data       any    `json:"data"`
	NextCursor string `json:"next_cursor"`
}

// loadEndpoint reads the account's endpoint named in the path; another
// account's endpoint is as unknown as one that never existed.
func (a *API) loadEndpoint(ctx context.Context, req *request) (domain.Endpoint, response, bool) {
	id := req.params[0]
	if !domain.HasPrefix(id, "ep") {
		return domain.Endpoint{}, notFound("endpoint"), true
	}
	ep, err := a.Store.GetEndpoint(ctx, req.account, id)
	if errors.Is(err, store.ErrNotFound) {
		return ep, notFound("endpoint"), true
	}
	if err != nil {
		return ep, a.internal(ctx, err), true
	}
	return ep, response{}, false
}

func notFound(what string) response {
	return fail(http.StatusNotFound, "not_found", "no such "+what)
}

func (a *API) getEndpoint(ctx context.Context, req *request) response {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	return ok(http.StatusOK, viewEndpoint(ep))
}
