package domain

import "strings"

// System events are the ones this service itself sends to an account's
// endpoints about its other endpoints (package notify): endpoint.failing,
// endpoint.disabling, endpoint.disabled, endpoint.recovered. Producers may not send them (a
// receiver must be able to trust them), and only an endpoint that names
// them in its filter (e.g. "endpoint.*" or "endpoint.failing"; not an empty
// filter, not "*") receives them: that endpoint is the account's
// notification endpoint.
const (
	SystemEndpointFailing   = "endpoint.failing"
	SystemEndpointDisabling = "endpoint.disabling"
	SystemEndpointDisabled  = "endpoint.disabled"
	SystemEndpointRecovered = "endpoint.recovered"
)

// SystemEventTypes lists the system event types.
var SystemEventTypes = []string{SystemEndpointFailing, SystemEndpointDisabling, SystemEndpointDisabled, SystemEndpointRecovered}

// IsSystemEvent reports whether eventType is one of SystemEventTypes.
func IsSystemEvent(eventType string) bool {
	for _, t := range SystemEventTypes {
		if t == eventType {
			return true
		}
	}
	return false
}

// subscribesExplicitly is Subscribes for a system event: only a filter
// entry other than "*" that matches it.
func (e *Endpoint) subscribesExplicitly(eventType string) bool {
	for _, f := range e.EventTypes {
		if f == eventType {
			return true
		}
		if prefix, ok := strings.CutSuffix(f, "*"); ok && prefix != "" && strings.HasPrefix(eventType, prefix) {
			return true
		}
	}
	return false
}
