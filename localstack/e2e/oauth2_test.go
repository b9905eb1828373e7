package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A receiver behind an API gateway that takes only bearer tokens from its
// OAuth token server: every attempt (a retry too) carries a token the
// server issued, and the token is fetched once for all the deliveries.
func TestOAuth2ClientCredentialsToReceivers(t *testing.T) {
	h := start(t, opts{kms: true})
	_, key := h.account(t)

	const clientSecret = "cs_e2e_very_secret_value"
	var fetches atomic.Int32
	var mu sync.Mutex
	issued := map[string]bool{}
	tokens := h.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, secret, _ := r.BasicAuth()
		if id != "gifq-hooks" || secret != clientSecret || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "hooks.write" {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		tok := fmt.Sprintf("at_%d_%d", fetches.Add(1), time.Now().UnixNano())
		mu.Lock()
		issued[tok] = true
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	}))

	var unauthorized atomic.Int32
	rv := h.receiver(t, func(n int, w http.ResponseWriter, r *http.Request) (int, string) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		mu.Lock()
		valid := ok && issued[tok]
		mu.Unlock()
		if !valid {
			unauthorized.Add(1)
			return 401, "no valid bearer token"
		}
		if n == 1 {
			return 503, "" // one retry: it must carry the token too
		}
		return 204, ""
	})
	oauth := map[string]any{"token_url": tokens + "/oauth/token", "client_id": "gifq-hooks", "client_secret": clientSecret, "scopes": []string{"hooks.write"}}

	// Bad settings are refused with 422 and register nothing.
	for _, bad := range []map[string]any{
		{"token_url": "ftp://127.0.0.1/token", "client_id": "x", "client_secret": "y"},
		{"token_url": tokens, "client_id": "x"}, // no secret
		{"token_url": tokens, "client_id": "x", "client_secret": "y", "auth_method": "private_key_jwt"},
		{"token_url": tokens, "client_id": "x", "client_secret": "y", "scopes": []string{"a b"}},
	} {
		var e struct {
			Error struct{ Code, Message string }
		}
		if st := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": rv.URL, "settings": map[string]any{"oauth2": bad}}, &e); st != 422 || e.Error.Code != "invalid_settings" {
			t.Fatalf("oauth2 %v: %d %+v, want 422 invalid_settings", bad, st, e)
		}
	}
	var list struct{ Data []json.RawMessage }
	h.call(t, key, "GET", "/v1/endpoints", nil, &list)
	if len(list.Data) != 0 {
		t.Fatalf("a refused registration made %d endpoints", len(list.Data))
	}

	var ep struct {
		ID       string
		Settings struct{ OAuth2 map[string]any }
	}
	if st := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": rv.URL, "settings": map[string]any{"oauth2": oauth}}, &ep); st != 201 {
		t.Fatalf("register: %d", st)
	}
	if s := fmt.Sprint(ep.Settings.OAuth2["client_secret"]); strings.Contains(s, "secret") || ep.Settings.OAuth2["auth_method"] != "client_secret_basic" {
		t.Fatalf("the answer shows oauth2 as %v", ep.Settings.OAuth2)
	}
	// A PATCH with a bad token URL changes nothing.
	if st := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"settings": map[string]any{"oauth2": map[string]any{"token_url": "http://[::1", "client_id": "gifq-hooks"}}}, nil); st != 422 {
		t.Fatalf("PATCH bad token_url: %d", st)
	}

	var ids []string
	for range 4 {
		ev := h.publish(t, key, payout)
		ids = append(ids, ev.Deliveries[0].ID)
	}
	for _, id := range ids {
		if d := h.waitFor(t, key, id, 30*time.Second, settled); d.Status != "delivered" {
			t.Fatalf("delivery %s: %+v", id, d)
		}
	}
	if n := len(rv.requests()); n != 5 || unauthorized.Load() != 0 {
		t.Fatalf("receiver saw %d requests (%d without a valid token), want 5 (4 deliveries, 1 retry), all with one", n, unauthorized.Load())
	}
	// One fetch per warm instance: here one; a deployed stack may run the
	// attempts on several instances, each fetching once.
	if f := fetches.Load(); f != 1 && !(remote() && f >= 1 && f < 5) {
		t.Fatalf("the token server saw %d fetches for 5 attempts, want 1", f)
	}

	// The client secret is in the table only sealed.
	if raw := h.endpointItem(t, ep.ID); strings.Contains(raw, clientSecret) || !strings.Contains(raw, "gifq-hooks") {
		t.Fatal("the table holds the OAuth2 client secret in plain text (or no OAuth2 settings)")
	}
	// Re-pointed to another origin, the credentials must be confirmed.
	var e struct{ Error struct{ Code string } }
	var after struct {
		Settings struct{ OAuth2 map[string]any }
	}
	if st := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"url": "http://127.0.0.2:9/hook"}, &e); st != 422 || e.Error.Code != "oauth2_not_confirmed" {
		t.Fatalf("re-pointing kept the OAuth2 credentials: %d %s", st, e.Error.Code)
	}
	if st := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"url": "http://127.0.0.2:9/hook", "settings": map[string]any{"reset": []string{"oauth2"}}}, &after); st != 200 || after.Settings.OAuth2 != nil {
		t.Fatalf("re-point with reset oauth2: %d %v", st, after.Settings.OAuth2)
	}

}

