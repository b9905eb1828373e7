package httpapi_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/portal"
)

// A portal session lives only as long as the API key that minted it: once
// the key is revoked, its sessions answer 401 to reads and writes and change
// nothing; sessions of the account's other keys go on.
func TestPortalSessionDiesWithItsKey(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	k2, key2, err := f.app.Store.CreateAPIKey(ctx, f.acctA)
	if err != nil {
		t.Fatal(err)
	}
	_, doomed, _ := f.session(t, key2, "")
	_, lives, _ := f.session(t, f.keyA, "")
	if r := f.do(t, doomed, "GET", "/v1/endpoints", ""); r.status != 200 {
		t.Fatalf("before the key is revoked: %d %s", r.status, r.raw)
	}
	if err := f.app.Store.RevokeAPIKey(ctx, f.acctA, k2.ID); err != nil {
		t.Fatal(err)
	}
	before := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep, "").raw
	for _, c := range [][3]string{
		{"GET", "/v1/endpoints", ""}, {"GET", "/v1/endpoints/" + ep, ""},
		{"POST", "/v1/endpoints/" + ep + "/rotate-secret", ""}, {"PATCH", "/v1/endpoints/" + ep, `{"description":"after revocation"}`},
		{"DELETE", "/v1/portal/sessions/current", ""},
	} {
		if r := f.do(t, doomed, c[0], c[1], c[2]); r.status != 401 || r.code() != "invalid_portal_token" {
			t.Errorf("%s %s after its key was revoked: %d %s", c[0], c[1], r.status, r.raw)
		}
	}
	if after := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep, "").raw; after != before {
		t.Errorf("a dead session changed the endpoint:\n%s\n%s", before, after)
	}
	if !strings.Contains(f.logs.String(), portal.ErrKeyRevoked.Error()) {
		t.Error("the log does not say why the token was refused")
	}
	if r := f.do(t, lives, "GET", "/v1/endpoints", ""); r.status != 200 {
		t.Errorf("a session of another key: %d %s", r.status, r.raw)
	}

	// A session that names no key (made before sessions did) is not trusted.
	s, token := portal.NewSession(f.acctA, "", false, time.Hour, f.now)
	if err := f.app.Store.CreatePortalSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if r := f.do(t, token, "GET", "/v1/endpoints", ""); r.status != 401 {
		t.Errorf("a session with no key: %d %s", r.status, r.raw)
	}
	// Nor one naming another account's key.
	_, keyB, _ := f.app.Store.CreateAPIKey(ctx, f.acctA)
	kB, _ := f.app.Store.Authenticate(ctx, f.keyB)
	s, token = portal.NewSession(f.acctA, kB.ID, false, time.Hour, f.now)
	if err := f.app.Store.CreatePortalSession(ctx, s); err != nil || keyB == "" {
		t.Fatal(err)
	}
	if r := f.do(t, token, "GET", "/v1/endpoints", ""); r.status != 401 {
		t.Errorf("a session naming another account's key: %d %s", r.status, r.raw)
	}
}

