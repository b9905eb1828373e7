package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/clientassertion"
	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// Error classes of the OAuth2 token fetch, as recorded in the attempt log.
const (
	ErrOAuthInvalidClient = destination.ClassAuthInvalidClient // the token endpoint refused the client: failed for good
	ErrOAuthRefused       = destination.ClassAuthRefused       // any other 4xx of the token endpoint: failed for good
	ErrOAuthUnavailable   = "oauth_token_unavailable"
)

// Token cache figures.
const (
	// refreshEarly: a token is fetched again this long before it expires,
	// so that none expires on its way to the receiver.
	refreshEarly = 60 * time.Second
	// defaultTokenLife is a token's life when the server gives no expires_in.
	defaultTokenLife = 5 * time.Minute
	maxTokenBody     = 64 << 10
	maxCachedTokens  = 10000
)

// tokenCache keeps bearer tokens per warm instance, keyed by endpoint and
// the digest of its OAuth2 config (a changed config is a new key); one
// fetch at a time per key.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]*tokenEntry
	now     func() time.Time
}

type tokenEntry struct {
	mu      sync.Mutex // held during a fetch: concurrent attempts wait for it
	token   string
	refresh time.Time // fetch again from then on
}

func newTokenCache(now func() time.Time) *tokenCache {
	return &tokenCache{entries: map[string]*tokenEntry{}, now: now}
}

// tokenKey is the cache key of endpoint's config o.
func tokenKey(endpointID string, o *domain.OAuth2) string {
	h := sha256.New()
	for _, f := range []string{o.TokenURL, o.ClientID, o.ClientSecret, strings.Join(o.Scopes, " "), o.Audience, o.AuthMethod, o.PrivateKey} {
		fmt.Fprintf(h, "%d:%s", len(f), f)
	}
	return endpointID + "/" + hex.EncodeToString(h.Sum(nil))
}

// tokenError is a failed fetch, as the attempt's outcome.
type tokenError struct{ outcome destination.Outcome }

func (e *tokenError) Error() string { return e.outcome.Error }

