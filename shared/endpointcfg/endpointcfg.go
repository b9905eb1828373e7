// Package endpointcfg is an endpoint's own delivery settings: the rules a
// change to them must pass (Apply), how the API shows them (Mask), and the
// one function that turns them into what a delivery uses (Resolve). Nothing
// else reads domain.EndpointSettings.
package endpointcfg

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/textproto"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/clientassertion"
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
	// OAuth2: get a bearer token with these client credentials before
	// each POST (nil: none).
	OAuth2 *domain.OAuth2
	// TLS: the client certificate to present and the CA bundle to trust
	// (nil: neither).
	TLS *domain.ClientTLS
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
	e.OAuth2, e.TLS = s.OAuth2, s.TLS
	return e
}

// Ordered: the endpoint's keyed deliveries wait for their predecessor
// (read before the attempt's rate is booked, so before Resolve).
func Ordered(ep domain.Endpoint) bool { return ep.Settings.Ordered }

// Change is a change to the settings, as the API takes it: the fields set
// are set, Reset fields go back to the account's or the deployment's, the
// Headers given are added or replaced by name and RemoveHeaders removed.
type Change struct {
	RateLimit      *float64          `json:"rate_limit"`
	TimeoutSeconds *float64          `json:"timeout_seconds"` // a float, so that 5.0 reads as 5 and 5.5 is refused
	Ordered        *bool             `json:"ordered"`
	Headers        map[string]string `json:"headers"`
	Reset          []string          `json:"reset"`          // "rate_limit", "timeout_seconds", "headers", "filter", "oauth2", "tls"
	RemoveHeaders  []string          `json:"remove_headers"` // names, any case
	Filter         json.RawMessage   `json:"filter"`         // a content filter (package filter); null: none given
	OAuth2         *OAuth2Change     `json:"oauth2"`
	TLS            *TLSChange        `json:"tls"`
}

// TLSChange sets the endpoint's mutual TLS as a whole: a client
// certificate with its key (PEM), a CA bundle (PEM), or both. ClientKey may
// be left out to keep the current one for the same certificate.
type TLSChange struct {
	ClientCert string `json:"client_cert"`
	ClientKey  string `json:"client_key"`
	CABundle   string `json:"ca_bundle"`
}

// TLSView is the TLS settings as the API shows them: the key masked.
type TLSView struct {
	ClientCert string `json:"client_cert,omitempty"`
	ClientKey  string `json:"client_key,omitempty"`
	CABundle   string `json:"ca_bundle,omitempty"`
}

// Limits of the TLS settings (PEM bytes).
const (
	MaxTLSCert     = 16 << 10
	MaxTLSKey      = 16 << 10
	MaxTLSCABundle = 32 << 10
)

// OAuth2Change sets the endpoint's OAuth2 client credentials as a whole;
// ClientSecret may be left out to keep the current one when the token URL's
// origin and the client id stay the same.
type OAuth2Change struct {
	TokenURL     string   `json:"token_url"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Scopes       []string `json:"scopes"`
	Audience     string   `json:"audience"`
	AuthMethod   string   `json:"auth_method"`
	PrivateKey   string   `json:"private_key"` // private_key_jwt's signing key (PEM)
}

// OAuth2View is the OAuth2 settings as the API shows them: the secret
// masked.
type OAuth2View struct {
	TokenURL     string   `json:"token_url"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	Audience     string   `json:"audience,omitempty"`
	AuthMethod   string   `json:"auth_method"`
	PrivateKey   string   `json:"private_key,omitempty"`
}

// Limits of the OAuth2 settings.
const (
	MaxOAuth2ClientID     = 256
	MaxOAuth2ClientSecret = 1024
	MaxOAuth2Scopes       = 20
	MaxOAuth2Scope        = 128
	MaxOAuth2Audience     = 1024
	AuthMethodBasic       = "client_secret_basic"
	AuthMethodPost        = "client_secret_post"
	AuthMethodJWT         = "private_key_jwt"
	MaxOAuth2PrivateKey   = 16 << 10
)

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
	OAuth2         *OAuth2View       `json:"oauth2,omitempty"`
	TLS            *TLSView          `json:"tls,omitempty"`
}

