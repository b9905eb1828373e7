// Package httpapi is the api function's handler: API Gateway (REST, proxy
// integration) requests in, JSON out. It authenticates the bearer API key,
// routes, validates, and answers errors as {"error":{"code","message"}}.
package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/portal"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

// Store is what the API needs of the table.
type Store interface {
	StatsReader
	Authenticate(ctx context.Context, secret string) (domain.APIKey, error)
	CreateEndpoint(context.Context, domain.Endpoint) error
	GetEndpoint(ctx context.Context, accountID, id string) (domain.Endpoint, error)
	ListEndpoints(ctx context.Context, accountID string) ([]domain.Endpoint, error)
	CreateEventType(context.Context, domain.EventType) error
	GetEventType(ctx context.Context, accountID, name string) (domain.EventType, error)
	UpdateEventType(ctx context.Context, et domain.EventType, rev int64) (domain.EventType, error)
	ListEventTypes(ctx context.Context, accountID string, limit int32, after string) (store.EventTypePage, error)
	EventTypeNames(ctx context.Context, accountID string) ([]domain.EventType, error)
	GetEvent(ctx context.Context, accountID, id string) (domain.Event, error)
	AccountEvents(ctx context.Context, accountID, after string, since, until int64, limit int) ([]store.EventRef, bool, error)
	AccountEventsNewestFirst(ctx context.Context, accountID, after string, since, until int64, limit int) ([]store.EventRef, bool, error)
	CommitPollPosition(ctx context.Context, accountID, endpointID, position string) error
	DeliveryWithAttempts(ctx context.Context, id string) (domain.Delivery, []domain.Attempt, error)
	GetDelivery(ctx context.Context, id string) (domain.Delivery, error)
	DeliveryWithNewestAttempts(ctx context.Context, id string, n int) (domain.Delivery, store.AttemptPage, error)
	DeliveryAttempts(ctx context.Context, d domain.Delivery, limit int, before string) (store.AttemptPage, error)
	GetAccount(ctx context.Context, id string) (domain.Account, error)
	EnsureExternalID(ctx context.Context, accountID string) (string, error)
	SetNotificationEmails(ctx context.Context, accountID string, emails []string) error
	UpdateEndpoint(ctx context.Context, accountID, id string, p store.EndpointPatch) (domain.Endpoint, error)
	DeleteEndpoint(ctx context.Context, accountID, id string) error
	RotateSecret(ctx context.Context, accountID, id string, r domain.Rotation) (domain.Endpoint, error)
	PublishedSigningKeys(ctx context.Context, accountID string) ([]domain.SigningKey, error)
	EnsureSigningKey(ctx context.Context, accountID string) ([]domain.SigningKey, error)
	RotateSigningKey(ctx context.Context, accountID string, overlap time.Duration) ([]domain.SigningKey, error)
	ListEndpointDeliveries(ctx context.Context, endpointID string, status domain.Status, limit int32, after string) (store.DeliveryPage, error)
	FailedDeliveryIDs(ctx context.Context, endpointID string, since, until int64, after string, limit int) ([]string, error)
	FailWithoutAttempt(ctx context.Context, d domain.Delivery, reason domain.FailReason, sendDLQ bool) (domain.Delivery, error)
	Restart(ctx context.Context, id, endpointID string, gen int) (domain.Delivery, error)
}

// Queue sends the API's messages (resends, recovered deliveries).
type Queue interface {
	Send(context.Context, queue.Message, time.Duration) error
}

// Limiter reserves a resend's rate-limit slot.
type Limiter interface {
	ReserveAhead(ctx context.Context, account string, n int, perSecond float64, lead time.Duration) (ratelimit.Reservation, error)
}

// Ingester accepts events.
type Ingester interface {
	Ingest(ctx context.Context, accountID string, body []byte, idempotencyKey string) (ingest.Result, error)
	IngestKeyed(ctx context.Context, accountID string, body []byte, idempotencyKey, orderingKey string) (ingest.Result, error)
	IngestTo(ctx context.Context, accountID, endpointID string, body []byte) (ingest.Result, error) // a test event
	IngestBatch(ctx context.Context, accountID string, items []ingest.Item) ([]ingest.ItemResult, error)
	ReplayMissing(ctx context.Context, accountID, endpointID string, w ingest.ReplayWindow) (ingest.ReplayResult, error)
}