// get returns the token for key, fetching it with fetch when none is
// cached or it is due for refresh. fetch returns the token and its life.
func (c *tokenCache) get(ctx context.Context, key string, fetch func(context.Context) (string, time.Duration, error)) (string, error) {
	c.mu.Lock()
	e := c.entries[key]
	if e == nil {
		if len(c.entries) >= maxCachedTokens {
			clear(c.entries) // bounded memory; tokens are fetched again
		}
		e = &tokenEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && c.now().Before(e.refresh) {
		return e.token, nil
	}
	tok, life, err := fetch(ctx)
	if err != nil {
		return "", err
	}
	if life <= 0 {
		life = defaultTokenLife
	}
	early := min(refreshEarly, life/2)
	e.token, e.refresh = tok, c.now().Add(life-early)
	return tok, nil
}

// drop forgets key's token: the receiver refused it (401), so the next
// attempt fetches a new one.
func (c *tokenCache) drop(key string) {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e != nil {
		e.mu.Lock()
		e.token = ""
		e.mu.Unlock()
	}
}

// token is the bearer token for r's endpoint, fetched through the sender's
// client (the SSRF dial guard, no redirects) within ctx, the attempt's
// deadline.
func (s *Sender) token(ctx context.Context, r Request) (string, error) {
	o := r.OAuth2
	return s.tokens.get(ctx, tokenKey(r.EndpointID, o), func(ctx context.Context) (string, time.Duration, error) {
		return s.fetchToken(ctx, o)
	})
}

func (s *Sender) fetchToken(ctx context.Context, o *domain.OAuth2) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(o.Scopes) > 0 {
		form.Set("scope", strings.Join(o.Scopes, " "))
	}
	if o.Audience != "" {
		form.Set("audience", o.Audience)
	}
	switch o.AuthMethod {
	case "client_secret_post":
		form.Set("client_id", o.ClientID)
		form.Set("client_secret", o.ClientSecret)
	case "private_key_jwt":
		// RFC 7523 2.2: a fresh assertion per fetch (its own jti, aud the
		// token URL, a short exp).
		key, err := clientassertion.Parse(o.PrivateKey)
		if err != nil {
			return "", 0, fail(destination.Rejected, ErrOAuthRefused, "the endpoint's private_key cannot sign: "+err.Error())
		}
		jwt, err := key.Sign(o.ClientID, o.TokenURL, s.now())
		if err != nil {
			return "", 0, fail(destination.Retry, ErrOAuthUnavailable, "signing the client assertion failed")
		}
		form.Set("client_id", o.ClientID)
		form.Set("client_assertion_type", clientassertion.Type)
		form.Set("client_assertion", jwt)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fail(destination.Rejected, ErrOAuthRefused, "invalid token URL")
	}
	if o.AuthMethod == "" || o.AuthMethod == "client_secret_basic" {
		// RFC 6749 2.3.1: the id and secret form-encoded, then Basic.
		req.SetBasicAuth(url.QueryEscape(o.ClientID), url.QueryEscape(o.ClientSecret))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := s.client.Do(req)
	if err != nil {
		class, msg := classify(err)
		if class == ErrBlockedAddress {
			e := fail(destination.Rejected, class, "the token URL resolved to an address deliveries may not reach")
			e.outcome.Forbidden = true
			return "", 0, e
		}
		e := fail(destination.Retry, class, "token endpoint: "+msg)
		e.outcome.NoAnswer = true
		return "", 0, e
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxTokenBody))
	var tr struct {
		AccessToken string          `json:"access_token"`
		TokenType   string          `json:"token_type"`
		ExpiresIn   json.Number     `json:"expires_in"`
		Error       json.RawMessage `json:"error"`
	}
	jsonErr := json.Unmarshal(body, &tr)
	switch st := resp.StatusCode; {
	case st == http.StatusOK && jsonErr == nil && tr.AccessToken != "" && !hasCtl(tr.AccessToken) && (tr.TokenType == "" || strings.EqualFold(tr.TokenType, "bearer")):
		secs, _ := tr.ExpiresIn.Int64()
		return tr.AccessToken, time.Duration(min(max(secs, 0), 86400)) * time.Second, nil
	case st == http.StatusOK:
		return "", 0, fail(destination.Retry, ErrOAuthUnavailable, "token endpoint answered 200 without a bearer access_token")
	case (st == http.StatusBadRequest || st == http.StatusUnauthorized) && string(tr.Error) == `"invalid_client"`:
		return "", 0, fail(destination.Rejected, ErrOAuthInvalidClient, fmt.Sprintf("token endpoint answered %d invalid_client", st))
	case st >= 500 || st == http.StatusTooManyRequests || st == http.StatusRequestTimeout:
		return "", 0, fail(destination.Retry, ErrOAuthUnavailable, fmt.Sprintf("token endpoint answered %d", st))
	case st >= 400:
		return "", 0, fail(destination.Rejected, ErrOAuthRefused, fmt.Sprintf("token endpoint answered %d", st))
	}
	return "", 0, fail(destination.Retry, ErrOAuthUnavailable, fmt.Sprintf("token endpoint answered %d", resp.StatusCode))
}

func fail(v destination.Verdict, class, msg string) *tokenError {
	return &tokenError{destination.Outcome{Verdict: v, Class: class, Error: msg}}
}

// hasCtl: a token that could not go in a header as it is.
func hasCtl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// tokenOutcome is the outcome of an attempt whose token fetch failed.
func tokenOutcome(err error, start time.Time, d time.Duration) destination.Outcome {
	var te *tokenError
	if !errors.As(err, &te) {
		return destination.Outcome{Verdict: destination.Retry, Class: ErrOAuthUnavailable, Error: "token fetch failed", StartedAt: start, Duration: d}
	}
	o := te.outcome
	o.StartedAt, o.Duration = start, d
	return o
}
