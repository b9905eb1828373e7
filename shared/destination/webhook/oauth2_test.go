package webhook

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// tokenServer issues tok-1, tok-2, ... valid for life seconds, after
// checking the client's credentials as method sends them.
func tokenServer(t *testing.T, life int, fetches *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, secret, basic := r.BasicAuth()
		if basic { // RFC 6749 2.3.1: form-encoded inside Basic
			id, _ = url.QueryUnescape(id)
			secret, _ = url.QueryUnescape(secret)
		} else {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		if r.PostForm.Get("grant_type") != "client_credentials" || id != "client-1" || secret != "s3cret&=" {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		if r.PostForm.Get("scope") != "hooks:write hooks:read" || r.PostForm.Get("audience") != "https://api.example" {
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"invalid_scope"}`))
			return
		}
		n := fetches.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-" + string(rune('0'+n)), "token_type": "Bearer", "expires_in": life})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func oauthReq(receiver, tokenURL, method string) Request {
	r := req(receiver)
	r.EndpointID = "ep_1"
	r.OAuth2 = &domain.OAuth2{TokenURL: tokenURL, ClientID: "client-1", ClientSecret: "s3cret&=",
		Scopes: []string{"hooks:write", "hooks:read"}, Audience: "https://api.example", AuthMethod: method}
	return r
}

func bearerReceiver(t *testing.T, seen *[]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r.Header.Get("Authorization"))
		w.WriteHeader(204)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestOAuth2TokenFetchedOncePerExpiryAndRefreshedEarly(t *testing.T) {
	for _, method := range []string{"client_secret_basic", "client_secret_post"} {
		t.Run(method, func(t *testing.T) {
			var fetches atomic.Int32
			tokens := tokenServer(t, 3600, &fetches)
			var seen []string
			rcv := bearerReceiver(t, &seen)
			s := local(2 * time.Second)
			clock := time.Unix(1_800_000_000, 0)
			s.tokens.now = func() time.Time { return clock }
			for range 5 {
				if out := s.Send(context.Background(), oauthReq(rcv.URL, tokens.URL, method)); out.Verdict != destination.Delivered {
					t.Fatalf("outcome %+v", out)
				}
			}
			if fetches.Load() != 1 {
				t.Fatalf("%d token fetches for 5 attempts, want 1", fetches.Load())
			}
			clock = clock.Add(3600*time.Second - refreshEarly - time.Second) // just before the early refresh
			s.Send(context.Background(), oauthReq(rcv.URL, tokens.URL, method))
			if fetches.Load() != 1 {
				t.Fatalf("refetched %d before the refresh time", fetches.Load())
			}
			clock = clock.Add(2 * time.Second) // 59 s before expiry: refreshed early
			s.Send(context.Background(), oauthReq(rcv.URL, tokens.URL, method))
			if fetches.Load() != 2 {
				t.Fatalf("%d fetches, want a refresh 60 s before expiry", fetches.Load())
			}
			want := []string{"Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-1", "Bearer tok-2"}
			if strings.Join(seen, ",") != strings.Join(want, ",") {
				t.Fatalf("receiver saw %q", seen)
			}
			// A changed config (a new secret) is a new cache key: fetched again.
			r := oauthReq(rcv.URL, tokens.URL, method)
			r.OAuth2.ClientSecret = "other"
			if out := s.Send(context.Background(), r); out.Verdict != destination.Rejected || out.Class != ErrOAuthInvalidClient {
				t.Fatalf("wrong secret: %+v", out)
			}
		})
	}
}

// A receiver that refuses the token (revoked before its expiry) makes the
// next attempt fetch a new one.
func TestOAuth2TokenDroppedWhenTheReceiverRefusesIt(t *testing.T) {
	var fetches atomic.Int32
	tokens := tokenServer(t, 3600, &fetches)
	n := 0
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n++; n == 1 {
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(204)
	}))
	defer rcv.Close()
	s := local(2 * time.Second)
	if out := s.Send(context.Background(), oauthReq(rcv.URL, tokens.URL, "")); out.Status != 401 {
		t.Fatalf("first: %+v", out)
	}
	if out := s.Send(context.Background(), oauthReq(rcv.URL, tokens.URL, "")); out.Verdict != destination.Delivered || fetches.Load() != 2 {
		t.Fatalf("second: %+v, %d fetches, want 2", out, fetches.Load())
	}
}

func TestOAuth2TokenEndpointFailures(t *testing.T) {
	var seen []string
	rcv := bearerReceiver(t, &seen)
	cases := []struct {
		name    string
		status  int
		body    string
		verdict destination.Verdict
		class   string
	}{
		{"5xx is retried", 503, `{}`, destination.Retry, ErrOAuthUnavailable},
		{"invalid_client is for good", 401, `{"error":"invalid_client"}`, destination.Rejected, ErrOAuthInvalidClient},
		{"invalid_client as 400", 400, `{"error":"invalid_client"}`, destination.Rejected, ErrOAuthInvalidClient},
		{"other 4xx for good", 400, `{"error":"invalid_scope"}`, destination.Rejected, ErrOAuthRefused},
		{"200 without a token is retried", 200, `{"token_type":"bearer"}`, destination.Retry, ErrOAuthUnavailable},
		{"not a bearer token", 200, `{"access_token":"x","token_type":"mac"}`, destination.Retry, ErrOAuthUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			out := local(time.Second).Send(context.Background(), oauthReq(rcv.URL, srv.URL, ""))
			if out.Verdict != c.verdict || out.Class != c.class || out.Status != 0 {
				t.Fatalf("outcome %+v, want %v %s", out, c.verdict, c.class)
			}
		})
	}
	t.Run("timeout is retried within the attempt's deadline", func(t *testing.T) {
		block := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
		defer srv.Close()
		defer close(block)
		r := oauthReq(rcv.URL, srv.URL, "")
		r.Deadline = time.Now().Add(200 * time.Millisecond)
		out := local(5*time.Second).Send(context.Background(), r)
		if out.Verdict != destination.Retry || out.Class != ErrTimeout || !out.NoAnswer {
			t.Fatalf("outcome %+v", out)
		}
	})
	t.Run("a private token URL is blocked", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("token server reached") }))
		defer srv.Close()
		s := New(Options{Timeout: time.Second}) // the deployed policy: no private addresses
		out := s.Send(context.Background(), oauthReq("https://example.com/hook", srv.URL, ""))
		if out.Verdict != destination.Rejected || !out.Forbidden || out.Class != ErrBlockedAddress {
			t.Fatalf("outcome %+v", out)
		}
	})
	if len(seen) != 0 {
		t.Fatalf("the receiver got %d POSTs without a token", len(seen))
	}
}

// private_key_jwt: the token request carries a client assertion (RFC 7523)
// instead of a secret: iss and sub the client id, aud the token URL, a
// short exp and a jti of its own on each fetch.
func TestOAuth2PrivateKeyJWTSendsAFreshAssertion(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	var forms []url.Values
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if _, _, basic := r.BasicAuth(); basic {
			t.Error("private_key_jwt sent Basic credentials")
		}
		forms = append(forms, r.PostForm)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", len(forms)), "expires_in": 3600})
	}))
	defer tokens.Close()
	var seen []string
	rcv := bearerReceiver(t, &seen)
	r := req(rcv.URL)
	r.EndpointID = "ep_1"
	r.OAuth2 = &domain.OAuth2{TokenURL: tokens.URL + "/token", ClientID: "client-1", AuthMethod: "private_key_jwt",
		PrivateKey: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}
	s := local(2 * time.Second)
	for range 2 {
		if out := s.Send(context.Background(), r); out.Verdict != destination.Delivered {
			t.Fatalf("outcome %+v", out)
		}
		s.tokens.drop(tokenKey(r.EndpointID, r.OAuth2)) // the next attempt fetches again
	}
	if len(forms) != 2 || seen[1] != "Bearer tok-2" {
		t.Fatalf("%d fetches, receiver saw %v", len(forms), seen)
	}
	jtis := map[string]bool{}
	for _, f := range forms {
		if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || f.Get("client_id") != "client-1" || f.Get("client_secret") != "" {
			t.Fatalf("token request form %v", f)
		}
		parts := strings.Split(f.Get("client_assertion"), ".")
		if len(parts) != 3 {
			t.Fatalf("assertion %q", f.Get("client_assertion"))
		}
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, digest[:], sig); err != nil {
			t.Fatalf("RS256 signature: %v", err)
		}
		var c struct {
			Iss, Sub, Aud, Jti string
			Iat, Exp           int64
		}
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		if err := json.Unmarshal(raw, &c); err != nil || c.Iss != "client-1" || c.Sub != "client-1" || c.Aud != tokens.URL+"/token" || c.Exp-c.Iat != 60 || c.Jti == "" {
			t.Fatalf("claims %s", raw)
		}
		jtis[c.Jti] = true
	}
	if len(jtis) != 2 {
		t.Fatal("two fetches sent the same jti")
	}
}