// API handles every route.
type API struct {
	Store    Store
	Ingest   Ingester
	Policy   netguard.Policy
	Resolver netguard.Resolver // for the registration-time URL check; nil skips DNS
	Queue    Queue
	Limiter  Limiter
	// DefaultRate is the deployment's rate limit; RotationGrace how long an
	// old secret keeps signing after a rotation.
	DefaultRate   float64
	RotationGrace time.Duration
	// KeyCacheTTL is how long a valid key's account is remembered (0: not at all).
	KeyCacheTTL time.Duration
	Portal      Portal     // the customer portal's sessions and settings (portal.go)
	KeyLimits   *KeyLimits // per-API-key ingest limits (ingestlimit.go); nil: none
	EgressIPs   []string   // the static addresses deliveries leave from (egress.go); nil: none
	// OpEvents hears of the operational facts the API makes (a secret
	// rotated, an endpoint disabled by its owner); nil publishes nothing.
	OpEvents opevents.Publisher
	// Destinations checks AWS endpoints' targets and roles (destinations.go);
	// nil: only HTTP endpoints.
	Destinations Destinations
	Log          *slog.Logger
	Now          func() time.Time

	keysOnce sync.Once
	keys     *keyCache
}

const maxManagementBody = 256 << 10 // above the sum of every bounded field: a field over its bound is a 422 that names it

// request is what a route handler gets.
type request struct {
	events.APIGatewayProxyRequest
	body    []byte
	account string   // the authenticated account
	keyID   string   // the API key's id, when an API key authenticated
	params  []string // path parameters, in order
	session string   // the portal session, when a portal token authenticated
	// chargeKey is the API key whose limits this request is charged to: the
	// key itself, or the key that minted the portal session. Whatever a
	// session makes counts in its key's bucket as well as its own.
	chargeKey string
	// pollToken is a polling endpoint's token, when one authenticated
	// (poll.go): the endpoint must be the token's.
	pollToken string
}

type route struct {
	method  string
	pattern []string // literal segments, or "*" for a parameter
	handle  func(*API, context.Context, *request) response
}

var routes = []route{
	{http.MethodPost, split("/v1/events"), (*API).postEvent},
	{http.MethodPost, split("/v1/events/batch"), (*API).postEventBatch},
	{http.MethodPost, split("/v1/endpoints"), (*API).createEndpoint},
	{http.MethodGet, split("/v1/endpoints"), (*API).listEndpoints},
	{http.MethodGet, split("/v1/endpoints/*"), (*API).getEndpoint},
	{http.MethodPatch, split("/v1/endpoints/*"), (*API).patchEndpoint},
	{http.MethodDelete, split("/v1/endpoints/*"), (*API).deleteEndpoint},
	{http.MethodPost, split("/v1/endpoints/*/rotate-secret"), (*API).rotateSecret},
	{http.MethodGet, split("/v1/endpoints/*/deliveries"), (*API).listDeliveries},
	{http.MethodGet, split("/v1/endpoints/*/stats"), (*API).getEndpointStats},
	{http.MethodGet, split("/v1/stats"), (*API).getAccountStats},
	{http.MethodPost, split("/v1/endpoints/*/recover"), (*API).recoverEndpoint},
	{http.MethodPost, split("/v1/endpoints/*/replay"), (*API).replayEndpoint},
	{http.MethodGet, split("/v1/events/*"), (*API).getEvent},
	{http.MethodGet, split("/v1/events"), (*API).listEvents},
	{http.MethodGet, split("/v1/endpoints/*/poll"), (*API).poll},
	{http.MethodPost, split("/v1/endpoints/*/poll/commit"), (*API).commitPoll},
	{http.MethodGet, split("/v1/deliveries/*"), (*API).getDelivery},
	{http.MethodPost, split("/v1/deliveries/*/resend"), (*API).resend},
	{http.MethodGet, split("/v1/deliveries/*/attempts"), (*API).listAttempts},
	{http.MethodPost, split("/v1/endpoints/*/test-event"), (*API).testEvent},
	{http.MethodGet, split("/v1/signing-keys"), (*API).listSigningKeys},
	{http.MethodGet, split("/v1/account"), (*API).getAccount},
	{http.MethodPut, split("/v1/account/notifications"), (*API).putNotifications},
	{http.MethodPost, split("/v1/signing-keys/rotate"), (*API).rotateSigningKey},
	{http.MethodPost, split("/v1/portal/sessions"), (*API).createPortalSession},
	{http.MethodPost, split("/v1/event-types"), (*API).createEventType},
	{http.MethodGet, split("/v1/event-types"), (*API).listEventTypes},
	{http.MethodGet, split("/v1/event-types/**"), (*API).getEventType},
	{http.MethodPatch, split("/v1/event-types/**"), (*API).patchEventType},
	{http.MethodDelete, split("/v1/portal/sessions/*"), (*API).revokePortalSession},
	{http.MethodGet, split("/v1/egress-ips"), (*API).getEgressIPs},
	{http.MethodPost, split("/v1/filters/test"), (*API).testFilter},
	{http.MethodGet, split("/v1/portal/sessions"), (*API).listPortalSessions},
	{http.MethodDelete, split("/v1/portal/sessions"), (*API).revokePortalSessions},
}

