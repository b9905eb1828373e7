package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/endpointcfg"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// endpointView is an endpoint as the API shows it. The secret appears only
// in the answers that create it (registration and rotation).
type endpointView struct {
	ID             string           `json:"id"`
	URL            string           `json:"url"`
	Description    string           `json:"description"`
	EventTypes     []string         `json:"event_types"`
	Disabled       bool             `json:"disabled"`
	DisabledReason string           `json:"disabled_reason,omitempty"`
	FailingSince   string           `json:"failing_since,omitempty"`
	Breaker        *breakerView     `json:"breaker,omitempty"`
	Health         healthView       `json:"health"`
	Settings       endpointcfg.View `json:"settings"`
	CreatedAt      string           `json:"created_at"`
	UpdatedAt      string           `json:"updated_at"`
	Secret         string           `json:"secret,omitempty"`
	PollToken      string           `json:"poll_token,omitempty"` // a polling endpoint's, shown once
	// SignatureScheme is what webhook-signature carries (docs/signing.md).
	SignatureScheme domain.SignatureScheme `json:"signature_scheme"`
	// Type is how the endpoint is reached; AWS its target and role when
	// the type is an AWS one (docs/destinations.md).
	Type domain.DestinationType `json:"type"`
	AWS  *awsView               `json:"aws,omitempty"`
}

// breakerView is an endpoint's circuit breaker when it is not closed: why
// its deliveries wait without using attempts, and until when.
type breakerView struct {
	State     string `json:"state"`      // open, half_open (the next attempt is the probe), probing
	OpenUntil string `json:"open_until"` // when the pause ends (or ended) and one probe may go
}

