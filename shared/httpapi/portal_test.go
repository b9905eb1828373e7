package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/httpapi"
	"github.com/gifq/webhooks/shared/portal"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var ctx = context.Background()

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// fixture is the api handler on its own table, with a clock the test moves.
type fixture struct {
	api   *httpapi.API
	app   *app.App
	now   time.Time
	logs  *syncBuffer
	keyA  string
	acctA string
	keyB  string
	calls *testenv.Calls
	db    *dynamodb.Client // the emulator, for tests that write the table directly
	table string
}

func newFixture(t *testing.T, env map[string]string) *fixture {
	t.Helper()
	e := testenv.New(t)
	vars := map[string]string{"TABLE_NAME": e.Table, "QUEUE_URL": e.Queues.Delivery, "DLQ_URL": e.Queues.DLQ,
		"ALLOW_PRIVATE_ENDPOINTS": "true", "ALLOWED_SCHEMES": "http,https", "METRICS": "off", "LOG_LEVEL": "debug",
		"API_KEY_CACHE_TTL": "0s", "PORTAL_URL": "https://api.gifq.test/prod/portal/"}
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := config.Parse(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{logs: &syncBuffer{}, now: time.Now(), calls: testenv.NewCalls()}
	db, q := e.CountedClients(f.calls)
	f.db, f.table = db, e.Table
	f.app = app.New(cfg, db, q, f.logs, "api")
	f.api = f.app.API()
	f.api.Now = func() time.Time { return f.now }
	f.acctA, f.keyA = f.account(t)
	_, f.keyB = f.account(t)
	return f
}

func (f *fixture) account(t *testing.T) (string, string) {
	a, err := f.app.Store.CreateAccount(ctx, "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := f.app.Store.CreateAPIKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID, key
}

type answer struct {
	status  int
	headers map[string]string
	body    map[string]any
	raw     string
}

func (a answer) code() string {
	e, _ := a.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (f *fixture) do(t *testing.T, bearer, method, path, body string) answer {
	t.Helper()
	return f.doRequest(t, events.APIGatewayProxyRequest{HTTPMethod: method, Path: path, Body: body,
		Headers: map[string]string{"Authorization": "Bearer " + bearer}})
}

func (f *fixture) doRequest(t *testing.T, in events.APIGatewayProxyRequest) answer {
	t.Helper()
	out, err := f.api.Handle(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: out.StatusCode, headers: out.Headers, raw: out.Body}
	if strings.HasPrefix(out.Headers["Content-Type"], "application/json") && out.Body != "" {
		if err := json.Unmarshal([]byte(out.Body), &a.body); err != nil {
			t.Fatalf("%s %s: %v in %q", in.HTTPMethod, in.Path, err, out.Body)
		}
	}
	return a
}

// session opens a portal session with key and returns its id and token.
func (f *fixture) session(t *testing.T, key, body string) (string, string, answer) {
	t.Helper()
	a := f.do(t, key, "POST", "/v1/portal/sessions", body)
	if a.status != 201 {
		t.Fatalf("create session: %d %s", a.status, a.raw)
	}
	u, err := url.Parse(a.body["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	frag, _ := url.ParseQuery(u.Fragment)
	return a.body["id"].(string), frag.Get("token"), a
}

func (f *fixture) endpoint(t *testing.T, key string) string {
	t.Helper()
	a := f.do(t, key, "POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/hook","description":"orders","event_types":["payout.*"]}`)
	if a.status != 201 {
		t.Fatalf("endpoint: %d %s", a.status, a.raw)
	}
	return a.body["id"].(string)
}

func TestPortalSessionIsShortLivedScopedAndStoredHashed(t *testing.T) {
	f := newFixture(t, nil)
	epA := f.endpoint(t, f.keyA)
	epB := f.endpoint(t, f.keyB)
	id, token, a := f.session(t, f.keyA, "")
	if !strings.HasPrefix(a.body["url"].(string), "https://api.gifq.test/prod/portal/#token=gifqp_") || a.body["read_only"] != false {
		t.Fatalf("answer %s", a.raw)
	}
	if exp, _ := time.Parse(time.RFC3339Nano, a.body["expires_at"].(string)); !exp.Equal(f.now.Add(time.Hour).Truncate(time.Millisecond)) {
		t.Errorf("expires_at %v, want an hour from now (%v)", exp, f.now.Add(time.Hour))
	}
	stored, err := f.app.Store.GetPortalSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	_, secret, _ := portal.ParseToken(token)
	if stored.AccountID != f.acctA || stored.SecretHash == "" || strings.Contains(stored.SecretHash, secret) {
		t.Fatalf("stored %+v", stored)
	}

	list := f.do(t, token, "GET", "/v1/endpoints", "")
	if data := list.body["data"].([]any); list.status != 200 || len(data) != 1 || data[0].(map[string]any)["id"] != epA {
		t.Fatalf("the session lists %d %s", list.status, list.raw)
	}
	if r := f.do(t, token, "GET", "/v1/endpoints/"+epB, ""); r.status != 404 {
		t.Errorf("another account's endpoint: %d", r.status)
	}
	if r := f.do(t, token, "PATCH", "/v1/endpoints/"+epB, `{"description":"mine now"}`); r.status != 404 {
		t.Errorf("patching another account's endpoint: %d", r.status)
	}
	if r := f.do(t, f.keyB, "GET", "/v1/endpoints/"+epB, ""); r.body["description"] != "orders" {
		t.Errorf("B's endpoint changed: %s", r.raw)
	}

	// Expiry: the last millisecond works, the next one does not, and the refused call changes nothing.
	f.now = f.now.Add(time.Hour - time.Millisecond)
	if r := f.do(t, token, "GET", "/v1/endpoints", ""); r.status != 200 {
		t.Fatalf("just before expiry: %d", r.status)
	}
	f.now = f.now.Add(time.Millisecond)
	r := f.do(t, token, "PATCH", "/v1/endpoints/"+epA, `{"description":"too late"}`)
	if r.status != 401 || r.code() != "invalid_portal_token" || r.headers["WWW-Authenticate"] == "" {
		t.Errorf("expired: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyA, "GET", "/v1/endpoints/"+epA, ""); r.body["description"] != "orders" {
		t.Errorf("an expired token changed the endpoint: %s", r.raw)
	}
	for _, secretThing := range []string{token, secret} {
		if strings.Contains(f.logs.String(), secretThing) {
			t.Fatal("the token is in the logs")
		}
	}
	if !strings.Contains(f.logs.String(), "portal token expired") {
		t.Errorf("the log does not say why the token was refused:\n%s", f.logs.String())
	}
}

func TestPortalSessionTTLAndBody(t *testing.T) {
	f := newFixture(t, nil)
	for body, want := range map[string]int{
		`{"ttl_seconds":60}`: 201, `{"ttl_seconds":86400,"read_only":true}`: 201, `{}`: 201,
		`{"ttl_seconds":59}`: 422, `{"ttl_seconds":86401}`: 422, `{"ttl_seconds":-1}`: 422,
		`{"ttl":60}`: 400, `{"read_only":"yes"}`: 400, `[`: 400,
	} {
		if r := f.do(t, f.keyA, "POST", "/v1/portal/sessions", body); r.status != want {
			t.Errorf("%s: %d %s, want %d", body, r.status, r.raw, want)
		}
	}
	_, _, a := f.session(t, f.keyA, `{"ttl_seconds":86400,"read_only":true}`)
	if exp, _ := time.Parse(time.RFC3339Nano, a.body["expires_at"].(string)); !exp.Equal(f.now.Add(24 * time.Hour).Truncate(time.Millisecond)) {
		t.Errorf("24 h session expires %v", exp)
	}
	if !strings.HasSuffix(a.body["url"].(string), "&read_only=1") || a.body["read_only"] != true {
		t.Errorf("read-only session: %s", a.raw)
	}
	_, token, _ := f.session(t, f.keyA, "")
	if r := f.do(t, token, "POST", "/v1/portal/sessions", `{"ttl_seconds":86400}`); r.status != 403 || r.code() != "not_for_portal" {
		t.Errorf("a session minted another: %d %s", r.status, r.raw)
	}
	if r := f.do(t, "", "POST", "/v1/portal/sessions", ""); r.status != 401 {
		t.Errorf("no key: %d", r.status)
	}
}

func TestPortalURLFromAPIGateway(t *testing.T) {
	f := newFixture(t, map[string]string{"PORTAL_URL": ""})
	in := events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/v1/portal/sessions",
		Headers:        map[string]string{"Authorization": "Bearer " + f.keyA, "Host": "abc123.execute-api.eu-west-1.amazonaws.com", "X-Forwarded-Proto": "https"},
		RequestContext: events.APIGatewayProxyRequestContext{Stage: "prod", Path: "/prod/v1/portal/sessions"}}
	a := f.doRequest(t, in)
	if a.status != 201 || !strings.HasPrefix(a.body["url"].(string), "https://abc123.execute-api.eu-west-1.amazonaws.com/prod/portal/#token=gifqp_") {
		t.Fatalf("%d %s", a.status, a.raw)
	}
	in.Headers["X-Forwarded-Proto"] = "http" // LocalStack
	in.Headers["Host"] = "abc123.execute-api.localhost.localstack.cloud:4566"
	in.RequestContext.Path = "/local/v1/portal/sessions"
	if a := f.doRequest(t, in); a.status != 201 || !strings.HasPrefix(a.body["url"].(string), "http://abc123.execute-api.localhost.localstack.cloud:4566/local/portal/#token=") {
		t.Errorf("LocalStack: %d %s", a.status, a.raw)
	}
	// LocalStack's path-style URL, as LocalStack 4.14 sends it: its own
	// address as the Host, "HTTP" from the server protocol, the stage and path.
	in.Headers["X-Forwarded-Proto"], in.Headers["Host"] = "HTTP", "127.0.0.1:4566"
	in.RequestContext = events.APIGatewayProxyRequestContext{APIID: "abc123", Stage: "localstack", Path: "/localstack/v1/portal/sessions"}
	if a := f.doRequest(t, in); a.status != 201 || !strings.HasPrefix(a.body["url"].(string), "http://127.0.0.1:4566/_aws/execute-api/abc123/localstack/portal/#token=") {
		t.Errorf("LocalStack, path-style: %d %s", a.status, a.raw)
	}
	delete(in.Headers, "X-Forwarded-Proto") // not behind a gateway, and no PORTAL_URL: no way to tell
	if a := f.doRequest(t, in); a.status != 500 || a.code() != "portal_url_unknown" {
		t.Errorf("without X-Forwarded-Proto or PORTAL_URL: %d %s", a.status, a.raw)
	}
}

func TestPortalReadOnlyRevokeAndSignOut(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA)
	_, ro, _ := f.session(t, f.keyA, `{"read_only":true}`)
	if r := f.do(t, ro, "GET", "/v1/endpoints/"+ep+"/deliveries", ""); r.status != 200 {
		t.Errorf("read-only read: %d %s", r.status, r.raw)
	}
	for _, c := range [][3]string{
		{"PATCH", "/v1/endpoints/" + ep, `{"disabled":true}`}, {"DELETE", "/v1/endpoints/" + ep, ""},
		{"POST", "/v1/endpoints/" + ep + "/rotate-secret", ""}, {"POST", "/v1/endpoints/" + ep + "/test-event", ""},
		{"POST", "/v1/endpoints", `{"url":"http://127.0.0.1:1/x"}`},
	} {
		if r := f.do(t, ro, c[0], c[1], c[2]); r.status != 403 || r.code() != "read_only" {
			t.Errorf("read-only %s %s: %d %s", c[0], c[1], r.status, r.raw)
		}
	}
	if r := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep, ""); r.body["disabled"] != false {
		t.Errorf("a read-only session changed the endpoint: %s", r.raw)
	}

	// Revocation with the API key: at once; another account cannot revoke it.
	id, token, _ := f.session(t, f.keyA, "")
	if r := f.do(t, f.keyB, "DELETE", "/v1/portal/sessions/"+id, ""); r.status != 404 {
		t.Errorf("another account revoked it: %d", r.status)
	}
	if r := f.do(t, token, "GET", "/v1/endpoints", ""); r.status != 200 {
		t.Fatalf("before revoking: %d", r.status)
	}
	if r := f.do(t, f.keyA, "DELETE", "/v1/portal/sessions/"+id, ""); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.raw)
	}
	if r := f.do(t, token, "GET", "/v1/endpoints", ""); r.status != 401 || r.code() != "invalid_portal_token" {
		t.Errorf("revoked: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyA, "DELETE", "/v1/portal/sessions/"+id, ""); r.status != 204 {
		t.Errorf("revoking twice: %d", r.status)
	}

	// Signing out: a session ends itself, and only itself.
	other, otherToken, _ := f.session(t, f.keyA, "")
	_, mine, _ := f.session(t, f.keyA, "")
	if r := f.do(t, mine, "DELETE", "/v1/portal/sessions/"+other, ""); r.status != 404 {
		t.Errorf("a session ended another: %d", r.status)
	}
	if r := f.do(t, mine, "DELETE", "/v1/portal/sessions/current", ""); r.status != 204 {
		t.Errorf("sign out: %d %s", r.status, r.raw)
	}
	if r := f.do(t, mine, "GET", "/v1/endpoints", ""); r.status != 401 {
		t.Errorf("after sign out: %d", r.status)
	}
	if r := f.do(t, otherToken, "GET", "/v1/endpoints", ""); r.status != 200 {
		t.Errorf("the other session ended too: %d", r.status)
	}

	// Forged: the right id with another secret, and a made-up id.
	_, good, _ := f.session(t, f.keyA, "")
	sid, secret, _ := portal.ParseToken(good)
	for _, bad := range []string{portal.TokenPrefix + sid + "." + strings.Repeat("A", len(secret)), portal.TokenPrefix + "ps_01M8RA3MXPKBFYMPFP1XJSHXMY." + secret} {
		if r := f.do(t, bad, "DELETE", "/v1/endpoints/"+ep, ""); r.status != 401 {
			t.Errorf("forged %d", r.status)
		}
	}
	if r := f.do(t, f.keyA, "GET", "/v1/endpoints/"+ep, ""); r.status != 200 {
		t.Errorf("a forged token deleted the endpoint: %d", r.status)
	}
}

func TestTestEventGoesToThatEndpointOnly(t *testing.T) {
	f := newFixture(t, nil)
	ep := f.endpoint(t, f.keyA) // subscribes to payout.* only
	other := f.endpoint(t, f.keyA)
	_, token, _ := f.session(t, f.keyA, "")
	r := f.do(t, token, "POST", "/v1/endpoints/"+ep+"/test-event", "")
	if r.status != 202 || r.body["event"] != httpapi.TestEventType {
		t.Fatalf("test event: %d %s", r.status, r.raw)
	}
	ds := r.body["deliveries"].([]any)
	if len(ds) != 1 || ds[0].(map[string]any)["endpoint_id"] != ep {
		t.Fatalf("deliveries %v (other endpoint %s)", ds, other)
	}
	ev := f.do(t, f.keyA, "GET", "/v1/events/"+r.body["id"].(string), "")
	body := ev.body["body"].(map[string]any)
	if body["event"] != "webhook.test" || body["endpoint_id"] != ep {
		t.Errorf("event body %v", body)
	}
	f.do(t, f.keyA, "PATCH", "/v1/endpoints/"+ep, `{"disabled":true}`)
	if r := f.do(t, token, "POST", "/v1/endpoints/"+ep+"/test-event", ""); r.status != 409 || r.code() != "endpoint_disabled" {
		t.Errorf("disabled: %d %s", r.status, r.raw)
	}
	if r := f.do(t, f.keyB, "POST", "/v1/endpoints/"+ep+"/test-event", ""); r.status != 404 {
		t.Errorf("another account: %d", r.status)
	}
}

func TestPortalFiles(t *testing.T) {
	f := newFixture(t, map[string]string{"PORTAL_FRAME_ANCESTORS": "https://dashboard.gifq.test"})
	get := func(method, path string) answer {
		return f.doRequest(t, events.APIGatewayProxyRequest{HTTPMethod: method, Path: path})
	}
	page := get("GET", "/portal/")
	if page.status != 200 || !strings.Contains(page.raw, `<script src="portal-app.js" defer></script>`) ||
		!strings.HasSuffix(page.headers["Content-Security-Policy"], "frame-ancestors https://dashboard.gifq.test") ||
		page.headers["Content-Type"] != "text/html; charset=utf-8" {
		t.Errorf("page: %d %v", page.status, page.headers)
	}
	if js := get("GET", "/portal/portal-app.js"); js.status != 200 || !strings.Contains(js.raw, "sessionStorage") {
		t.Errorf("script: %d", js.status)
	}
	if r := get("GET", "/portal"); r.status != 200 || r.raw != page.raw {
		t.Errorf("/portal (a gateway that drops the slash): %d", r.status)
	}
	if r := get("GET", "/portal/other"); r.status != 404 || r.code() != "not_found" {
		t.Errorf("/portal/other: %d %s", r.status, r.raw)
	}
	if r := get("POST", "/portal/"); r.status != 405 {
		t.Errorf("POST: %d", r.status)
	}
	if r := get("GET", "/portal/../go.mod"); r.status != 404 {
		t.Errorf("traversal: %d", r.status)
	}
}

// What a portal request costs: the session's GetItem in place of the API
// key's, its minting key's (a session dies with its key), and the session
// limiter's write (which takes tokens ahead: a busy session's next requests
// make none); the page's files cost nothing.
func TestPortalRequestCost(t *testing.T) {
	f := newFixture(t, nil)
	f.endpoint(t, f.keyA)
	_, token, _ := f.session(t, f.keyA, "")
	for _, c := range []struct {
		name, bearer, path string
		want               string
	}{
		{"list with the API key (no key cache)", f.keyA, "/v1/endpoints", "DynamoDB.GetItem=1 DynamoDB.Query=1"},
		{"list with a portal token", token, "/v1/endpoints", "DynamoDB.GetItem=2 DynamoDB.Query=1 DynamoDB.UpdateItem=1"},
		{"the page", "", "/portal/", ""},
		{"its script", "", "/portal/portal-app.js", ""},
	} {
		f.calls.Reset()
		if r := f.do(t, c.bearer, "GET", c.path, ""); r.status != 200 {
			t.Fatalf("%s: %d", c.name, r.status)
		}
		if got := f.calls.String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	f.calls.Reset()
	f.session(t, f.keyA, "")
	// The key, the session and its listing entry, and the key's management limit.
	if got := f.calls.String(); got != "DynamoDB.GetItem=1 DynamoDB.TransactWriteItems=1 DynamoDB.UpdateItem=1" {
		t.Errorf("creating a session: %q", got)
	}
}
