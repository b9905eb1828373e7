package portal

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

var t0 = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

func TestTokenOpensOnlyItsSessionUntilItEnds(t *testing.T) {
	s, token := NewSession("acct_1", "key_1", true, time.Hour, t0)
	id, secret, ok := ParseToken(token)
	if !ok || id != s.ID || !IsToken(token) {
		t.Fatalf("ParseToken(%q) = %q %v, session %q", token, id, ok, s.ID)
	}
	if strings.Contains(s.SecretHash, secret) || s.SecretHash == secret || len(s.SecretHash) != 64 {
		t.Fatalf("the session keeps %q for secret %q: want its SHA-256 only", s.SecretHash, secret)
	}
	if s.AccountID != "acct_1" || !s.ReadOnly || s.ExpiresAt != t0.Add(time.Hour).UnixMilli() || s.TTL != t0.Add(25*time.Hour).Unix() {
		t.Fatalf("session %+v", s)
	}
	forged := []byte(secret)
	forged[0] ^= 1
	revoked := s
	revoked.RevokedAt = t0.UnixMilli()
	for _, c := range []struct {
		name    string
		s       Session
		secret  string
		now     time.Time
		wantErr error
	}{
		{"valid", s, secret, t0, nil},
		{"last millisecond", s, secret, t0.Add(time.Hour - time.Millisecond), nil},
		{"expired", s, secret, t0.Add(time.Hour), ErrExpired},
		{"revoked", revoked, secret, t0, ErrRevoked},
		{"forged", s, string(forged), t0, ErrInvalid},
		{"empty", s, "", t0, ErrInvalid},
		{"forged and expired", s, string(forged), t0.Add(2 * time.Hour), ErrInvalid},
	} {
		if err := c.s.Check(c.secret, c.now); !errors.Is(err, c.wantErr) {
			t.Errorf("%s: Check = %v, want %v", c.name, err, c.wantErr)
		}
	}
	_, other := NewSession("acct_1", "key_1", false, time.Hour, t0)
	if other == token {
		t.Fatal("two sessions got the same token")
	}
}

func TestParseTokenRefusesWhatNewSessionCannotMake(t *testing.T) {
	_, good := NewSession("acct_1", "key_1", false, time.Hour, t0)
	id, secret, _ := ParseToken(good)
	for _, bad := range []string{
		"", "gifq_" + strings.Repeat("A", 43), TokenPrefix, TokenPrefix + id, TokenPrefix + id + ".",
		TokenPrefix + id + "." + secret[:42], TokenPrefix + id + "." + secret + "A", TokenPrefix + id + "." + secret[:42] + "!",
		TokenPrefix + "ps_short." + secret, TokenPrefix + strings.Replace(id, "ps_", "ep_", 1) + "." + secret,
		strings.ToUpper(good[:6]) + good[6:],
	} {
		if _, _, ok := ParseToken(bad); ok {
			t.Errorf("ParseToken(%q) accepted", bad)
		}
	}
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		route       string
		readOnly    bool
		wantAllowed bool
		wantWhy     string
	}{
		{"GET /v1/endpoints", true, true, ""},
		{"GET /v1/deliveries/*", true, true, ""},
		{"PATCH /v1/endpoints/*", false, true, ""},
		{"PATCH /v1/endpoints/*", true, false, "read_only"},
		{"POST /v1/deliveries/*/resend", true, false, "read_only"},
		{"DELETE /v1/portal/sessions/*", true, true, ""},
		{"POST /v1/events", false, false, "not_for_portal"},
		{"POST /v1/portal/sessions", false, false, "not_for_portal"},
		{"POST /v1/events/batch", false, false, "not_for_portal"}, // a route added later stays closed
	} {
		allowed, why := Decide(c.route, c.readOnly)
		if allowed != c.wantAllowed || why != c.wantWhy {
			t.Errorf("Decide(%q, read-only %v) = %v %q, want %v %q", c.route, c.readOnly, allowed, why, c.wantAllowed, c.wantWhy)
		}
	}
}

func TestFrameAncestors(t *testing.T) {
	for v, ok := range map[string]bool{
		"'none'": true, "'self'": true, "https://dashboard.gifq.com": true, "'self' https://*.gifq.com https://app.gifq.com:8443": true,
		"http://127.0.0.1:8080": true, "http://localhost:*": true,
		"": false, "*": false, "https:": false, "http://dashboard.gifq.com": false, "'none' 'self'": false,
		"https://a.com; script-src *": false, "https://a.com,https://b.com": false, "'unsafe-inline'": false,
	} {
		if err := CheckFrameAncestors(v); (err == nil) != ok {
			t.Errorf("CheckFrameAncestors(%q) = %v, want ok %v", v, err, ok)
		}
	}
}