// endpoint.auth_failed is raised once per state change: when the token
// server starts refusing the endpoint's client, not for each delivery it
// fails; a success clears it, so the next refusal raises it again.
func TestAuthFailedIsRaisedOncePerStateChange(t *testing.T) {
	localOnly(t)
	logs := &lockedBuffer{}
	h := start(t, opts{kms: true, logs: logs, env: map[string]string{"LOG_LEVEL": "info"}})
	_, key := h.account(t)
	var refuse atomic.Bool
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at_ok", "token_type": "Bearer", "expires_in": 1})
	}))
	defer tokens.Close()
	rv := h.receiver(t, always(204))
	var ep struct{ ID string }
	oauth := map[string]any{"token_url": tokens.URL + "/token", "client_id": "gifq-hooks", "client_secret": "cs_e2e_auth_failed"}
	if st := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": rv.URL, "settings": map[string]any{"oauth2": oauth}}, &ep); st != 201 {
		t.Fatalf("register: %d", st)
	}
	authFailed := func() int {
		n := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"msg":"operational event"`) && strings.Contains(line, `"endpoint.auth_failed"`) && strings.Contains(line, ep.ID) {
				n++
			}
		}
		return n
	}
	publish := func(n int, want string) {
		t.Helper()
		var ids []string
		for range n {
			ids = append(ids, h.publish(t, key, payout).Deliveries[0].ID)
		}
		for _, id := range ids {
			if d := h.waitFor(t, key, id, 30*time.Second, settled); d.Status != want {
				t.Fatalf("delivery %s: %+v, want %s", id, d, want)
			}
		}
	}
	refuse.Store(true)
	publish(20, "failed")
	if n := authFailed(); n != 1 {
		t.Fatalf("20 deliveries refused by the token server raised endpoint.auth_failed %d times, want once", n)
	}
	refuse.Store(false)
	time.Sleep(1100 * time.Millisecond) // the refused token is never cached; the good one lives 1 s
	publish(1, "delivered")
	refuse.Store(true)
	time.Sleep(1100 * time.Millisecond)
	publish(3, "failed")
	if n := authFailed(); n != 2 {
		t.Fatalf("refused again after a success: endpoint.auth_failed raised %d times in all, want 2", n)
	}
}

// private_key_jwt: the token server takes only a client assertion signed
// with the endpoint's key (ES256), for its own URL, short-lived, each jti
// once; the receiver gets every attempt with the token it issued, fetched
// once; the key is write-only and in the table only sealed.
func TestOAuth2PrivateKeyJWTToReceivers(t *testing.T) {
	h := start(t, opts{kms: true})
	_, key := h.account(t)
	signer, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(signer)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	var fetches atomic.Int32
	var mu sync.Mutex
	jtis := map[string]bool{}
	var issued sync.Map
	var tokenURL string
	tokens := h.serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		parts := strings.Split(r.PostForm.Get("client_assertion"), ".")
		refuse := func(why string) {
			t.Errorf("token server refused the assertion: %s", why)
			w.WriteHeader(401)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
		}
		if r.PostForm.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || r.PostForm.Get("client_id") != "gifq-hooks" || len(parts) != 3 {
			refuse("form " + r.PostForm.Encode())
			return
		}
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if len(sig) != 64 || !ecdsa.Verify(&signer.PublicKey, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			refuse("signature")
			return
		}
		var hdr struct{ Alg string }
		var c struct {
			Iss, Sub, Aud, Jti string
			Iat, Exp           int64
		}
		hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
		cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
		_ = json.Unmarshal(hb, &hdr)
		_ = json.Unmarshal(cb, &c)
		now := time.Now().Unix()
		mu.Lock()
		replayed := jtis[c.Jti]
		jtis[c.Jti] = true
		mu.Unlock()
		if hdr.Alg != "ES256" || c.Iss != "gifq-hooks" || c.Sub != "gifq-hooks" || c.Aud != tokenURL || c.Exp < now || c.Exp-c.Iat > 60 || c.Jti == "" || replayed {
			refuse(string(hb) + " " + string(cb))
			return
		}
		tok := fmt.Sprintf("at_jwt_%d", fetches.Add(1))
		issued.Store(tok, true)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	}))
	tokenURL = tokens + "/oauth/token"
	var unauthorized atomic.Int32
	rv := h.receiver(t, func(n int, w http.ResponseWriter, r *http.Request) (int, string) {
		if _, ok := issued.Load(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")); !ok {
			unauthorized.Add(1)
			return 401, ""
		}
		return 204, ""
	})
	oauth := map[string]any{"token_url": tokenURL, "client_id": "gifq-hooks", "auth_method": "private_key_jwt", "private_key": keyPEM}
	var ep struct {
		ID       string
		Settings struct{ OAuth2 map[string]any }
	}
	if st := h.call(t, key, "POST", "/v1/endpoints", map[string]any{"url": rv.URL, "settings": map[string]any{"oauth2": oauth}}, &ep); st != 201 {
		t.Fatalf("register: %d", st)
	}
	if s := fmt.Sprint(ep.Settings.OAuth2); strings.Contains(s, "PRIVATE KEY") || ep.Settings.OAuth2["private_key"] != "****" {
		t.Fatalf("the answer shows oauth2 as %v", s)
	}
	var ids []string
	for range 3 {
		ids = append(ids, h.publish(t, key, payout).Deliveries[0].ID)
	}
	for _, id := range ids {
		if d := h.waitFor(t, key, id, 30*time.Second, settled); d.Status != "delivered" {
			t.Fatalf("delivery %s: %+v", id, d)
		}
	}
	if f, u := fetches.Load(), unauthorized.Load(); (f != 1 && !(remote() && f >= 1 && f < 3)) || u != 0 || len(rv.requests()) != 3 {
		t.Fatalf("%d token fetches, %d unauthorized, %d requests; want 1 (one per warm instance), 0, 3", f, u, len(rv.requests()))
	}
	if raw, body := h.endpointItem(t, ep.ID), strings.Split(keyPEM, "\n")[1]; strings.Contains(raw, body) || !strings.Contains(raw, "sealed_private_key") {
		t.Fatal("the table holds the private key in plain text (or no sealed key)")
	}
	// A PATCH may leave the key out for the same client and token URL origin.
	delete(oauth, "private_key")
	if st := h.call(t, key, "PATCH", "/v1/endpoints/"+ep.ID, map[string]any{"settings": map[string]any{"oauth2": oauth}}, nil); st != 200 {
		t.Fatalf("PATCH keeping the key: %d", st)
	}
}