// healthView is how the endpoint is doing, read-only: its breaker (closed,
// open until a time, half_open: the next attempt is the probe, probing),
// the failures behind it, and the last failed attempt (written at most once
// a minute, store.LastFailureEvery). Why it is disabled is disabled_reason.
type healthView struct {
	Breaker             string `json:"breaker"`
	BreakerOpenUntil    string `json:"breaker_open_until,omitempty"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	FailingSince        string `json:"failing_since,omitempty"`
	PausedUntil         string `json:"paused_until,omitempty"`
	LastFailureAt       string `json:"last_failure_at,omitempty"`
	LastFailureStatus   int    `json:"last_failure_status,omitempty"`
	LastFailureError    string `json:"last_failure_error,omitempty"`
}

func viewHealth(ep domain.Endpoint, now time.Time) healthView {
	h := healthView{Breaker: "closed", ConsecutiveFailures: ep.BreakerFails, FailingSince: rfc3339(ep.FailingSince),
		LastFailureAt: rfc3339(ep.LastFailureAt), LastFailureStatus: ep.LastFailureStatus, LastFailureError: ep.LastFailureError}
	if state, open := breakerStates[lifecycle.BreakerOf(ep, now)]; open {
		h.Breaker, h.BreakerOpenUntil = state, rfc3339(ep.BreakerOpenUntil)
	}
	if ep.PausedUntil > domain.Millis(now) {
		h.PausedUntil = rfc3339(ep.PausedUntil)
	}
	return h
}

// applySettings checks a change of an endpoint's settings against the rules
// (endpointcfg.Apply) and returns the settings it makes. A rate limit is
// checked against the account's, so only then is the account read.
func (a *API) applySettings(ctx context.Context, account string, cur domain.EndpointSettings, c endpointcfg.Change) (domain.EndpointSettings, response, bool) {
	rate := 0.0
	if c.RateLimit != nil {
		acct, err := a.Store.GetAccount(ctx, account)
		if err != nil {
			return cur, a.internal(ctx, err), true
		}
		if rate = acct.RatePerSecond; rate <= 0 {
			rate = a.DefaultRate
		}
	}
	if c.OAuth2 != nil && c.OAuth2.TokenURL != "" {
		// The token URL is fetched from the sender as the endpoint's URL is:
		// the same rules (https in deployed stacks, no private address).
		u, r, failed := a.checkURL(ctx, c.OAuth2.TokenURL)
		if e, ok := r.body.(errorBody); failed && ok && r.status == http.StatusUnprocessableEntity {
			return cur, fail(r.status, "invalid_settings", "settings.oauth2.token_url: "+e.Error.Message), true
		} else if failed {
			return cur, r, true
		}
		c.OAuth2.TokenURL = u
	}
	next, err := endpointcfg.Apply(cur, c, rate)
	if err != nil {
		code := "invalid_settings"
		if err.Field == "filter" {
			code = "invalid_filter"
		}
		return cur, fail(http.StatusUnprocessableEntity, code, "settings."+err.Field+": "+err.Message), true
	}
	return next, response{}, false
}

var breakerStates = map[lifecycle.BreakerState]string{
	lifecycle.BreakerOpen: "open", lifecycle.BreakerHalfOpen: "half_open", lifecycle.BreakerProbing: "probing",
}

func viewEndpoint(ep domain.Endpoint, now time.Time) endpointView {
	types := ep.EventTypes
	if types == nil {
		types = []string{}
	}
	v := endpointView{
		ID: ep.ID, URL: ep.URL, Description: ep.Description, EventTypes: types, Disabled: ep.Disabled,
		DisabledReason: ep.DisabledReason, FailingSince: rfc3339(ep.FailingSince),
		CreatedAt: rfc3339(ep.CreatedAt), UpdatedAt: rfc3339(ep.UpdatedAt), SignatureScheme: ep.Scheme(),
		Settings: endpointcfg.ViewOf(ep.Settings), Health: viewHealth(ep, now), Type: ep.DestinationOf(), AWS: viewAWS(ep.Destination),
	}
	if state, open := breakerStates[lifecycle.BreakerOf(ep, now)]; open {
		v.Breaker = &breakerView{State: state, OpenUntil: rfc3339(ep.BreakerOpenUntil)}
	}
	return v
}

var eventFilterRE = regexp.MustCompile(`^(\*|` + domain.EventTypePattern + `(\.\*)?)$`)

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
		URL             string              `json:"url"`
		EventTypes      []string            `json:"event_types"`
		Description     string              `json:"description"`
		SignatureScheme string              `json:"signature_scheme"`
		Settings        *endpointcfg.Change `json:"settings"`
		Type            string              `json:"type"`
		AWS             *awsView            `json:"aws"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	typ, r, failed := a.destinationType(in.Type)
	if failed {
		return r
	}
	if typ == domain.DestinationPolling {
		if r, failed := checkPollingShape(in.URL != "", in.AWS != nil, in.Settings != nil); failed {
			return r
		}
	} else if r, failed := checkDestinationShape(typ, in.URL != "", in.AWS, in.Settings != nil && (len(in.Settings.Headers) > 0 || in.Settings.OAuth2 != nil || in.Settings.TLS != nil)); failed {
		return r
	}
	if in.URL == "" && typ == domain.DestinationHTTP {
		return fail(http.StatusUnprocessableEntity, "invalid_url", "url is required")
	}
	url := ""
	if typ == domain.DestinationHTTP {
		if url, r, failed = a.checkURL(ctx, in.URL); failed {
			return r
		}
	}
	if r, failed := checkEventTypes(in.EventTypes); failed {
		return r
	}
	if descriptionTooLong(in.Description) {
		return fail(http.StatusUnprocessableEntity, "invalid_description", fmt.Sprintf("description is longer than %d characters", domain.MaxDescriptionLength))
	}
	var settings domain.EndpointSettings
	if in.Settings != nil {
		if len(in.Settings.Reset) > 0 || len(in.Settings.RemoveHeaders) > 0 {
			// As for any field a registration does not take.
			return fail(http.StatusBadRequest, "invalid_json", "unknown field: settings.reset and settings.remove_headers are for a PATCH")
		}
		if settings, r, failed = a.applySettings(ctx, req.account, settings, *in.Settings); failed {
			return r
		}
	}
	if r, failed := a.checkCatalog(ctx, req.account, in.EventTypes, nil); failed { // after the checks that read nothing
		return r
	}
	scheme, r, failed := a.schemeFrom(ctx, req.account, in.SignatureScheme)
	if failed {
		return r
	}
	var dest *domain.Destination
	var poll pollToken
	switch typ {
	case domain.DestinationHTTP:
	case domain.DestinationPolling:
		dest, poll = &domain.Destination{Type: typ}, newPollToken(req.account)
	default: // last: it calls STS
		if dest, r, failed = a.destinationFrom(ctx, req.account, typ, *in.AWS); failed {
			return r
		}
	}
	now := domain.Millis(a.Now())
	ep := domain.Endpoint{
		ID: domain.NewID("ep"), AccountID: req.account, URL: url, Description: in.Description, EventTypes: in.EventTypes,
		Secrets: []domain.Secret{{Value: signing.NewSecret(), CreatedAt: now}}, CreatedAt: now, UpdatedAt: now,
		SignatureScheme: scheme, Settings: settings, Destination: dest, PollTokenHash: poll.hash,
	}
	switch err := a.Store.CreateEndpoint(ctx, ep); {
	case errors.Is(err, store.ErrLimit):
		return fail(http.StatusConflict, "endpoint_limit", fmt.Sprintf("an account may register at most %d endpoints", domain.MaxEndpoints))
	case err != nil:
		return a.internal(ctx, err)
	}
	a.publish(ctx, opevents.Changed(opevents.EndpointCreated, ep, a.Now()))
	v := viewEndpoint(ep, a.Now())
	v.Secret, v.PollToken = ep.Secrets[0].Value, poll.token
	return ok(http.StatusCreated, v)
}