// notManagement are the writes outside the management limit: those charged
// to the key's ingest bucket (events and what makes deliveries), revoking
// portal sessions (ending access is never limited) and a polling
// consumer's commit (reading, not managing).
var notManagement = map[string]bool{
	"POST /v1/events": true, "POST /v1/events/batch": true, "POST /v1/endpoints/*/recover": true,
	"POST /v1/endpoints/*/replay": true, "POST /v1/deliveries/*/resend": true, "POST /v1/endpoints/*/test-event": true,
	"DELETE /v1/portal/sessions/*": true, "DELETE /v1/portal/sessions": true, "POST /v1/endpoints/*/poll/commit": true,
}

// managementWrite reports whether rt is a write the management limit counts.
func managementWrite(rt route) bool {
	return rt.method != http.MethodGet && rt.method != http.MethodHead && !notManagement[rt.name()]
}

// publish hands events to OpEvents, if any.
func (a *API) publish(ctx context.Context, events ...opevents.Event) {
	if a.OpEvents != nil {
		a.OpEvents.Publish(ctx, events...)
	}
}

func split(path string) []string { return strings.Split(strings.Trim(path, "/"), "/") }

// Routes lists every authenticated route as "METHOD /path/*" (a * is an
// id), for tests that must cover them all.
func Routes() []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		out[i] = rt.name()
	}
	return out
}

func match(pattern, path []string) ([]string, bool) {
	if n := len(pattern); n > 0 && pattern[n-1] == "**" && len(path) >= n {
		// "**" ends a pattern: the rest of the path, "/" and all (an event
		// type's name may hold one).
		params, ok := match(pattern[:n-1], path[:n-1])
		rest := strings.Join(path[n-1:], "/")
		return append(params, rest), ok && rest != "" && !strings.Contains("/"+rest+"/", "//")
	}
	if len(pattern) != len(path) {
		return nil, false
	}
	var params []string
	for i, p := range pattern {
		switch {
		case p == "*" && path[i] != "":
			params = append(params, path[i])
		case p != path[i]:
			return nil, false
		}
	}
	return params, true
}

// Handle serves one API Gateway request. It never returns an error: every
// failure is an HTTP answer (an error would become API Gateway's 502).
func (a *API) Handle(ctx context.Context, in events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	start := a.Now()
	resp := a.serve(ctx, in)
	out := resp.encode(in.RequestContext.RequestID)
	lvl := slog.LevelInfo
	if resp.status >= 500 {
		lvl = slog.LevelError
	}
	// The path and status only: never headers (API keys) or bodies. Empty
	// attributes are left out: CloudWatch Logs bills every byte.
	attrs := []any{"method", in.HTTPMethod, "path", in.Path, "status", resp.status,
		"duration_ms", a.Now().Sub(start).Milliseconds(), "request_id", in.RequestContext.RequestID}
	if code := resp.code(); code != "" {
		attrs = append(attrs, "error_code", code)
	}
	a.Log.Log(ctx, lvl, "request", append(attrs, resp.logged...)...)
	return out, nil
}

