package endpointcfg

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

func f(v float64) *float64 { return &v }

func TestResolve(t *testing.T) {
	defaults := Defaults{RatePerSecond: 5, Timeout: 10 * time.Second}
	tests := []struct {
		name     string
		settings domain.EndpointSettings
		acct     domain.Account
		d        Defaults
		want     Effective
	}{
		{"nothing set: the deployment's", domain.EndpointSettings{}, domain.Account{}, defaults,
			Effective{Timeout: 10 * time.Second, RatePerSecond: 5}},
		{"the account's rate", domain.EndpointSettings{}, domain.Account{RatePerSecond: 20}, defaults,
			Effective{Timeout: 10 * time.Second, RatePerSecond: 20}},
		{"a lower endpoint rate is its own", domain.EndpointSettings{RatePerSecond: 2}, domain.Account{RatePerSecond: 20}, defaults,
			Effective{Timeout: 10 * time.Second, RatePerSecond: 2, OwnRate: true}},
		{"an endpoint rate above a lowered account's is the account's", domain.EndpointSettings{RatePerSecond: 4}, domain.Account{RatePerSecond: 3}, defaults,
			Effective{Timeout: 10 * time.Second, RatePerSecond: 3}},
		{"account rate unknown: the endpoint's is its own", domain.EndpointSettings{RatePerSecond: 4}, domain.Account{}, Defaults{Timeout: 10 * time.Second},
			Effective{Timeout: 10 * time.Second, RatePerSecond: 4, OwnRate: true}},
		{"the endpoint's timeout", domain.EndpointSettings{TimeoutSeconds: 3}, domain.Account{}, defaults,
			Effective{Timeout: 3 * time.Second, RatePerSecond: 5}},
		{"never past DELIVERY_TIMEOUT", domain.EndpointSettings{TimeoutSeconds: 9}, domain.Account{}, Defaults{RatePerSecond: 5, Timeout: 4 * time.Second},
			Effective{Timeout: 4 * time.Second, RatePerSecond: 5}},
		{"no DELIVERY_TIMEOUT: the contract's 10 s", domain.EndpointSettings{}, domain.Account{}, Defaults{RatePerSecond: 5},
			Effective{Timeout: 10 * time.Second, RatePerSecond: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Resolve(domain.Endpoint{Settings: tt.settings}, tt.acct, tt.d)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("Resolve = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestResolveCopiesHeaders(t *testing.T) {
	ep := domain.Endpoint{Settings: domain.EndpointSettings{Headers: map[string]string{"Authorization": "Bearer x"}}}
	e := Resolve(ep, domain.Account{}, Defaults{})
	if e.Headers["Authorization"] != "Bearer x" {
		t.Fatalf("headers = %v", e.Headers)
	}
	e.Headers["Authorization"] = "changed"
	if ep.Settings.Headers["Authorization"] != "Bearer x" {
		t.Error("changing the effective headers changed the endpoint's")
	}
}

func TestApplyAccepts(t *testing.T) {
	got, err := Apply(domain.EndpointSettings{}, Change{RateLimit: f(2), TimeoutSeconds: f(5),
		Headers: map[string]string{"authorization": "Bearer x", "X-Api-Key": "k"}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.EndpointSettings{RatePerSecond: 2, TimeoutSeconds: 5, Headers: map[string]string{"Authorization": "Bearer x", "X-Api-Key": "k"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// A later change keeps what it does not name, replaces, removes, resets.
	got, err = Apply(got, Change{Headers: map[string]string{"X-API-KEY": "k2"}, RemoveHeaders: []string{"AUTHORIZATION"}, Reset: []string{"rate_limit"}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	want = domain.EndpointSettings{TimeoutSeconds: 5, Headers: map[string]string{"X-Api-Key": "k2"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	got, err = Apply(got, Change{Reset: []string{"headers", "timeout_seconds"}}, 5)
	if err != nil || got.Headers != nil || got.TimeoutSeconds != 0 {
		t.Fatalf("after reset: %+v, %v", got, err)
	}
}

func TestApplyRefuses(t *testing.T) {
	ten := map[string]string{}
	for i := range MaxHeaders {
		ten[fmt.Sprintf("X-H%d", i)] = "v"
	}
	eleven := map[string]string{"X-H10": "v"}
	for k, v := range ten {
		eleven[k] = v
	}
	cur := domain.EndpointSettings{RatePerSecond: 1, Headers: ten}
	tests := []struct {
		name   string
		change Change
		cur    domain.EndpointSettings
		field  string
		says   string
	}{
		{"Host", Change{Headers: map[string]string{"Host": "evil"}}, domain.EndpointSettings{}, "headers", "Host"},
		{"host in any case", Change{Headers: map[string]string{"hOsT": "evil"}}, domain.EndpointSettings{}, "headers", "hOsT"},
		{"Content-Type", Change{Headers: map[string]string{"content-type": "text/plain"}}, domain.EndpointSettings{}, "headers", "content-type"},
		{"Content-Length", Change{Headers: map[string]string{"Content-Length": "1"}}, domain.EndpointSettings{}, "headers", "Content-Length"},
		{"User-Agent", Change{Headers: map[string]string{"User-Agent": "x"}}, domain.EndpointSettings{}, "headers", "User-Agent"},
		{"a signature header", Change{Headers: map[string]string{"X-Gifq-Signature": "t=1"}}, domain.EndpointSettings{}, "headers", "X-Gifq-Signature"},
		{"a Standard Webhooks header", Change{Headers: map[string]string{"Webhook-Id": "x"}}, domain.EndpointSettings{}, "headers", "Webhook-Id"},
		{"hop-by-hop", Change{Headers: map[string]string{"Transfer-Encoding": "chunked"}}, domain.EndpointSettings{}, "headers", "Transfer-Encoding"},
		{"not a token", Change{Headers: map[string]string{"Bad Name": "x"}}, domain.EndpointSettings{}, "headers", "Bad Name"},
		{"a colon", Change{Headers: map[string]string{"X-A:b": "x"}}, domain.EndpointSettings{}, "headers", "X-A:b"},
		{"an empty value", Change{Headers: map[string]string{"X-A": ""}}, domain.EndpointSettings{}, "headers", "X-A"},
		{"a newline in the value", Change{Headers: map[string]string{"X-A": "a\r\nX-Injected: 1"}}, domain.EndpointSettings{}, "headers", "control character"},
		{"a value too long", Change{Headers: map[string]string{"X-A": strings.Repeat("v", MaxHeaderValue+1)}}, domain.EndpointSettings{}, "headers", "X-A"},
		{"the same name twice", Change{Headers: map[string]string{"X-A": "1", "x-a": "2"}}, domain.EndpointSettings{}, "headers", "twice"},
		{"11 headers at once", Change{Headers: eleven}, domain.EndpointSettings{}, "headers", "at most 10"},
		{"an 11th header", Change{Headers: map[string]string{"X-New": "v"}}, cur, "headers", "at most 10"},
		{"timeout 0", Change{TimeoutSeconds: f(0)}, domain.EndpointSettings{}, "timeout_seconds", "1 to 10"},
		{"timeout 11", Change{TimeoutSeconds: f(11)}, domain.EndpointSettings{}, "timeout_seconds", "1 to 10"},
		{"timeout 2.5", Change{TimeoutSeconds: f(2.5)}, domain.EndpointSettings{}, "timeout_seconds", "whole"},
		{"rate 0", Change{RateLimit: f(0)}, domain.EndpointSettings{}, "rate_limit", "at least 0.01"},
		{"a rate outside DynamoDB's numbers (Schemathesis)", Change{RateLimit: f(5e-324)}, domain.EndpointSettings{}, "rate_limit", "at least 0.01"},
		{"rate above the account's", Change{RateLimit: f(6)}, domain.EndpointSettings{}, "rate_limit", "above the account's 5"},
		{"remove a name that is no token", Change{RemoveHeaders: []string{"X A"}}, domain.EndpointSettings{}, "remove_headers", "X A"},
		{"remove 11 names", Change{RemoveHeaders: strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")}, domain.EndpointSettings{}, "remove_headers", "at most 10"},
		{"reset of something else", Change{Reset: []string{"url"}}, domain.EndpointSettings{}, "reset", "url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(tt.cur, tt.change, 5)
			if err == nil {
				t.Fatalf("accepted: %+v", got)
			}
			if err.Field != tt.field || !strings.Contains(err.Message, tt.says) {
				t.Errorf("error = %s: %q, want %s saying %q", err.Field, err.Message, tt.field, tt.says)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.cur) {
				t.Errorf("a refused change changed the settings: %+v", got)
			}
		})
	}
}

func TestMask(t *testing.T) {
	for value, want := range map[string]string{"x": "****", "Bearer abc": "****", "Bearer secret-token-42": "****42"} {
		if got := Mask(value); got != want {
			t.Errorf("Mask(%q) = %q, want %q", value, got, want)
		}
	}
}

func TestMaskedHeadersShowNoValue(t *testing.T) {
	got := MaskedHeaders(domain.EndpointSettings{Headers: map[string]string{"Authorization": "Bearer secret-token-42", "X-Short": "abc"}})
	if fmt.Sprint(got) != "map[Authorization:****42 X-Short:****]" {
		t.Errorf("masked %v", got)
	}
	if got := MaskedHeaders(domain.EndpointSettings{}); got == nil || len(got) != 0 {
		t.Errorf("no headers: %#v, want an empty map", got)
	}
}

func TestOrigin(t *testing.T) {
	same := [][2]string{{"https://Example.com/a", "https://example.com:443/b?x=1"}, {"http://h:80/", "http://H/x"}}
	for _, p := range same {
		if Origin(p[0]) != Origin(p[1]) {
			t.Errorf("%s and %s: one origin", p[0], p[1])
		}
	}
	differ := [][2]string{{"https://example.com/", "http://example.com/"}, {"https://example.com/", "https://example.com:8443/"},
		{"https://a.example.com/", "https://b.example.com/"}, {"https://example.com@evil.example/", "https://example.com/"}}
	for _, p := range differ {
		if Origin(p[0]) == Origin(p[1]) {
			t.Errorf("%s and %s: two origins", p[0], p[1])
		}
	}
}

// Ordered is set and cleared by a change, kept by one that does not name
// it, and resolved as set.
func TestOrderedApplied(t *testing.T) {
	on, off := true, false
	s, err := Apply(domain.EndpointSettings{}, Change{Ordered: &on}, 0)
	if err != nil || !s.Ordered || !Resolve(domain.Endpoint{Settings: s}, domain.Account{}, Defaults{}).Ordered {
		t.Fatalf("on: %+v %v", s, err)
	}
	if s, _ = Apply(s, Change{Headers: map[string]string{"X-A": "b"}}, 0); !s.Ordered {
		t.Fatal("a change not naming it cleared it")
	}
	if s, _ = Apply(s, Change{Ordered: &off}, 0); s.Ordered || Resolve(domain.Endpoint{Settings: s}, domain.Account{}, Defaults{}).Ordered {
		t.Fatal("off")
	}
}

func TestApplyOAuth2(t *testing.T) {
	good := OAuth2Change{TokenURL: "https://auth.example.com/token", ClientID: "c1", ClientSecret: "s1", Scopes: []string{"hooks:write"}}
	next, err := Apply(domain.EndpointSettings{}, Change{OAuth2: &good}, 0)
	if err != nil || next.OAuth2 == nil || next.OAuth2.ClientSecret != "s1" || next.OAuth2.AuthMethod != AuthMethodBasic {
		t.Fatalf("set: %+v %v", next.OAuth2, err)
	}
	if v := ViewOf(next); v.OAuth2 == nil || v.OAuth2.ClientSecret != "****" {
		t.Fatalf("view shows %+v", v.OAuth2)
	}
	if e := Resolve(domain.Endpoint{Settings: next}, domain.Account{}, Defaults{}); e.OAuth2 != next.OAuth2 {
		t.Fatal("Resolve drops the OAuth2 settings")
	}
	// The secret may be left out for the same client at the same origin only.
	keep := good
	keep.ClientSecret, keep.TokenURL = "", "https://auth.example.com/v2/token"
	if kept, err := Apply(next, Change{OAuth2: &keep}, 0); err != nil || kept.OAuth2.ClientSecret != "s1" {
		t.Fatalf("keep the secret: %+v %v", kept.OAuth2, err)
	}
	other := keep
	other.TokenURL = "https://evil.example.net/token"
	if _, err := Apply(next, Change{OAuth2: &other}, 0); err == nil || err.Field != "oauth2.client_secret" {
		t.Fatalf("a secret followed the token URL to another origin: %v", err)
	}
	if reset, err := Apply(next, Change{Reset: []string{"oauth2"}}, 0); err != nil || reset.OAuth2 != nil {
		t.Fatalf("reset: %+v %v", reset.OAuth2, err)
	}
	bad := func(mut func(*OAuth2Change)) OAuth2Change { c := good; mut(&c); return c }
	for field, c := range map[string]OAuth2Change{
		"oauth2.token_url":     bad(func(c *OAuth2Change) { c.TokenURL = "/token" }),
		"oauth2.client_id":     bad(func(c *OAuth2Change) { c.ClientID = strings.Repeat("x", MaxOAuth2ClientID+1) }),
		"oauth2.client_secret": bad(func(c *OAuth2Change) { c.ClientSecret = "" }),
		"oauth2.scopes":        bad(func(c *OAuth2Change) { c.Scopes = []string{`a"b`} }),
		"oauth2.audience":      bad(func(c *OAuth2Change) { c.Audience = "a\nb" }),
		"oauth2.auth_method":   bad(func(c *OAuth2Change) { c.AuthMethod = "tls_client_auth" }),
		"oauth2.private_key":   bad(func(c *OAuth2Change) { c.PrivateKey = "-----BEGIN PRIVATE KEY-----" }),
	} {
		if _, err := Apply(domain.EndpointSettings{}, Change{OAuth2: &c}, 0); err == nil || err.Field != field {
			t.Errorf("%s: got %v", field, err)
		}
	}
}

func TestApplyFilter(t *testing.T) {
	cur := domain.EndpointSettings{TimeoutSeconds: 3}
	next, err := Apply(cur, Change{Filter: []byte(`{ "event": ["payout.paid"] }`)}, 0)
	if err != nil || next.Filter != `{"event":["payout.paid"]}` || next.TimeoutSeconds != 3 {
		t.Fatalf("set: %+v %v", next, err)
	}
	if kept, err := Apply(next, Change{}, 0); err != nil || kept.Filter != next.Filter {
		t.Fatalf("a change without a filter dropped it: %+v %v", kept, err)
	}
	if reset, err := Apply(next, Change{Reset: []string{"filter"}}, 0); err != nil || reset.Filter != "" {
		t.Fatalf("reset: %+v %v", reset, err)
	}
	if _, err := Apply(next, Change{Filter: []byte(`{"event":"payout.paid"}`)}, 0); err == nil || err.Field != "filter" {
		t.Fatalf("a bad filter: %v", err)
	}
	if got := ViewOf(next).Filter; string(got) != next.Filter {
		t.Fatalf("view shows %s", got)
	}
}

// private_key_jwt takes a private key (RS256 or ES256) and no secret; the
// key is write-only and may be left out only for the same client and
// token URL origin.
func TestApplyOAuth2PrivateKeyJWT(t *testing.T) {
	_, keyPEM := selfSigned(t) // a P-256 key
	good := OAuth2Change{TokenURL: "https://auth.example.com/token", ClientID: "c1", AuthMethod: AuthMethodJWT, PrivateKey: keyPEM}
	next, err := Apply(domain.EndpointSettings{}, Change{OAuth2: &good}, 0)
	if err != nil || next.OAuth2.PrivateKey != keyPEM || next.OAuth2.ClientSecret != "" {
		t.Fatalf("set: %+v %v", next.OAuth2, err)
	}
	if v := ViewOf(next).OAuth2; v.PrivateKey != "****" || v.ClientSecret != "" || v.AuthMethod != AuthMethodJWT {
		t.Fatalf("view shows %+v", v)
	}
	keep := good
	keep.PrivateKey = ""
	if kept, err := Apply(next, Change{OAuth2: &keep}, 0); err != nil || kept.OAuth2.PrivateKey != keyPEM {
		t.Fatalf("keep the key: %v", err)
	}
	keep.TokenURL = "https://evil.example.net/token"
	if _, err := Apply(next, Change{OAuth2: &keep}, 0); err == nil || err.Field != "oauth2.private_key" {
		t.Fatalf("the key followed the token URL to another origin: %v", err)
	}
	withSecret := good
	withSecret.ClientSecret = "s1"
	if _, err := Apply(domain.EndpointSettings{}, Change{OAuth2: &withSecret}, 0); err == nil || err.Field != "oauth2.client_secret" {
		t.Fatalf("a secret with private_key_jwt: %v", err)
	}
	basicWithKey := OAuth2Change{TokenURL: good.TokenURL, ClientID: "c1", ClientSecret: "s1", PrivateKey: keyPEM}
	if _, err := Apply(domain.EndpointSettings{}, Change{OAuth2: &basicWithKey}, 0); err == nil || err.Field != "oauth2.private_key" {
		t.Fatalf("a key with client_secret_basic: %v", err)
	}
}