// GET /v1/portal/sessions lists the account's sessions (never a token),
// newest first, in pages; DELETE /v1/portal/sessions ends every live one.
// Both take the API key only.
func TestPortalSessionsListAndRevokeAll(t *testing.T) {
	f := newFixture(t, nil)
	first, t1, _ := f.session(t, f.keyA, "")
	second, t2, _ := f.session(t, f.keyA, `{"read_only":true}`)
	third, t3, _ := f.session(t, f.keyA, `{"ttl_seconds":60}`)
	_, tB, _ := f.session(t, f.keyB, "")
	if r := f.do(t, f.keyA, "DELETE", "/v1/portal/sessions/"+first, ""); r.status != 204 {
		t.Fatal(r.raw)
	}

	all := f.do(t, f.keyA, "GET", "/v1/portal/sessions", "")
	if all.status != 200 {
		t.Fatalf("list: %d %s", all.status, all.raw)
	}
	for _, secret := range []string{t1, t2, t3, "#token", "secret_hash", "url"} {
		if strings.Contains(all.raw, secret) {
			t.Fatalf("the list shows %q: %s", secret, all.raw)
		}
	}
	data := all.body["data"].([]any)
	if len(data) != 3 {
		t.Fatalf("listed %d sessions: %s", len(data), all.raw)
	}
	k, _ := f.app.Store.Authenticate(ctx, f.keyA)
	// Newest first is by id: ids made in the same millisecond (as these
	// may be) are in no set order among themselves.
	status := map[string]string{first: "revoked", second: "active", third: "active"}
	ids := []string{first, second, third}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	for i, id := range ids {
		s := data[i].(map[string]any)
		if s["id"] != id || s["status"] != status[id] || s["key_id"] != k.ID {
			t.Errorf("session %d: %v, want %s %s minted by %s", i, s, id, status[id], k.ID)
		}
		if (id == second) != (s["read_only"] == true) || (id == first) != (s["revoked_at"] != nil) {
			t.Errorf("fields of %s: %s", id, all.raw)
		}
	}

	// Pages of 2: the third comes after the cursor, and nothing after it.
	p1 := f.doRequest(t, get(f.keyA, "/v1/portal/sessions", map[string]string{"limit": "2"}))
	cursor, _ := p1.body["next_cursor"].(string)
	if d, _ := p1.body["data"].([]any); len(d) != 2 || cursor == "" {
		t.Fatalf("first page: %s", p1.raw)
	}
	p2 := f.doRequest(t, get(f.keyA, "/v1/portal/sessions", map[string]string{"limit": "2", "cursor": cursor}))
	if d, _ := p2.body["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != ids[2] || p2.body["next_cursor"] != "" {
		t.Errorf("second page: %s", p2.raw)
	}
	for q, code := range map[string]string{"limit": "0", "cursor": "bm9wZQ"} {
		v := map[string]string{"limit": "0"}
		if q == "cursor" {
			v = map[string]string{"cursor": code}
		}
		if r := f.doRequest(t, get(f.keyA, "/v1/portal/sessions", v)); r.status != 400 {
			t.Errorf("bad %s: %d %s", q, r.status, r.raw)
		}
	}
	if r := f.do(t, f.keyB, "GET", "/v1/portal/sessions", ""); len(r.body["data"].([]any)) != 1 {
		t.Errorf("B sees %s", r.raw)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if r := f.do(t, t2, m, "/v1/portal/sessions", ""); r.status != 403 || r.code() != "not_for_portal" {
			t.Errorf("%s with a portal token: %d %s", m, r.status, r.raw)
		}
	}

	// Revoke all: A's live ones end, B's does not.
	r := f.do(t, f.keyA, "DELETE", "/v1/portal/sessions", "")
	if r.status != 200 || r.body["revoked"] != 2.0 || r.body["more"] != false {
		t.Fatalf("revoke all: %d %s", r.status, r.raw)
	}
	for _, tok := range []string{t2, t3} {
		if r := f.do(t, tok, "GET", "/v1/endpoints", ""); r.status != 401 {
			t.Errorf("after revoking all: %d", r.status)
		}
	}
	if r := f.do(t, tB, "GET", "/v1/endpoints", ""); r.status != 200 {
		t.Errorf("B's session: %d", r.status)
	}
	if r := f.do(t, f.keyA, "DELETE", "/v1/portal/sessions", ""); r.body["revoked"] != 0.0 {
		t.Errorf("revoking all again: %s", r.raw)
	}
	for _, s := range f.do(t, f.keyA, "GET", "/v1/portal/sessions", "").body["data"].([]any) {
		if s.(map[string]any)["status"] != "revoked" {
			t.Errorf("after revoking all: %v", s)
		}
	}
}

// get is a GET with a query string, as API Gateway passes one.
func get(bearer, path string, query map[string]string) events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: path, QueryStringParameters: query,
		Headers: map[string]string{"Authorization": "Bearer " + bearer}}
}
