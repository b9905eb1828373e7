// Package sender makes the HTTP POST of one attempt: signed, with a timeout,
// never following redirects, through the SSRF dial guard, and reports what
// came back in the terms of the attempt log.
package sender

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/netguard"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/signing"
)

// Headers every attempt carries besides X-Gifq-Signature and the Standard
// Webhooks three (signing.HeaderWebhookID and the rest).
const (
	HeaderEvent    = "X-Gifq-Event"
	HeaderEventID  = "X-Gifq-Event-Id"
	HeaderDelivery = "X-Gifq-Delivery" // unique per attempt
	HeaderAttempt  = "X-Gifq-Attempt"
	UserAgent      = "gifq-webhooks/1.0"
)

// Request is one attempt to send.
type Request struct {
	URL     string
	Body    []byte
	Secrets []string // current secret first; two during a rotation
	// V1aKeys sign webhook-signature's v1a (ed25519) entries: the account's
	// current key first, two during a rotation's overlap; none for an
	// endpoint whose scheme is v1. OmitV1 leaves out its v1 (HMAC) entries
	// (scheme v1a). X-Gifq-Signature is sent whatever the scheme.
	V1aKeys    []ed25519.PrivateKey
	OmitV1     bool
	EventType  string
	EventID    string
	DeliveryID string // webhook-id: the same on every attempt of the delivery
	AttemptID  string
	AttemptNum int
	// Timeout of this attempt (endpointcfg.Effective); 0 or longer than the
	// Sender's: the Sender's.
	Timeout time.Duration
	// Headers are the endpoint's own; set before the sender's own headers
	// and the signature's, so they can never replace them.
	Headers map[string]string
	// Destination is an AWS endpoint's target (shared/destination picks the
	// provider by it); nil: an HTTP POST to URL. Sender itself ignores it.
	Destination *domain.Destination
}

// Result is what one attempt produced.
type Result struct {
	retry.Result
	StartedAt         time.Time
	Duration          time.Duration
	Error             string // a short, safe description of a transport error
	ResponseBody      string // the first bytes, valid UTF-8
	ResponseTruncated bool
}

// Sender posts attempts.
type Sender struct {
	client  *http.Client
	maxBody int
	now     func() time.Time
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
		client: &http.Client{
			// A span per attempt when tracing is on (obs.StartTracing:
			// deployed functions with Active tracing); otherwise tr as it is.
			Transport: obs.TracedTransport(tr),
			Timeout:   o.Timeout,
			// Redirects are never followed: a 3xx is the receiver's answer.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		maxBody: o.MaxStoredBody,
		now:     time.Now,
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

// Send makes one attempt. It never returns an error: a failure is a Result.
func (s *Sender) Send(ctx context.Context, r Request) Result {
	start := s.now()
	res := Result{StartedAt: start}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		res.ErrorClass, res.Error = retry.ErrNetwork, "invalid request URL"
		return res
	}
	h := req.Header
	for k, v := range r.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(HeaderEvent, r.EventType)
	h.Set(HeaderEventID, r.EventID)
	h.Set(HeaderDelivery, r.AttemptID)
	h.Set(HeaderAttempt, strconv.Itoa(r.AttemptNum))
	// A fresh timestamp and signature on every attempt.
	h.Set(signing.Header, signing.Sign(r.Secrets, start, r.Body))
	// Standard Webhooks: the receiver's idempotency key is the delivery, and
	// the timestamp and signature are the attempt's, like X-Gifq-Signature.
	h.Set(signing.HeaderWebhookID, r.DeliveryID)
	h.Set(signing.HeaderWebhookTimestamp, strconv.FormatInt(start.Unix(), 10))
	if sig := standardSignature(r, start); sig != "" {
		h.Set(signing.HeaderWebhookSignature, sig)
	}

	resp, err := s.client.Do(req)
	if err != nil {
		res.Duration = s.now().Sub(start)
		res.ErrorClass, res.Error = classify(err)
		return res
	}
	defer resp.Body.Close()
	res.StatusCode = resp.StatusCode
	res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), start)
	buf, _ := io.ReadAll(io.LimitReader(resp.Body, int64(s.maxBody)+1))
	if len(buf) > s.maxBody {
		buf, res.ResponseTruncated = buf[:s.maxBody], true
	}
	res.ResponseBody = validUTF8(buf)
	// Drain a little more so the connection can be reused; give up on big bodies.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	res.Duration = s.now().Sub(start)
	return res
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
		return retry.ErrBlockedAddress, "the endpoint resolved to an address deliveries may not reach"
	case errors.As(err, &dnsErr):
		return retry.ErrDNS, "DNS lookup failed: " + dnsErr.Err
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &recErr), errors.As(err, &alert):
		return retry.ErrTLS, "TLS handshake failed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return retry.ErrTimeout, "no response within the timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return retry.ErrConnRefused, "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return retry.ErrConnReset, "connection closed before a response"
	case strings.Contains(err.Error(), "tls:"), strings.Contains(err.Error(), "x509:"):
		return retry.ErrTLS, "TLS handshake failed"
	}
	return retry.ErrNetwork, "network error"
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
