package ingest

import (
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/filter"
)

// eventBody is an event's body for endpoints' content filters: decoded on
// the first filter that needs it, once per event, with no I/O.
type eventBody struct {
	raw     []byte
	decoded *filter.Body
}

func bodyOf(raw []byte) *eventBody { return &eventBody{raw: raw} }

// passes: the endpoint has no content filter or its filter takes the body.
// A stored filter that no longer compiles (its rules tightened since it was
// set) takes every body: a filter never loses an event.
func (b *eventBody) passes(ep domain.Endpoint) bool {
	f, err := filter.Cached(ep.Settings.Filter)
	if err != nil || f == nil {
		return true
	}
	if b.decoded == nil {
		d := filter.Decode(b.raw)
		b.decoded = &d
	}
	return f.Match(*b.decoded)
}

// HasFilter: the endpoint has a content filter that compiles (one that
// does not takes every body).
func HasFilter(ep domain.Endpoint) bool {
	f, err := filter.Cached(ep.Settings.Filter)
	return err == nil && f != nil
}

// FilterTakes: the endpoint's content filter, if any, takes body (recover
// reads it as replay does).
func FilterTakes(ep domain.Endpoint, body []byte) bool { return bodyOf(body).passes(ep) }
