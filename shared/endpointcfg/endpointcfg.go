// Package endpointcfg is an endpoint's own delivery settings: the rules a
// change to them must pass (Apply), how the API shows them (Mask), and the
// one function that turns them into what a delivery uses (Resolve). Nothing
// else reads domain.EndpointSettings.
package endpointcfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/textproto"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/filter"
)

// Limits of the settings.
const (
	MaxHeaders        = 10
	MaxHeaderName     = 64
	MaxHeaderValue    = 1024
	MinTimeoutSeconds = 1
	MaxTimeoutSeconds = 10 // the contract's read timeout is the ceiling
	// MinRatePerSecond is the slowest endpoint rate: one delivery every 100
	// s. Slower rates are not a delivery rate any receiver needs, and a
	// rate such as 5e-324 is outside DynamoDB's number range (Schemathesis
	// found it answering 500).
	MinRatePerSecond = 0.01
)

// Defaults are the deployment's: the account rate limit
// (RATE_LIMIT_PER_SECOND) and the attempt timeout (DELIVERY_TIMEOUT).
type Defaults struct {
	RatePerSecond float64
	Timeout       time.Duration
}

// Effective is what one delivery to the endpoint uses.
type Effective struct {
	// Timeout of one attempt: the endpoint's, never longer than the
	// deployment's (the claim's lease is sized for that one).
	Timeout time.Duration
	// RatePerSecond is the rate deliveries to the endpoint may go at: the
	// endpoint's when it is lower than its account's, else the account's.
	RatePerSecond float64
	// OwnRate: the endpoint's rate is lower than its account's, so its
	// deliveries book a slot on the endpoint's own limiter too.
	OwnRate bool
	// Headers go on every attempt, under the signature headers.
	Headers map[string]string
	// Ordered: a keyed delivery waits until the key's previous one to the
	// endpoint is final (lifecycle.Hold).
	Ordered bool
}

// Resolve is the one place an endpoint's settings become effective. An
// account rate of 0 is the deployment's; when both are 0 (a caller that does
// not know the account's rate) the endpoint's own rate is taken as lower.
func Resolve(ep domain.Endpoint, acct domain.Account, d Defaults) Effective {
	s := ep.Settings
	e := Effective{Timeout: d.Timeout, RatePerSecond: acct.RatePerSecond, Ordered: s.Ordered}
	if e.Timeout <= 0 {
		e.Timeout = MaxTimeoutSeconds * time.Second
	}
	if s.TimeoutSeconds > 0 {
		e.Timeout = min(e.Timeout, time.Duration(s.TimeoutSeconds)*time.Second)
	}
	if e.RatePerSecond <= 0 {
		e.RatePerSecond = d.RatePerSecond
	}
	if s.RatePerSecond > 0 && (e.RatePerSecond <= 0 || s.RatePerSecond < e.RatePerSecond) {
		e.RatePerSecond, e.OwnRate = s.RatePerSecond, true
	}
	if len(s.Headers) > 0 {
		e.Headers = make(map[string]string, len(s.Headers))
		for k, v := range s.Headers {
			e.Headers[k] = v
		}
	}
	return e
}

// Change is a change to the settings, as the API takes it: the fields set
// are set, Reset fields go back to the account's or the deployment's, the
// Headers given are added or replaced by name and RemoveHeaders removed.
type Change struct {
	RateLimit      *float64          `json:"rate_limit"`
	TimeoutSeconds *float64          `json:"timeout_seconds"` // a float, so that 5.0 reads as 5 and 5.5 is refused
	Ordered        *bool             `json:"ordered"`
	Headers        map[string]string `json:"headers"`
	Reset          []string          `json:"reset"`          // "rate_limit", "timeout_seconds", "headers", "filter"
	RemoveHeaders  []string          `json:"remove_headers"` // names, any case
	Filter         json.RawMessage   `json:"filter"`         // a content filter (package filter); null: none given
}