// ViewOf is s as the API shows it.
func ViewOf(s domain.EndpointSettings) View {
	v := View{RateLimit: s.RatePerSecond, TimeoutSeconds: s.TimeoutSeconds, Headers: MaskedHeaders(s), Ordered: s.Ordered}
	if o := s.OAuth2; o != nil {
		v.OAuth2 = &OAuth2View{TokenURL: o.TokenURL, ClientID: o.ClientID, Scopes: o.Scopes, Audience: o.Audience, AuthMethod: authMethod(o.AuthMethod)}
		if o.ClientSecret != "" {
			v.OAuth2.ClientSecret = Mask(o.ClientSecret)
		}
		if o.PrivateKey != "" {
			v.OAuth2.PrivateKey = "****"
		}
	}
	if t := s.TLS; t != nil {
		v.TLS = &TLSView{ClientCert: t.CertPEM, CABundle: t.CABundle}
		if t.CertPEM != "" {
			v.TLS.ClientKey = "****"
		}
	}
	if s.Filter != "" {
		v.Filter = json.RawMessage(s.Filter)
	}
	return v
}

func authMethod(m string) string {
	if m == "" {
		return AuthMethodBasic
	}
	return m
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
	next := domain.EndpointSettings{RatePerSecond: cur.RatePerSecond, TimeoutSeconds: cur.TimeoutSeconds, Filter: cur.Filter, OAuth2: cur.OAuth2, TLS: cur.TLS, Ordered: cur.Ordered}
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
		case "oauth2":
			next.OAuth2 = nil
		case "tls":
			next.TLS = nil
		default:
			return cur, refuse("reset", "reset takes rate_limit, timeout_seconds, headers, filter, oauth2 or tls, not %q", f)
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
	if c.OAuth2 != nil {
		o, err := applyOAuth2(next.OAuth2, *c.OAuth2)
		if err != nil {
			return cur, err
		}
		next.OAuth2 = o
	}
	if c.TLS != nil {
		t, err := applyTLS(next.TLS, *c.TLS)
		if err != nil {
			return cur, err
		}
		next.TLS = t
	}
	return next, nil
}

// applyTLS checks a TLS change: the certificate and key make a pair, the
// CA bundle holds certificates.
func applyTLS(cur *domain.ClientTLS, c TLSChange) (*domain.ClientTLS, *Error) {
	switch {
	case len(c.ClientCert) > MaxTLSCert || len(c.ClientKey) > MaxTLSKey || len(c.CABundle) > MaxTLSCABundle:
		return nil, refuse("tls", "tls takes a client_cert and a client_key of at most %d bytes each and a ca_bundle of at most %d", MaxTLSCert, MaxTLSCABundle)
	case c.ClientCert == "" && c.CABundle == "":
		return nil, refuse("tls", "tls needs a client_cert and client_key, a ca_bundle, or both (reset [\"tls\"] removes them)")
	case c.ClientCert == "" && c.ClientKey != "":
		return nil, refuse("tls.client_key", "a client_key needs its client_cert")
	}
	key := c.ClientKey
	if c.ClientCert != "" && key == "" {
		if cur == nil || cur.CertPEM != c.ClientCert || cur.KeyPEM == "" {
			return nil, refuse("tls.client_key", "client_key is required (it may be left out only to keep the current one for the same client_cert)")
		}
		key = cur.KeyPEM
	}
	if c.ClientCert != "" {
		if _, err := tls.X509KeyPair([]byte(c.ClientCert), []byte(key)); err != nil {
			return nil, refuse("tls.client_cert", "client_cert and client_key are not a PEM certificate and its private key")
		}
	}
	if c.CABundle != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(c.CABundle)) {
		return nil, refuse("tls.ca_bundle", "ca_bundle holds no PEM certificate")
	}
	return &domain.ClientTLS{CertPEM: c.ClientCert, KeyPEM: key, CABundle: c.CABundle}, nil
}

