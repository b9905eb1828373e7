package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/portal"
	"github.com/gifq/webhooks/shared/store"
)

// Sessions is what the portal's routes need of the table.
type Sessions interface {
	CreatePortalSession(context.Context, portal.Session) error
	GetPortalSession(ctx context.Context, id string) (portal.Session, error)
	RevokePortalSession(ctx context.Context, accountID, id string) error
	RevokePortalSessions(ctx context.Context, accountID string, max int) (revoked int, more bool, err error)
	ListPortalSessions(ctx context.Context, accountID string, limit int32, after string) (store.PortalSessionPage, error)
	APIKey(ctx context.Context, accountID, keyID string) (domain.APIKey, error)
}

// Portal is the api function's portal: session storage and the deployment's settings.
type Portal struct {
	Sessions Sessions
	Settings portal.Settings
}

// servePortal answers GET /portal/ and the page's files (portal.File); it
// leaves every other path to the API. No credential is needed: the page holds
// no data, it asks the API for it with the session token.
func (a *API) servePortal(in events.APIGatewayProxyRequest) (response, bool) {
	body, ct, ok := portal.File(in.Path)
	if !ok {
		return response{}, false
	}
	if in.HTTPMethod != http.MethodGet && in.HTTPMethod != http.MethodHead {
		r := fail(http.StatusMethodNotAllowed, "method_not_allowed", "this path takes GET")
		r.headers = map[string]string{"Allow": "GET, HEAD"}
		return r, true
	}
	return response{status: http.StatusOK, body: body, headers: a.Portal.Settings.Headers(ct)}, true
}

// authenticatePortal resolves a portal token: its session must exist, match,
// be neither expired nor revoked, and be allowed the route. Every refusal of
// the token itself is the same 401; the reason goes to the log, the token
// never does.
func (a *API) authenticatePortal(ctx context.Context, req *request, rt route, token string) (response, bool) {
	refuse := func(reason error) (response, bool) {
		a.Log.InfoContext(ctx, "portal token refused", "reason", reason.Error())
		r := fail(http.StatusUnauthorized, "invalid_portal_token", "the portal session is unknown, expired or revoked; open the portal again from your dashboard")
		r.headers = map[string]string{"WWW-Authenticate": `Bearer error="invalid_token"`}
		return r, true
	}
	id, secret, ok := portal.ParseToken(token)
	if !ok || a.Portal.Sessions == nil {
		return refuse(portal.ErrInvalid)
	}
	s, err := a.Portal.Sessions.GetPortalSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return refuse(portal.ErrInvalid)
	}
	if err != nil {
		return a.internal(ctx, err), true
	}
	if err := s.Check(secret, a.Now()); err != nil {
		return refuse(err)
	}
	// The session lives only as long as the API key that minted it: read
	// the key as it is now (strongly consistent, so a revocation holds from
	// the next request on).
	var minter *domain.APIKey
	if s.KeyID != "" {
		k, err := a.Portal.Sessions.APIKey(ctx, s.AccountID, s.KeyID)
		switch {
		case err == nil:
			minter = &k
		case !errors.Is(err, store.ErrNotFound):
			return a.internal(ctx, err), true
		}
	}
	if err := s.CheckKey(minter); err != nil {
		return refuse(err)
	}
	if allowed, why := portal.Decide(rt.name(), s.ReadOnly); !allowed {
		if why == "read_only" {
			return fail(http.StatusForbidden, "read_only", "this portal session is read-only"), true
		}
		return fail(http.StatusForbidden, "not_for_portal", "a portal session cannot call this route; use an API key"), true
	}
	req.account, req.session, req.chargeKey = s.AccountID, s.ID, s.KeyID
	// The session's own limit, reads and writes alike; its writes that are
	// events (test events, resends, recovers) are paced by the account's
	// rate on top. Signing out is never limited: a session may always end
	// itself (and once ended it is refused above).
	if rt.name() != signOutRoute {
		if r, limited := limitAnswer(a.KeyLimits.admitSession(ctx, s.ID)); limited {
			return r, true
		}
	}
	return response{}, false
}

const signOutRoute = "DELETE /v1/portal/sessions/*"

func (rt route) name() string {
	return rt.method + " /" + strings.ReplaceAll(strings.Join(rt.pattern, "/"), "**", "*")
}

// createPortalSession: POST /v1/portal/sessions {ttl_seconds?, read_only?}
// with the account's API key -> 201 with the URL that opens the portal. The
// token rides in the URL's fragment, which browsers never send to a server
// (so it is in no access log or Referer); the page swaps it for a bearer header.
func (a *API) createPortalSession(ctx context.Context, req *request) response {
	var in struct {
		TTLSeconds *float64 `json:"ttl_seconds"` // JSON Schema's integer: 900.0 too
		ReadOnly   bool     `json:"read_only"`
	}
	if len(req.body) > 0 {
		if r, failed := decodeJSON(req.body, &in); failed {
			return r
		}
	}
	ttl := portal.DefaultTTL
	if n := in.TTLSeconds; n != nil {
		if !wholeNumber(*n) || *n < portal.MinTTL.Seconds() || *n > portal.MaxTTL.Seconds() {
			return fail(http.StatusUnprocessableEntity, "invalid_ttl", "ttl_seconds must be a whole number from 60 to 86400")
		}
		ttl = time.Duration(*n) * time.Second
	}
	base := a.portalURL(req)
	if base == "" {
		return fail(http.StatusInternalServerError, "portal_url_unknown", "set PORTAL_URL: the request does not say where the API is served")
	}
	s, token := portal.NewSession(req.account, req.keyID, in.ReadOnly, ttl, a.Now())
	if err := a.Portal.Sessions.CreatePortalSession(ctx, s); err != nil {
		return a.internal(ctx, err)
	}
	a.Log.InfoContext(ctx, "portal session created", "account_id", s.AccountID, "session_id", s.ID, "read_only", s.ReadOnly, "ttl_s", int(ttl.Seconds()))
	return ok(http.StatusCreated, map[string]any{
		"id": s.ID, "url": portalLink(base, token, s.ReadOnly), "read_only": s.ReadOnly, "expires_at": rfc3339(s.ExpiresAt),
	})
}