func (a *API) listEndpoints(ctx context.Context, req *request) response {
	eps, err := a.Store.ListEndpoints(ctx, req.account)
	if err != nil {
		return a.internal(ctx, err)
	}
	views := make([]endpointView, 0, len(eps))
	now := a.Now() // one moment for the whole list's breaker states
	for _, ep := range eps {
		views = append(views, viewEndpoint(ep, now))
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
	return ok(http.StatusOK, viewEndpoint(ep, a.Now()))
}

func (a *API) patchEndpoint(ctx context.Context, req *request) response {
	current, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return r
	}
	var in struct {
		URL             *string             `json:"url"`
		EventTypes      *[]string           `json:"event_types"`
		Description     *string             `json:"description"`
		Disabled        *bool               `json:"disabled"`
		SignatureScheme *string             `json:"signature_scheme"`
		Settings        *endpointcfg.Change `json:"settings"`
		AWS             *awsView            `json:"aws"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	typ := current.DestinationOf()
	if typ == domain.DestinationHTTP && in.AWS != nil {
		return destinationFail("the endpoint's type is http, and a type cannot change: register a new endpoint")
	}
	if typ != domain.DestinationHTTP && (in.URL != nil || (in.Settings != nil && (len(in.Settings.Headers) > 0 || in.Settings.OAuth2 != nil || in.Settings.TLS != nil))) {
		return destinationFail(fmt.Sprintf("an %s endpoint has no url or headers: change aws.target_arn or aws.role_arn", typ))
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
	// A new origin is a new receiver: the custom headers (credentials,
	// often) set for the old one are not sent there unless given again.
	repointed := in.URL != nil && endpointcfg.Origin(*in.URL) != endpointcfg.Origin(current.URL)
	if repointed && current.Settings.OAuth2 != nil && (in.Settings == nil || (in.Settings.OAuth2 == nil && !slices.Contains(in.Settings.Reset, "oauth2"))) {
		// The bearer token is a credential for the old receiver too.
		return fail(http.StatusUnprocessableEntity, "oauth2_not_confirmed",
			"the url's origin changes and the endpoint's oauth2 client credentials were set for the old one: give them again in settings.oauth2, or settings.reset [\"oauth2\"] to drop them")
	}
	if repointed && current.Settings.TLS != nil && current.Settings.TLS.CertPEM != "" &&
		(in.Settings == nil || ((in.Settings.TLS == nil || (in.Settings.TLS.ClientCert != "" && in.Settings.TLS.ClientKey == "")) && !slices.Contains(in.Settings.Reset, "tls"))) {
		// The client certificate was set for the old receiver: its key
		// follows the URL to another origin only when given again.
		return fail(http.StatusUnprocessableEntity, "tls_not_confirmed",
			"the url's origin changes and the endpoint's tls client certificate was set for the old one: give settings.tls again with its client_key, or settings.reset [\"tls\"] to drop it")
	}
	if repointed && len(current.Settings.Headers) > 0 {
		if in.Settings == nil || (len(in.Settings.Headers) == 0 && !slices.Contains(in.Settings.Reset, "headers")) {
			return fail(http.StatusUnprocessableEntity, "headers_not_confirmed", fmt.Sprintf(
				"the url's origin changes and the endpoint's custom headers (%s) were set for the old one: give them again in settings.headers, or settings.reset [\"headers\"] to drop them",
				strings.Join(endpointcfg.HeaderNames(current.Settings), ", ")))
		}
		in.Settings.Reset = append(in.Settings.Reset, "headers") // only the headers given go to the new origin
	}
	var settings *domain.EndpointSettings
	if in.Settings != nil {
		next, r, failed := a.applySettings(ctx, req.account, current.Settings, *in.Settings)
		if failed {
			return r
		}
		settings = &next
	}
	if in.EventTypes != nil {
		if r, failed := a.checkCatalog(ctx, req.account, *in.EventTypes, current.EventTypes); failed { // after the checks that read nothing
			return r
		}
	}
	var scheme *domain.SignatureScheme
	if in.SignatureScheme != nil {
		s, r, failed := a.schemeFrom(ctx, req.account, *in.SignatureScheme)
		if failed {
			return r
		}
		scheme = &s
	}
	var dest *domain.Destination
	if in.AWS != nil { // last: it calls STS
		if dest, r, failed = a.destinationFrom(ctx, req.account, typ, *in.AWS); failed {
			return r
		}
	}
	patch := store.EndpointPatch{URL: in.URL, EventTypes: in.EventTypes, Description: in.Description, Disabled: in.Disabled, Scheme: scheme, Destination: dest}
	var ep domain.Endpoint
	var err error
	if settings == nil {
		ep, err = a.Store.UpdateEndpoint(ctx, req.account, req.params[0], patch)
	}
	for try := 1; settings != nil; try++ {
		// The settings are made from the ones read: written only while the
		// endpoint is as read, else made again from it as it is now.
		patch.Settings, patch.SeenUpdatedAt = settings, current.UpdatedAt
		if ep, err = a.Store.UpdateEndpoint(ctx, req.account, req.params[0], patch); !errors.Is(err, store.ErrConflict) || try == 3 {
			break
		}
		if current, r, failed = a.loadEndpoint(ctx, req); failed {
			return r
		}
		next, r, failed := a.applySettings(ctx, req.account, current.Settings, *in.Settings)
		if failed {
			return r
		}
		settings = &next
	}
	if errors.Is(err, store.ErrConflict) {
		return fail(http.StatusConflict, "conflict", "the endpoint kept changing while this change was made; try again")
	}
	if errors.Is(err, store.ErrNotFound) {
		return notFound("endpoint")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	if in.Disabled != nil && *in.Disabled {
		a.stopPending(ctx, ep.ID, domain.ReasonEndpointDisabled)
		if !current.Disabled { // a fact only when it changed: a repeated PATCH disables nothing
			a.publish(ctx, opevents.Disabled(ep, opevents.ByAPI, a.Now()))
		}
	}
	a.publish(ctx, opevents.Changed(opevents.EndpointUpdated, ep, a.Now()))
	return ok(http.StatusOK, viewEndpoint(ep, a.Now()))
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
	a.publish(ctx, opevents.Changed(opevents.EndpointDeleted, ep, a.Now()))
	return response{status: http.StatusNoContent}
}

// How much one request may do; the caller repeats for the rest.
const maxStopPerCall = 1000

// maxStopPages bounds the log pages one call looks through: the pending
// filter reads the endpoint log (store.ListEndpointDeliveries).
const maxStopPages = 20

// stopPending fails an endpoint's pending deliveries at once with the
// reason, so the log shows why they stopped; their DLQ messages follow from
// the deliver function (their queued message) or the sweeper. An attempt in
// flight right now finishes, and its retry finds the endpoint gone. The
// worker does the same for anything past this call's bound.
func (a *API) stopPending(ctx context.Context, endpointID string, reason domain.FailReason) {
	after, stopped := "", 0
	for pages := 0; stopped < maxStopPerCall && pages < maxStopPages; pages++ {
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
