// Package webhook is the HTTP destination provider: the POST of one
// attempt, signed, with a timeout, never following redirects, through the
// SSRF dial guard; it maps what came back (a status, a transport error)
// onto the seam's Outcome (Verdict).
package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/signing"
)

// Headers every attempt carries besides X-Gifq-Signature and the Standard
// Webhooks three (signing.HeaderWebhookID and the rest).
const (
	HeaderEvent    = "X-Gifq-Event"
	HeaderEventID  = "X-Gifq-Event-Id"
	HeaderDelivery = "X-Gifq-Delivery" // unique per attempt
	HeaderAttempt  = "X-Gifq-Attempt"
	// A keyed event's: its ordering key and number in the key's sequence;
	// on an ordered endpoint, "failed" when the key's previous event failed
	// for good there.
	HeaderOrderingKey = "X-Gifq-Ordering-Key"
	HeaderSequence    = "X-Gifq-Sequence"
	HeaderPrevious    = "X-Gifq-Previous"
	UserAgent         = "gifq-webhooks/1.0"
)

// Request and Outcome are the seam's.
type (
	Request = destination.Request
	Outcome = destination.Outcome
)

// Transport error classes, as recorded in the attempt log.
const (
	ErrTimeout        = "timeout"
	ErrDNS            = "dns"
	ErrConnRefused    = "connection_refused"
	ErrConnReset      = "connection_reset"
	ErrTLS            = "tls"
	ErrBlockedAddress = "blocked_address"
	ErrNetwork        = "network"
)

// Sender posts attempts.
type Sender struct {
	client  *http.Client
	maxBody int
	now     func() time.Time
	tokens  *tokenCache
	base    *http.Transport // each mutual-TLS endpoint's transport is a clone of it
	timeout time.Duration
	tlsMu   sync.Mutex
	tlsBy   map[string]*http.Client // tlsKey: endpoint and digest of its TLS settings
}

// Options configure a Sender.
type Options struct {
	Policy        netguard.Policy
	Timeout       time.Duration // the whole exchange; the contract's read timeout is 10 s
	MaxStoredBody int           // bytes of the response kept; 0 means 1024
	Resolver      *net.Resolver // nil: the system resolver
}

// New returns a Sender with its own connection pool.
func New(o Options) *Sender {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxStoredBody <= 0 {
		o.MaxStoredBody = 1024
	}
	dialer := o.Policy.Dialer(o.Timeout)
	dialer.Resolver = o.Resolver
	tr := &http.Transport{
		Proxy:                 nil, // never through an environment proxy: it would bypass the dial guard
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       60 * time.Second,
		DisableCompression:    true,
	}
	return &Sender{
		client:  newClient(tr, o.Timeout),
		maxBody: o.MaxStoredBody,
		now:     time.Now,
		tokens:  newTokenCache(time.Now),
		base:    tr,
		timeout: o.Timeout,
		tlsBy:   map[string]*http.Client{},
	}
}