// portalLink is the URL that opens a session. read_only=1 only tells the
// page to hide what it may not do; the API enforces it.
func portalLink(base, token string, readOnly bool) string {
	link := base + "#token=" + token
	if readOnly {
		link += "&read_only=1"
	}
	return link
}

// portalURL is PORTAL_URL, or the portal's address worked out from an API
// Gateway request: its scheme (X-Forwarded-Proto: https on AWS; LocalStack
// sends "HTTP"), its Host, and the stage (or custom domain base path) that
// prefixes the resource path. A request to LocalStack's own address came
// through its path-style URL, /_aws/execute-api/<api id>/<stage>/...
func (a *API) portalURL(req *request) string {
	if a.Portal.Settings.URL != "" {
		return a.Portal.Settings.URL
	}
	host := header(req.APIGatewayProxyRequest, "Host")
	proto := strings.ToLower(header(req.APIGatewayProxyRequest, "X-Forwarded-Proto"))
	if host == "" || proto != "https" && proto != "http" {
		return ""
	}
	prefix := strings.TrimSuffix(req.RequestContext.Path, req.Path)
	if localGateway(host) && req.RequestContext.APIID != "" {
		prefix = "/_aws/execute-api/" + req.RequestContext.APIID + prefix
	}
	return proto + "://" + host + prefix + portal.Prefix
}

// localGateway reports whether host is LocalStack's own address (loopback or
// localhost.localstack.cloud) rather than an API's execute-api or custom
// domain name.
func localGateway(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || host == "localhost.localstack.cloud"
}

// revokePortalSession: DELETE /v1/portal/sessions/{id} with the API key
// ends any of the account's sessions; with a portal token, only its own
// ("current" or its id): the portal's sign-out.
func (a *API) revokePortalSession(ctx context.Context, req *request) response {
	id := req.params[0]
	if req.session != "" {
		if id != "current" && id != req.session {
			return notFound("portal session")
		}
		id = req.session
	}
	if !domain.HasPrefix(id, "ps") {
		return notFound("portal session")
	}
	switch err := a.Portal.Sessions.RevokePortalSession(ctx, req.account, id); {
	case errors.Is(err, store.ErrNotFound):
		return notFound("portal session")
	case err != nil:
		return a.internal(ctx, err)
	}
	a.Log.InfoContext(ctx, "portal session revoked", "account_id", req.account, "session_id", id)
	return response{status: http.StatusNoContent}
}

// sessionView is a session as listed: never its token, which exists only in
// the answer that minted it.
type sessionView struct {
	ID        string `json:"id"`
	KeyID     string `json:"key_id,omitempty"`
	ReadOnly  bool   `json:"read_only"`
	Status    string `json:"status"` // active, expired or revoked
	CreatedAt string `json:"created_at"`
	ExpiresAt string `json:"expires_at"`
	RevokedAt string `json:"revoked_at,omitempty"`
}

func viewSession(s portal.Session, now time.Time) sessionView {
	status := "active"
	switch {
	case s.RevokedAt != 0:
		status = "revoked"
	case domain.Millis(now) >= s.ExpiresAt:
		status = "expired"
	}
	return sessionView{ID: s.ID, KeyID: s.KeyID, ReadOnly: s.ReadOnly, Status: status,
		CreatedAt: rfc3339(s.CreatedAt), ExpiresAt: rfc3339(s.ExpiresAt), RevokedAt: rfc3339(s.RevokedAt)}
}

// listPortalSessions: GET /v1/portal/sessions?limit=&cursor= with the API
// key: the account's sessions, newest first, until a day after they end.
func (a *API) listPortalSessions(ctx context.Context, req *request) response {
	limit, after, r, failed := pageQuery(req, "ps")
	if failed {
		return r
	}
	page, err := a.Portal.Sessions.ListPortalSessions(ctx, req.account, int32(limit), after)
	if err != nil {
		return a.internal(ctx, err)
	}
	views := make([]sessionView, 0, len(page.Sessions))
	for _, s := range page.Sessions {
		views = append(views, viewSession(s, a.Now()))
	}
	out := list{Data: views}
	if page.After != "" {
		out.NextCursor = encodeCursor(page.After)
	}
	return ok(http.StatusOK, out)
}

// maxRevokePerCall bounds the sessions one DELETE /v1/portal/sessions
// revokes; "more" tells the caller to call again.
const maxRevokePerCall = 1000

// revokePortalSessions: DELETE /v1/portal/sessions with the API key ends
// every live session of the account (a leaked link, an employee leaving).
func (a *API) revokePortalSessions(ctx context.Context, req *request) response {
	n, more, err := a.Portal.Sessions.RevokePortalSessions(ctx, req.account, maxRevokePerCall)
	if err != nil && n == 0 {
		return a.internal(ctx, err)
	}
	if err != nil {
		more = true // some were not revoked: calling again finishes them
		a.Log.WarnContext(ctx, "some portal sessions not revoked", "account_id", req.account, "error", err)
	}
	a.Log.InfoContext(ctx, "portal sessions revoked", "account_id", req.account, "revoked", n, "more", more)
	return ok(http.StatusOK, map[string]any{"revoked": n, "more": more})
}
