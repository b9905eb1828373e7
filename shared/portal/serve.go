package portal

import (
	"embed"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// The page is plain HTML, CSS and JavaScript, written by hand: no build step,
// nothing fetched at run time, the same bytes under make dev, LocalStack and AWS.
//
//go:embed assets
var assets embed.FS

// Settings are a deployment's portal choices.
type Settings struct {
	// URL is where the portal is served (PORTAL_URL), e.g.
	// https://api.example.com/prod/portal/. Empty: worked out from each
	// request (API Gateway's host and stage).
	URL string
	// FrameAncestors is the CSP frame-ancestors source list
	// (PORTAL_FRAME_ANCESTORS): the origins that may embed the portal in an
	// iframe. Default 'none'.
	FrameAncestors string
}

// DefaultFrameAncestors: nobody may frame the portal until a deployment says who.
const DefaultFrameAncestors = "'none'"

var sourceRE = regexp.MustCompile(`^('self'|https://(\*\.)?[a-z0-9.-]+(:[0-9]{1,5})?|http://(127\.0\.0\.1|localhost)(:[0-9]{1,5}|:\*)?)$`)

// CheckFrameAncestors validates a frame-ancestors source list: 'none' alone,
// or 'self' and https origins (http only for loopback), space separated.
func CheckFrameAncestors(v string) error {
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return fmt.Errorf("frame ancestors: empty (use 'none' to forbid framing)")
	}
	if len(fields) == 1 && fields[0] == "'none'" {
		return nil
	}
	for _, f := range fields {
		if !sourceRE.MatchString(f) {
			return fmt.Errorf("frame ancestors: %q is not 'self', an https origin like https://dashboard.example.com, or http://127.0.0.1:<port>", f)
		}
	}
	return nil
}

// ParseSettings reads PORTAL_URL and PORTAL_FRAME_ANCESTORS through getenv.
func ParseSettings(getenv func(string) string) (Settings, error) {
	s := Settings{URL: getenv("PORTAL_URL"), FrameAncestors: DefaultFrameAncestors}
	if v := getenv("PORTAL_FRAME_ANCESTORS"); v != "" {
		if err := CheckFrameAncestors(v); err != nil {
			return s, fmt.Errorf("PORTAL_FRAME_ANCESTORS: %w", err)
		}
		s.FrameAncestors = strings.Join(strings.Fields(v), " ")
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !strings.HasSuffix(u.Path, "/") || u.RawQuery != "" || u.Fragment != "" {
			return s, fmt.Errorf("PORTAL_URL=%q: want an http(s) URL ending in / with no query or fragment", s.URL)
		}
	}
	return s, nil
}

// Headers are the security headers of every portal file: scripts and styles
// only from the portal itself (no inline script), requests only to the API
// it is served by, framing only by FrameAncestors, and no Referer at all, so
// nothing in the address bar travels to another site.
func (s Settings) Headers(contentType string) map[string]string {
	fa := s.FrameAncestors
	if fa == "" {
		fa = DefaultFrameAncestors
	}
	return map[string]string{
		"Content-Type": contentType,
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
			"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors " + fa,
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
		"Cache-Control":          "no-cache",
	}
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// File is one of the portal's files for a request path: the page at
// /portal/ (and /portal, since a gateway may drop the trailing slash), its
// script and stylesheet beside it. Their names start "portal-" so that the
// page's relative links work from either address: /portal/portal-app.js or
// /portal-app.js. ok is false for anything else.
func File(requestPath string) (body []byte, contentType string, ok bool) {
	name := ""
	switch {
	case requestPath == Prefix || requestPath == strings.TrimSuffix(Prefix, "/") || requestPath == Prefix+"index.html":
		name = "index.html"
	case strings.HasPrefix(requestPath, Prefix+"portal-"):
		name = strings.TrimPrefix(requestPath, Prefix)
	case strings.HasPrefix(requestPath, "/portal-"):
		name = strings.TrimPrefix(requestPath, "/")
	default:
		return nil, "", false
	}
	if strings.Contains(name, "/") {
		return nil, "", false
	}
	ct, known := contentTypes[path.Ext(name)]
	if !known {
		return nil, "", false
	}
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		return nil, "", false
	}
	return b, ct, true
}

// Prefix is the portal's path on the API.
const Prefix = "/portal/"