func TestParseSettings(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	s, err := ParseSettings(env(nil))
	if err != nil || s.URL != "" || s.FrameAncestors != "'none'" {
		t.Fatalf("defaults: %+v %v", s, err)
	}
	s, err = ParseSettings(env(map[string]string{"PORTAL_URL": "https://api.gifq.com/prod/portal/", "PORTAL_FRAME_ANCESTORS": "  'self'   https://dashboard.gifq.com "}))
	if err != nil || s.URL != "https://api.gifq.com/prod/portal/" || s.FrameAncestors != "'self' https://dashboard.gifq.com" {
		t.Fatalf("set: %+v %v", s, err)
	}
	for _, bad := range []map[string]string{
		{"PORTAL_URL": "https://api.gifq.com/portal"}, {"PORTAL_URL": "ftp://api.gifq.com/portal/"},
		{"PORTAL_URL": "https://api.gifq.com/portal/#x"}, {"PORTAL_URL": "/portal/"},
		{"PORTAL_FRAME_ANCESTORS": "*"},
	} {
		if _, err := ParseSettings(env(bad)); err == nil {
			t.Errorf("ParseSettings(%v) accepted", bad)
		}
	}
}

func TestFileServesOnlyThePortal(t *testing.T) {
	for path, wantType := range map[string]string{
		"/portal/": "text/html; charset=utf-8", "/portal": "text/html; charset=utf-8", "/portal/index.html": "text/html; charset=utf-8",
		"/portal/portal-app.js": "text/javascript; charset=utf-8", "/portal/portal-style.css": "text/css; charset=utf-8",
		"/portal-app.js": "text/javascript; charset=utf-8", "/portal-style.css": "text/css; charset=utf-8",
	} {
		body, ct, ok := File(path)
		if !ok || ct != wantType || len(body) == 0 {
			t.Errorf("File(%q) = %d bytes, %q, %v", path, len(body), ct, ok)
		}
	}
	for _, path := range []string{"/portal/../go.mod", "/portal/assets/portal-app.js", "/portal/portal-nope.js", "/portal/session.go",
		"/v1/portal/", "/portal//portal-app.js", "/portal-/../go.mod", "/portal-x/portal-app.js", "/index.html", "/portalx"} {
		if _, _, ok := File(path); ok {
			t.Errorf("File(%q) served", path)
		}
	}
	html, _, _ := File("/portal/")
	if strings.Contains(string(html), "<script>") || strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") {
		t.Error("the page has inline script or fetches from elsewhere")
	}
}

func TestHeaders(t *testing.T) {
	h := Settings{FrameAncestors: "https://dashboard.gifq.com"}.Headers("text/html")
	csp := h["Content-Security-Policy"]
	for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self'", "frame-ancestors https://dashboard.gifq.com"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || h["Referrer-Policy"] != "no-referrer" || h["X-Content-Type-Options"] != "nosniff" {
		t.Errorf("headers %v", h)
	}
	if fa := (Settings{}).Headers("text/css")["Content-Security-Policy"]; !strings.HasSuffix(fa, "frame-ancestors 'none'") {
		t.Errorf("no setting: %q", fa)
	}
}

func TestSessionDiesWithItsKey(t *testing.T) {
	s, _ := NewSession("acct_1", "key_1", false, time.Hour, t0)
	live := domain.APIKey{ID: "key_1", AccountID: "acct_1"}
	revoked := live
	revoked.RevokedAt = t0.UnixMilli()
	other := live
	other.AccountID = "acct_2"
	noKey := s
	noKey.KeyID = ""
	for _, c := range []struct {
		name string
		s    Session
		k    *domain.APIKey
		want error
	}{
		{"live key", s, &live, nil},
		{"revoked key", s, &revoked, ErrKeyRevoked},
		{"key gone", s, nil, ErrKeyRevoked},
		{"another account's key", s, &other, ErrKeyRevoked},
		{"a session naming no key", noKey, &live, ErrKeyRevoked},
	} {
		if err := c.s.CheckKey(c.k); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
