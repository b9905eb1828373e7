package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/httpapi"
	"github.com/gifq/webhooks/shared/portal"
)

// Every route, with no key, a revoked key, and another account's key.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	acctA, keyA := h.account(t)
	_, keyB := h.account(t)
	_, ep := h.registerReceiver(t, keyA, always(200))
	ev := h.publish(t, keyA, payout)
	h.waitFor(t, keyA, ev.Deliveries[0].ID, 15*time.Second, settled)
	k, revoked, err := h.store.CreateAPIKey(ctx, acctA)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.RevokeAPIKey(ctx, acctA, k.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // key lookups are eventually consistent reads: past the propagation a revoke takes
	if code := h.call(t, keyA, "POST", "/v1/event-types", `{"name":"payout.catalogued"}`, nil); code != 201 {
		t.Fatalf("event type: %d", code)
	}
	ids := map[string]string{"endpoints": ep.ID, "events": ev.ID, "deliveries": ev.Deliveries[0].ID, "event-types": "payout.catalogued"}
	bodies := map[string]string{
		"POST /v1/events": payout, "POST /v1/endpoints": `{"url":"http://127.0.0.1:1/x"}`,
		"PATCH /v1/endpoints/*": `{"description":"x"}`, "POST /v1/endpoints/*/recover": `{"since":"2026-01-01T00:00:00Z"}`,
		"POST /v1/endpoints/*/replay": `{"since":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`,
		"POST /v1/event-types":        `{"name":"x.y"}`, "PATCH /v1/event-types/*": `{"description":"x"}`,
	}
	routes := httpapi.Routes()
	if len(routes) < 12 {
		t.Fatalf("routes %v", routes)
	}
	for _, rt := range routes {
		method, pattern, _ := strings.Cut(rt, " ")
		path := pattern
		if parts := strings.Split(pattern, "/"); len(parts) > 3 && parts[3] == "*" {
			path = strings.Replace(pattern, "*", ids[parts[2]], 1)
		}
		body := bodies[rt]
		var e errOut
		if code := h.call(t, "", method, path, body, &e); code != 401 || e.Error.Code != "missing_api_key" {
			t.Errorf("%s without a key: %d %+v", rt, code, e)
		}
		if code := h.call(t, revoked, method, path, body, &e); code != 401 || e.Error.Code != "invalid_api_key" {
			t.Errorf("%s with a revoked key: %d %+v", rt, code, e)
		}
		if code := h.call(t, "Basic "+keyA, method, path, body, &e); code != 401 {
			t.Errorf("%s with a malformed Authorization: %d", rt, code)
		}
		if path == pattern {
			continue // a collection: another account's key acts on its own account (checked below)
		}
		if code := h.call(t, keyB, method, path, body, &e); code != 404 || e.Error.Code != "not_found" {
			t.Errorf("%s with another account's key: %d %+v", rt, code, e)
		}
	}
	var eps struct{ Data []endpointOut }
	if h.call(t, keyB, "GET", "/v1/endpoints", nil, &eps); len(eps.Data) != 0 {
		t.Errorf("account B lists A's endpoints: %+v", eps.Data)
	}
	var evB eventOut
	if code := h.call(t, keyB, "POST", "/v1/events", payout, &evB); code != 202 || len(evB.Deliveries) != 0 {
		t.Errorf("B's event fanned out to A's endpoints: %+v", evB)
	}
	var health map[string]string
	if code := h.call(t, "", "GET", "/healthz", nil, &health); code != 200 || health["status"] != "ok" {
		t.Errorf("healthz: %d %v", code, health)
	}
}