// View is the settings as the API shows them, beside Change, the one shape
// it takes them in (a registration's settings are a Change with nothing to
// reset or remove): what the endpoint's owner set, header values write-only
// and shown masked (Mask). A field left out is the account's or the
// deployment's.
type View struct {
	RateLimit      float64           `json:"rate_limit,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
	Headers        map[string]string `json:"headers"`
	Ordered        bool              `json:"ordered,omitempty"`
	Filter         json.RawMessage   `json:"filter,omitempty"`
}

// ViewOf is s as the API shows it.
func ViewOf(s domain.EndpointSettings) View {
	v := View{RateLimit: s.RatePerSecond, TimeoutSeconds: s.TimeoutSeconds, Headers: MaskedHeaders(s), Ordered: s.Ordered}
	if s.Filter != "" {
		v.Filter = json.RawMessage(s.Filter)
	}
	return v
}

// Error is a change the rules refuse; Field names what is wrong.
type Error struct {
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Message }

func refuse(field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Apply checks a change against the rules and returns the settings it
// makes from cur. accountRate is the account's effective rate (its own or
// the deployment's): an endpoint's rate may not be above it.
func Apply(cur domain.EndpointSettings, c Change, accountRate float64) (domain.EndpointSettings, *Error) {
	next := domain.EndpointSettings{RatePerSecond: cur.RatePerSecond, TimeoutSeconds: cur.TimeoutSeconds, Filter: cur.Filter, Ordered: cur.Ordered}
	if c.Ordered != nil {
		next.Ordered = *c.Ordered
	}
	headers := make(map[string]string, len(cur.Headers))
	for k, v := range cur.Headers {
		headers[k] = v
	}
	for _, f := range c.Reset {
		switch f {
		case "rate_limit":
			next.RatePerSecond = 0
		case "timeout_seconds":
			next.TimeoutSeconds = 0
		case "headers":
			clear(headers)
		case "filter":
			next.Filter = ""
		default:
			return cur, refuse("reset", "reset takes rate_limit, timeout_seconds, headers or filter, not %q", f)
		}
	}
	if len(c.Filter) > 0 && string(c.Filter) != "null" {
		if _, err := filter.Compile(c.Filter); err != nil {
			return cur, refuse("filter", "%s", err.Error())
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, c.Filter); err != nil {
			return cur, refuse("filter", "%s", err.Error())
		}
		next.Filter = compact.String()
	}
	if c.RateLimit != nil {
		r := *c.RateLimit
		switch {
		case !(r >= MinRatePerSecond):
			return cur, refuse("rate_limit", "rate_limit must be at least %g deliveries a second; reset it to use the account's", MinRatePerSecond)
		case accountRate > 0 && r > accountRate:
			return cur, refuse("rate_limit", "rate_limit %g is above the account's %g deliveries a second", r, accountRate)
		}
		next.RatePerSecond = r
	}
	if c.TimeoutSeconds != nil {
		t := *c.TimeoutSeconds
		if t != float64(int(t)) || t < MinTimeoutSeconds || t > MaxTimeoutSeconds {
			return cur, refuse("timeout_seconds", "timeout_seconds must be a whole number from %d to %d", MinTimeoutSeconds, MaxTimeoutSeconds)
		}
		next.TimeoutSeconds = int(t)
	}
	if len(c.RemoveHeaders) > MaxHeaders {
		return cur, refuse("remove_headers", "remove_headers names at most %d headers", MaxHeaders)
	}
	for _, name := range c.RemoveHeaders {
		if name == "" || len(name) > MaxHeaderName || !isToken(name) {
			return cur, refuse("remove_headers", "header name %q is not an HTTP token of at most %d characters", name, MaxHeaderName)
		}
		delete(headers, textproto.CanonicalMIMEHeaderKey(name))
	}
	names := make([]string, 0, len(c.Headers))
	for name := range c.Headers {
		names = append(names, name)
	}
	sort.Strings(names) // the first bad header named is the same on every try
	seen := map[string]bool{}
	for _, name := range names {
		value := c.Headers[name]
		if err := checkHeader(name, value); err != nil {
			return cur, err
		}
		canon := textproto.CanonicalMIMEHeaderKey(name)
		if seen[canon] {
			return cur, refuse("headers", "header %s is given twice (names are case-insensitive)", name)
		}
		seen[canon] = true
		headers[canon] = value
	}
	if len(headers) > MaxHeaders {
		return cur, refuse("headers", "an endpoint may have at most %d custom headers, this would make %d", MaxHeaders, len(headers))
	}
	if len(headers) > 0 {
		next.Headers = headers
	}
	return next, nil
}

// hopByHop are the headers of one connection, not of the request (RFC 9110
// 7.6.1), and Go's transport sets them itself.
var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

// reserved are the headers the sender sets on every attempt.
var reserved = map[string]bool{"Host": true, "Content-Type": true, "Content-Length": true, "User-Agent": true}

// checkHeader: a name that is an HTTP token and not one the sender or the
// connection owns; a value that is a valid field value.
func checkHeader(name, value string) *Error {
	if name == "" || len(name) > MaxHeaderName || !isToken(name) {
		return refuse("headers", "header name %q is not an HTTP token of at most %d characters", name, MaxHeaderName)
	}
	canon := textproto.CanonicalMIMEHeaderKey(name)
	lower := strings.ToLower(name)
	switch {
	case reserved[canon], hopByHop[canon]:
		return refuse("headers", "header %s cannot be set: the sender or the connection sets it", name)
	case strings.HasPrefix(lower, "x-gifq-"), strings.HasPrefix(lower, "webhook-"):
		return refuse("headers", "header %s cannot be set: X-Gifq-* and webhook-* are the signature's and the delivery's headers", name)
	}
	if value == "" || len(value) > MaxHeaderValue {
		return refuse("headers", "header %s needs a value of 1 to %d bytes", name, MaxHeaderValue)
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return refuse("headers", "header %s has a control character in its value", name)
		}
	}
	if value != strings.TrimSpace(value) {
		return refuse("headers", "header %s has leading or trailing white space in its value", name)
	}
	return nil
}

// isToken is RFC 9110's token: the characters a header name may have.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// MaskedHeaders are the endpoint's headers as every answer shows them: the
// names, each value masked (never nil).
func MaskedHeaders(s domain.EndpointSettings) map[string]string {
	out := make(map[string]string, len(s.Headers))
	for k, v := range s.Headers {
		out[k] = Mask(v)
	}
	return out
}

// Mask is how the API shows a header value: never the value; its last two
// characters only when it is long enough that they give nothing away.
func Mask(value string) string {
	if len(value) < 12 {
		return "****"
	}
	return "****" + value[len(value)-2:]
}

// Origin is a URL's scheme, host and port (the port made explicit), lower
// case: what the custom headers were set for. An unparsable URL is its own
// origin.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// HeaderNames are the custom headers' names, sorted.
func HeaderNames(s domain.EndpointSettings) []string {
	names := make([]string, 0, len(s.Headers))
	for k := range s.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