func (a *API) serve(ctx context.Context, in events.APIGatewayProxyRequest) response {
	path := split(in.Path)
	if in.Path == "/healthz" || in.Path == openAPIPath {
		switch {
		case in.HTTPMethod != http.MethodGet:
			return methodNotAllowed([]string{http.MethodGet})
		case in.Path == openAPIPath:
			return a.getOpenAPI()
		}
		return ok(http.StatusOK, map[string]string{"status": "ok"})
	}
	if r, served := a.servePortal(in); served {
		return r
	}
	if account, isJWKS := jwksAccount(in.Path); isJWKS {
		return a.getJWKS(ctx, in.HTTPMethod, account)
	}
	var allowed []string
	for _, rt := range candidates(path) {
		params, _ := match(rt.pattern, path)
		if rt.method != in.HTTPMethod {
			allowed = append(allowed, rt.method)
			continue
		}
		req := &request{APIGatewayProxyRequest: in, params: params}
		if r, failed := a.authenticate(ctx, req, rt); failed {
			return r
		}
		body, r, failed := readBody(in)
		if failed {
			return r
		}
		req.body = body
		if managementWrite(rt) {
			if r, limited := limitAnswer(a.KeyLimits.admitManagement(ctx, req)); limited {
				return r
			}
		}
		return rt.handle(a, ctx, req)
	}
	if len(allowed) > 0 {
		return methodNotAllowed(allowed)
	}
	return fail(http.StatusNotFound, "not_found", "no such route")
}

func methodNotAllowed(allowed []string) response {
	r := fail(http.StatusMethodNotAllowed, "method_not_allowed", "this path takes "+strings.Join(allowed, ", "))
	r.headers = map[string]string{"Allow": strings.Join(allowed, ", ")}
	return r
}

// candidates are the routes of a path: those that match it with the most
// literal segments, so /v1/events/batch is the batch route's path, not an
// event id (its Allow says POST, and GET on it is 405, not "no such event").
func candidates(path []string) []route {
	var out []route
	best := -1
	for _, rt := range routes {
		params, found := match(rt.pattern, path)
		if !found {
			continue
		}
		switch literal := len(rt.pattern) - len(params); {
		case literal > best:
			out, best = []route{rt}, literal
		case literal == best:
			out = append(out, rt)
		}
	}
	return out
}

func (a *API) authenticate(ctx context.Context, req *request, rt route) (response, bool) {
	auth := header(req.APIGatewayProxyRequest, "Authorization")
	secret, isBearer := strings.CutPrefix(auth, "Bearer ")
	if auth == "" || !isBearer || strings.TrimSpace(secret) == "" {
		r := fail(http.StatusUnauthorized, "missing_api_key", "send your API key as Authorization: Bearer <key>")
		r.headers = map[string]string{"WWW-Authenticate": "Bearer"}
		return r, true
	}
	secret = strings.TrimSpace(secret)
	if portal.IsToken(secret) {
		return a.authenticatePortal(ctx, req, rt, secret)
	}
	if strings.HasPrefix(secret, pollPrefix) {
		return a.authenticatePoll(req, rt, secret)
	}
	a.keysOnce.Do(func() { a.keys = &keyCache{ttl: a.KeyCacheTTL} })
	if account, keyID, ok := a.keys.get(secret, a.Now()); ok {
		req.account, req.keyID, req.chargeKey = account, keyID, keyID
		return response{}, false
	}
	k, err := a.Store.Authenticate(ctx, secret)
	if errors.Is(err, store.ErrUnauthorized) {
		r := fail(http.StatusUnauthorized, "invalid_api_key", "the API key is unknown or revoked")
		r.headers = map[string]string{"WWW-Authenticate": `Bearer error="invalid_token"`}
		return r, true
	}
	if err != nil {
		return a.internal(ctx, err), true
	}
	req.account, req.keyID, req.chargeKey = k.AccountID, k.ID, k.ID
	a.keys.put(secret, k.AccountID, k.ID, a.Now())
	return response{}, false
}