// applyOAuth2 checks an OAuth2 change (the token URL's address is the
// API's to check, with the endpoint URL's rules) and returns the settings
// it makes from cur (nil: none yet).
func applyOAuth2(cur *domain.OAuth2, c OAuth2Change) (*domain.OAuth2, *Error) {
	u, err := url.Parse(c.TokenURL)
	switch {
	case c.TokenURL == "" || len(c.TokenURL) > domain.MaxURLLength || err != nil || u.Host == "":
		return nil, refuse("oauth2.token_url", "token_url must be an absolute URL of at most %d characters", domain.MaxURLLength)
	case u.User != nil || u.Fragment != "":
		return nil, refuse("oauth2.token_url", "token_url may not carry user information or a fragment")
	case c.ClientID == "" || len(c.ClientID) > MaxOAuth2ClientID || hasControl(c.ClientID):
		return nil, refuse("oauth2.client_id", "client_id needs 1 to %d characters, no control characters", MaxOAuth2ClientID)
	case len(c.ClientSecret) > MaxOAuth2ClientSecret || hasControl(c.ClientSecret):
		return nil, refuse("oauth2.client_secret", "client_secret may have at most %d characters, no control characters", MaxOAuth2ClientSecret)
	case len(c.Audience) > MaxOAuth2Audience || hasControl(c.Audience):
		return nil, refuse("oauth2.audience", "audience may have at most %d characters, no control characters", MaxOAuth2Audience)
	case len(c.Scopes) > MaxOAuth2Scopes:
		return nil, refuse("oauth2.scopes", "at most %d scopes", MaxOAuth2Scopes)
	}
	for _, sc := range c.Scopes {
		if sc == "" || len(sc) > MaxOAuth2Scope || !isScopeToken(sc) {
			return nil, refuse("oauth2.scopes", "scope %q is not a scope token (RFC 6749 3.3) of at most %d characters", sc, MaxOAuth2Scope)
		}
	}
	method := c.AuthMethod
	if method == "" {
		method = AuthMethodBasic
	}
	if method != AuthMethodBasic && method != AuthMethodPost && method != AuthMethodJWT {
		return nil, refuse("oauth2.auth_method", "auth_method is %s, %s or %s", AuthMethodBasic, AuthMethodPost, AuthMethodJWT)
	}
	// A credential is kept only for the same client at the same server: it
	// never follows a token URL to another origin.
	sameClient := cur != nil && cur.ClientID == c.ClientID && Origin(cur.TokenURL) == Origin(c.TokenURL)
	next := &domain.OAuth2{TokenURL: c.TokenURL, ClientID: c.ClientID, Scopes: c.Scopes, Audience: c.Audience, AuthMethod: method}
	if method == AuthMethodJWT {
		switch {
		case c.ClientSecret != "":
			return nil, refuse("oauth2.client_secret", "private_key_jwt signs with private_key: give no client_secret")
		case len(c.PrivateKey) > MaxOAuth2PrivateKey:
			return nil, refuse("oauth2.private_key", "private_key may have at most %d bytes", MaxOAuth2PrivateKey)
		case c.PrivateKey == "" && !(sameClient && cur.PrivateKey != ""):
			return nil, refuse("oauth2.private_key", "private_key is required (it may be left out only to keep the current one for the same client_id and token_url origin)")
		}
		next.PrivateKey = c.PrivateKey
		if next.PrivateKey == "" {
			next.PrivateKey = cur.PrivateKey
		}
		if _, err := clientassertion.Parse(next.PrivateKey); err != nil {
			return nil, refuse("oauth2.private_key", "%s", err.Error())
		}
		return next, nil
	}
	if c.PrivateKey != "" {
		return nil, refuse("oauth2.private_key", "private_key is for auth_method %s only", AuthMethodJWT)
	}
	next.ClientSecret = c.ClientSecret
	if next.ClientSecret == "" {
		if !sameClient || cur.ClientSecret == "" {
			return nil, refuse("oauth2.client_secret", "client_secret is required (it may be left out only to keep the current one for the same client_id and token_url origin)")
		}
		next.ClientSecret = cur.ClientSecret
	}
	return next, nil
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// isScopeToken is RFC 6749's scope-token: %x21 / %x23-5B / %x5D-7E.
func isScopeToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e {
			return false
		}
	}
	return true
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