func newClient(tr *http.Transport, timeout time.Duration) *http.Client {
	return &http.Client{
		// A span per attempt when tracing is on (obs.StartTracing:
		// deployed functions with Active tracing); otherwise tr as it is.
		Transport: obs.TracedTransport(tr),
		Timeout:   timeout,
		// Redirects are never followed: a 3xx is the receiver's answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// standardSignature is webhook-signature's value: the v1 entries unless
// left out, then the v1a ones; space-separated, as the spec has them.
func standardSignature(r Request, at time.Time) string {
	var parts []string
	if !r.OmitV1 {
		if sig := signing.SignStandard(r.Secrets, r.DeliveryID, at, r.Body); sig != "" {
			parts = append(parts, sig)
		}
	}
	if sig := signing.SignStandardV1a(r.V1aKeys, r.DeliveryID, at, r.Body); sig != "" {
		parts = append(parts, sig)
	}
	return strings.Join(parts, " ")
}

// Schemas: the http type, configured by the endpoint's url and settings.
func (s *Sender) Schemas() []destination.Schema {
	return []destination.Schema{{Type: domain.DestinationHTTP, Label: "HTTPS POST"}}
}

// Validate has nothing to check: the URL is checked by the API's netguard
// rules.
func (s *Sender) Validate(domain.Destination) error { return nil }

// Check has nothing to prove before the first attempt.
func (s *Sender) Check(context.Context, domain.Destination) error { return nil }

// Send makes one attempt. It never returns an error: a failure is an Outcome.
func (s *Sender) Send(ctx context.Context, r Request) Outcome {
	start := s.now()
	res := Outcome{StartedAt: start}
	if !r.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.Deadline)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		res.Verdict, res.NoAnswer, res.Class, res.Error = destination.Retry, true, ErrNetwork, "invalid request URL"
		return res
	}
	h := req.Header
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	if r.OAuth2 != nil {
		// Within the attempt's deadline: the token fetch is part of it.
		tok, err := s.token(ctx, r)
		if err != nil {
			return tokenOutcome(err, start, s.now().Sub(start))
		}
		h.Set("Authorization", "Bearer "+tok)
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(HeaderEvent, r.EventType)
	h.Set(HeaderEventID, r.EventID)
	h.Set(HeaderDelivery, r.AttemptID)
	h.Set(HeaderAttempt, strconv.Itoa(r.AttemptNum))
	if r.OrderingKey != "" && r.Seq > 0 {
		h.Set(HeaderOrderingKey, r.OrderingKey)
		h.Set(HeaderSequence, strconv.FormatInt(r.Seq, 10))
	}
	if r.PrevFailed {
		h.Set(HeaderPrevious, "failed")
	}
	// A fresh timestamp and signature on every attempt.
	h.Set(signing.Header, signing.Sign(r.Secrets, start, r.Body))
	// Standard Webhooks: the receiver's idempotency key is the delivery, and
	// the timestamp and signature are the attempt's, like X-Gifq-Signature.
	h.Set(signing.HeaderWebhookID, r.DeliveryID)
	h.Set(signing.HeaderWebhookTimestamp, strconv.FormatInt(start.Unix(), 10))
	if sig := standardSignature(r, start); sig != "" {
		h.Set(signing.HeaderWebhookSignature, sig)
	}

	client, err := s.clientFor(r)
	if err != nil {
		res.Verdict, res.Class, res.Error = destination.Rejected, ErrTLS, "the endpoint's client certificate or CA bundle does not load"
		return res
	}
	resp, err := client.Do(req)
	if err != nil {
		res.Duration = s.now().Sub(start)
		res.Class, res.Error = classify(err)
		res.NoAnswer = true
		res.Verdict = destination.Retry
		if res.Class == ErrBlockedAddress {
			// Retrying cannot make a forbidden address allowed.
			res.Verdict, res.Forbidden, res.NoAnswer = destination.Rejected, true, false
		}
		return res
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	if r.OAuth2 != nil && res.Status == http.StatusUnauthorized {
		s.tokens.drop(tokenKey(r.EndpointID, r.OAuth2)) // revoked early, perhaps
	}
	res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), start)
	res.Verdict = VerdictOf(res.Status, res.RetryAfter)
	buf, _ := io.ReadAll(io.LimitReader(resp.Body, int64(s.maxBody)+1))
	if len(buf) > s.maxBody {
		buf, res.Truncated = buf[:s.maxBody], true
	}
	res.Response = validUTF8(buf)
	// Drain a little more so the connection can be reused; give up on big bodies.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	res.Duration = s.now().Sub(start)
	return res
}

// VerdictOf applies the contract to an HTTP answer: 2xx delivered; 3xx
// and 4xx failed for good (redirects are never followed); 5xx retried.
// A 410 Gone is Standard Webhooks' "stop sending": gone. A 429 with a
// Retry-After header is a throttle, not a rejection: the request is logged
// but uses no attempt, and the endpoint is paused for the time asked
// (capped); a 429 without Retry-After stays a 4xx.
func VerdictOf(status int, retryAfter time.Duration) destination.Verdict {
	switch {
	case status >= 200 && status < 300:
		return destination.Delivered
	case status == http.StatusGone:
		return destination.Gone
	case status == http.StatusTooManyRequests && retryAfter > 0:
		return destination.Throttled
	case status >= 500:
		return destination.Retry
	}
	return destination.Rejected // 1xx (never final here), 3xx, 4xx
}

// validUTF8 makes the stored prefix a valid DynamoDB string; a rune cut by the
// byte cap becomes U+FFFD.
func validUTF8(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// classify turns a transport error into the attempt log's error class and a
// short message that contains no URL (URLs may carry tokens in their query).
func classify(err error) (class, msg string) {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	var netErr net.Error
	switch {
	case errors.Is(err, netguard.ErrForbidden):
		return ErrBlockedAddress, "the endpoint resolved to an address deliveries may not reach"
	case errors.As(err, &dnsErr):
		return ErrDNS, "DNS lookup failed: " + dnsErr.Err
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &recErr), errors.As(err, &alert):
		return ErrTLS, "TLS handshake failed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ErrTimeout, "no response within the timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrConnRefused, "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return ErrConnReset, "connection closed before a response"
	case strings.Contains(err.Error(), "tls:"), strings.Contains(err.Error(), "x509:"):
		return ErrTLS, "TLS handshake failed"
	}
	return ErrNetwork, "network error"
}

// parseRetryAfter reads seconds or an HTTP date; 0 when absent or invalid.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