func readBody(in events.APIGatewayProxyRequest) ([]byte, response, bool) {
	body := []byte(in.Body)
	if in.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(in.Body)
		if err != nil {
			return nil, fail(http.StatusBadRequest, "invalid_body", "the body is not valid base64"), true
		}
		body = b
	}
	return body, response{}, false
}

// header reads a request header whatever its case.
func header(in events.APIGatewayProxyRequest, name string) string {
	v, _ := lookupHeader(in, name)
	return v
}

// lookupHeader reads a request header and whether it was sent (maybe empty).
func lookupHeader(in events.APIGatewayProxyRequest, name string) (string, bool) {
	for k, v := range in.Headers {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	for k, v := range in.MultiValueHeaders {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0], true
		}
	}
	return "", false
}

// decodeJSON reads a management request body into v, strictly.
func decodeJSON(body []byte, v any) (response, bool) {
	if len(body) > maxManagementBody {
		return fail(http.StatusRequestEntityTooLarge, "body_too_large", "the body is larger than 256 KiB"), true
	}
	return decodeStrict(body, v, "the body is not the JSON object this route takes: ")
}

// nullField names the first field of an object, or of an object within it,
// that is null ("" when none is): settings.timeout_seconds, say.
func nullField(fields map[string]json.RawMessage) string {
	for k, raw := range fields {
		if string(raw) == "null" {
			return k
		}
		var inner map[string]json.RawMessage
		if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &inner) == nil {
			if sub := nullField(inner); sub != "" {
				return k + "." + sub
			}
		}
	}
	return ""
}

// decodeStrict reads one JSON object into v: no unknown fields, no field
// set to null, at any depth of objects (Go would read it as absent: say
// "leave it out" instead of guessing), nothing after it.
func decodeStrict(body []byte, v any, problem string) (response, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return fail(http.StatusBadRequest, "invalid_json", problem+"not a JSON object"), true
	}
	if k := nullField(fields); k != "" {
		return fail(http.StatusBadRequest, "invalid_json", problem+"field "+k+" is null; leave it out instead"), true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail(http.StatusBadRequest, "invalid_json", problem+jsonProblem(err)), true
	}
	if dec.More() {
		return fail(http.StatusBadRequest, "invalid_json", "the body has data after the JSON object"), true
	}
	return response{}, false
}

// wholeNumber is JSON Schema's integer: 3600 and 3600.0 both. Integer
// fields are read as float64 for this (Go's int64 refuses 3600.0).
func wholeNumber(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }

func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "syntax error"
	case errors.As(err, &typ):
		return "field " + typ.Field + " has the wrong type"
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	return "not JSON"
}

func (a *API) internal(ctx context.Context, err error) response {
	a.Log.ErrorContext(ctx, "internal error", "error", err)
	return fail(http.StatusInternalServerError, "internal_error", "something went wrong on our side; try again")
}

// response is an answer before encoding.
type response struct {
	status  int
	body    any
	headers map[string]string
	logged  []any // attributes the request's log line adds (the accepted event's ids)
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// Pointer is the JSON pointer of the refused value, when a schema
		// check refused it ("" is the whole document; failAt).
		Pointer *string `json:"pointer,omitempty"`
	} `json:"error"`
}

func ok(status int, body any) response { return response{status: status, body: body} }

func fail(status int, code, message string) response {
	var e errorBody
	e.Error.Code, e.Error.Message = code, message
	return response{status: status, body: e}
}

func (r response) code() string {
	if e, ok := r.body.(errorBody); ok {
		return e.Error.Code
	}
	return ""
}

func (r response) encode(requestID string) events.APIGatewayProxyResponse {
	b, raw := r.body.([]byte) // a portal file, sent as it is
	if r.body != nil && !raw {
		var err error
		if b, err = json.Marshal(r.body); err != nil {
			b, r.status = []byte(`{"error":{"code":"internal_error","message":"encoding failed"}}`), 500
		}
	}
	h := map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"}
	if requestID != "" {
		h["X-Request-Id"] = requestID
	}
	for k, v := range r.headers {
		h[k] = v
	}
	return events.APIGatewayProxyResponse{StatusCode: r.status, Headers: h, Body: string(b)}
}

// rfc3339 formats a stored time (unix ms) for the API; zero stays empty.
func rfc3339(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
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
