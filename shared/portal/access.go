package portal

// Access is what a portal session may do on one API route.
type Access int

const (
	// Denied: the route is not the portal's (ingest, minting sessions, and
	// any route not listed here, so a route added later is closed to portal
	// tokens until someone decides otherwise).
	Denied Access = iota
	// Read: allowed for every session.
	Read
	// Write: allowed unless the session is read-only.
	Write
)

// routes are the API routes the portal calls, as httpapi.Routes() names them.
var routes = map[string]Access{
	"GET /v1/endpoints":                  Read,
	"GET /v1/endpoints/*":                Read,
	"GET /v1/endpoints/*/deliveries":     Read,
	"GET /v1/deliveries/*":               Read,
	"GET /v1/deliveries/*/attempts":      Read,
	"GET /v1/events/*":                   Read,
	"GET /v1/events":                     Read, // the events feed
	"GET /v1/event-types":                Read, // the catalog, to choose subscriptions from
	"GET /v1/event-types/*":              Read,
	"GET /v1/signing-keys":               Read, // the JWKS link of a v1a endpoint; rotation stays the API key's
	"POST /v1/endpoints":                 Write,
	"PATCH /v1/endpoints/*":              Write,
	"DELETE /v1/endpoints/*":             Write,
	"POST /v1/endpoints/*/rotate-secret": Write,
	"POST /v1/endpoints/*/recover":       Write,
	"POST /v1/endpoints/*/replay":        Write,
	"POST /v1/endpoints/*/test-event":    Write,
	"POST /v1/deliveries/*/resend":       Write,
	"DELETE /v1/portal/sessions/*":       Read, // signing out: a session may always end itself
	"GET /v1/egress-ips":                 Read, // the addresses a receiver allowlists
	"POST /v1/filters/test":              Read, // a content filter against a catalog example: writes nothing
	"GET /v1/endpoints/*/stats":          Read, // the success-rate badge and chart
	"GET /v1/stats":                      Read,
}

// Decide says whether a session may call route ("METHOD /path/*").
func Decide(route string, readOnly bool) (allowed bool, why string) {
	switch routes[route] {
	case Read:
		return true, ""
	case Write:
		if readOnly {
			return false, "read_only"
		}
		return true, ""
	}
	return false, "not_for_portal"
}