// lockedBuffer is a log sink the app writes to from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Reset empties the buffer.
func (l *lockedBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// API keys and endpoint secrets never appear in the logs, and secrets only
// in the two answers that hand them out.
func TestSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	h := start(t, opts{env: map[string]string{"LOG_LEVEL": "debug"}, logs: logs})
	_, key := h.account(t)
	var s scripted
	rv, ep := h.registerReceiver(t, key, s.respond(500))
	var rot struct{ Secret string }
	h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/rotate-secret", nil, &rot)
	rv.setSecret(rot.Secret)
	secrets := []string{key, ep.Secret, rot.Secret}
	// Exercise the paths that log: ingest, failures, retries, success, errors, a wrong key that looks real.
	ev := h.publish(t, key, payout)
	time.Sleep(1500 * time.Millisecond)
	s.ok.Store(true)
	h.waitFor(t, key, ev.Deliveries[0].ID, 20*time.Second, settled)
	wrong := "gifq_" + strings.Repeat("A", 43)
	secrets = append(secrets, wrong)
	var answers []string
	for _, c := range []struct{ key, method, path, body string }{
		{wrong, "POST", "/v1/events", payout}, {key, "POST", "/v1/events", `{"event":`},
		{key, "GET", "/v1/endpoints/" + ep.ID, ""}, {key, "GET", "/v1/endpoints", ""},
		{key, "GET", "/v1/events/" + ev.ID, ""}, {key, "GET", "/v1/deliveries/" + ev.Deliveries[0].ID, ""},
		{key, "PATCH", "/v1/endpoints/" + ep.ID, `{"url":"ftp://` + rot.Secret + `"}`},
	} {
		req, _ := http.NewRequest(c.method, h.api+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+c.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers = append(answers, fmt.Sprintf("%s %s -> %d %s", c.method, c.path, resp.StatusCode, b))
	}
	all := logs.String()
	if remote() {
		all = h.functionLogs(t) // the deployed functions' own output, at the stack's log level
	}
	// A plain success logs at debug only: the deployed stack's info level
	// shows the event and its failed attempts, not the delivered line.
	if !strings.Contains(all, ev.ID) || !remote() && !strings.Contains(all, "delivered") {
		t.Fatalf("the logs did not capture the run:\n%s", all)
	}
	for _, secret := range secrets {
		if strings.Contains(all, secret) {
			t.Errorf("a secret or key appears in the logs: %s...", secret[:8])
		}
		for _, a := range answers {
			if strings.Contains(a, secret) {
				t.Errorf("a secret or key appears in an API answer: %s", a[:40])
			}
		}
	}
	if strings.Contains(all, "whsec_") || strings.Contains(all, "gifq_") {
		t.Errorf("something shaped like a secret or key is logged")
	}
}

// portalRoutes are the routes a portal session may call (a read-only one
// only the reads); every other route refuses portal tokens.
var portalRoutes = map[string]string{
	"GET /v1/endpoints": "read", "GET /v1/endpoints/*": "read", "GET /v1/endpoints/*/deliveries": "read",
	"GET /v1/deliveries/*": "read", "GET /v1/deliveries/*/attempts": "read", "GET /v1/events/*": "read", "GET /v1/events": "read", "DELETE /v1/portal/sessions/*": "read",
	"GET /v1/event-types": "read", "GET /v1/event-types/*": "read", "GET /v1/signing-keys": "read", "GET /v1/egress-ips": "read",
	"POST /v1/endpoints": "write", "PATCH /v1/endpoints/*": "write", "DELETE /v1/endpoints/*": "write",
	"POST /v1/endpoints/*/rotate-secret": "write", "POST /v1/endpoints/*/recover": "write", "POST /v1/endpoints/*/replay": "write",
	"POST /v1/endpoints/*/test-event": "write", "POST /v1/deliveries/*/resend": "write",
	"GET /v1/endpoints/*/stats": "read", "GET /v1/stats": "read", "POST /v1/filters/test": "read",
}

// Every route with portal tokens: expired, revoked, forged, minted by a key
// since revoked, and another account's are refused (401, or 404 for another account's objects) and
// change nothing; a read-only session may only read; routes that are not the
// portal's (ingest, minting sessions) refuse every portal token.
func TestAuthorizationMatrixPortalTokens(t *testing.T) {
	t.Parallel()
	h := start(t, opts{env: map[string]string{"PORTAL_URL": "http://127.0.0.1:1/portal/"}})
	acctA, keyA := h.account(t)
	_, keyB := h.account(t)
	_, ep := h.registerReceiver(t, keyA, always(200))
	ev := h.publish(t, keyA, payout)
	h.waitFor(t, keyA, ev.Deliveries[0].ID, 15*time.Second, settled)
	session := func(key string, readOnly bool) (id, token string) {
		var out struct{ ID, URL string }
		if code := h.call(t, key, "POST", "/v1/portal/sessions", map[string]any{"read_only": readOnly}, &out); code != 201 {
			t.Fatalf("session: %d", code)
		}
		_, token, _ = strings.Cut(out.URL, "#token=")
		token, _, _ = strings.Cut(token, "&")
		return out.ID, token
	}
	_, tokenA := session(keyA, false)
	_, readOnlyA := session(keyA, true)
	_, tokenB := session(keyB, false)
	revokedID, revoked := session(keyA, false)
	if code := h.call(t, keyA, "DELETE", "/v1/portal/sessions/"+revokedID, nil, nil); code != 204 {
		t.Fatalf("revoke: %d", code)
	}
	// A session whose API key was revoked after it was minted.
	doomedKey, doomedSecret, err := h.store.CreateAPIKey(ctx, acctA)
	if err != nil {
		t.Fatal(err)
	}
	_, keyRevoked := session(doomedSecret, false)
	if err := h.store.RevokeAPIKey(ctx, acctA, doomedKey.ID); err != nil {
		t.Fatal(err)
	}
	minter, err := h.store.Authenticate(ctx, keyA)
	if err != nil {
		t.Fatal(err)
	}
	old, expired := portal.NewSession(acctA, minter.ID, false, time.Hour, time.Now().Add(-61*time.Minute))
	if err := h.store.CreatePortalSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	id, secret, _ := portal.ParseToken(tokenA)
	forged := portal.TokenPrefix + id + "." + strings.Repeat("A", len(secret))

	var before map[string]any
	h.call(t, keyA, "GET", "/v1/endpoints/"+ep.ID, nil, &before)
	if code := h.call(t, keyA, "POST", "/v1/event-types", `{"name":"payout.catalogued"}`, nil); code != 201 {
		t.Fatalf("event type: %d", code)
	}
	ids := map[string]string{"endpoints": ep.ID, "events": ev.ID, "deliveries": ev.Deliveries[0].ID, "sessions": revokedID, "event-types": "payout.catalogued"}
	bodies := map[string]string{
		"POST /v1/events": payout, "POST /v1/endpoints": `{"url":"http://127.0.0.1:1/x"}`,
		"PATCH /v1/endpoints/*": `{"description":"changed"}`, "POST /v1/endpoints/*/recover": `{"since":"2026-01-01T00:00:00Z"}`,
		"POST /v1/endpoints/*/replay": `{"since":"` + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339) + `"}`,
		"POST /v1/event-types":        `{"name":"x.y"}`, "PATCH /v1/event-types/*": `{"description":"changed"}`,
	}
	for _, rt := range httpapi.Routes() {
		method, pattern, _ := strings.Cut(rt, " ")
		path := pattern
		if parts := strings.Split(pattern, "/"); parts[len(parts)-1] == "*" || len(parts) > 3 && parts[3] == "*" {
			i := 3
			if parts[3] != "*" {
				i = len(parts) - 1
			}
			path = strings.Replace(pattern, "*", ids[parts[i-1]], 1)
		}
		body := bodies[rt]
		var e errOut
		for name, tok := range map[string]string{"expired": expired, "revoked": revoked, "forged": forged, "garbage": portal.TokenPrefix + "x", "key-revoked": keyRevoked} {
			if code := h.call(t, tok, method, path, body, &e); code != 401 || e.Error.Code != "invalid_portal_token" {
				t.Errorf("%s with a %s portal token: %d %+v", rt, name, code, e)
			}
		}
		access, allowed := portalRoutes[rt]
		if !allowed {
			for name, tok := range map[string]string{"A's": tokenA, "read-only": readOnlyA} {
				if code := h.call(t, tok, method, path, body, &e); code != 403 || e.Error.Code != "not_for_portal" {
					t.Errorf("%s is not the portal's, yet %s token got %d %+v", rt, name, code, e)
				}
			}
			continue
		}
		if path != pattern {
			if code := h.call(t, tokenB, method, path, body, &e); code != 404 || e.Error.Code != "not_found" {
				t.Errorf("%s with another account's portal token: %d %+v", rt, code, e)
			}
		}
		if access == "write" {
			if code := h.call(t, readOnlyA, method, path, body, &e); code != 403 || e.Error.Code != "read_only" {
				t.Errorf("%s with a read-only portal token: %d %+v", rt, code, e)
			}
		} else if method == "GET" {
			if code := h.call(t, readOnlyA, method, path, body, nil); code != 200 {
				t.Errorf("%s with a read-only portal token: %d, want 200", rt, code)
			}
		}
	}
	var after map[string]any
	h.call(t, keyA, "GET", "/v1/endpoints/"+ep.ID, nil, &after)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("refused portal tokens changed the endpoint:\n%v\n%v", before, after)
	}
	var eps struct{ Data []endpointOut }
	if h.call(t, tokenB, "GET", "/v1/endpoints", nil, &eps); len(eps.Data) != 0 {
		t.Errorf("B's portal lists A's endpoints: %+v", eps.Data)
	}
	if h.call(t, tokenA, "GET", "/v1/endpoints", nil, &eps); len(eps.Data) != 1 || eps.Data[0].ID != ep.ID {
		t.Errorf("A's portal lists %+v", eps.Data)
	}
}
