package lifecycle

import (
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// The per-endpoint cap only while slow (Policy.CapWhenSlow, ENDPOINT_CAP=
// whenSlow): an endpoint's in-flight slots are taken only while it is
// marked slow (domain.Endpoint.SlowUntil, on its slot item), which the
// worker's watchdog does once an attempt has waited SlowWatch for its
// answer. A healthy endpoint's attempts then cost no slot writes (the
// endpoint is read again alongside the claim instead, as with no cap).
//
// The overshoot: an endpoint turning slow is uncapped for SlowDetection
// (the watchdog's second, and up to a second more until an eventually
// consistent load sees the mark), so at most rate x SlowDetection attempts
// beyond the cap are in flight at once, each for at most the attempt
// timeout. An account whose rate makes that more than MaxOvershoot keeps
// strict slots.
const (
	SlowWatch     = time.Second
	SlowDetection = 2 * time.Second
	SlowFor       = time.Minute // a mark lasts this long; each slow attempt renews it
	MaxOvershoot  = 10
)

// CapNow reports whether an attempt to ep takes one of its in-flight slots:
// always with the strict cap, never with none, and with CapWhenSlow while
// ep is marked slow or its account's rate (interval: its slots' spacing;
// 0, unknown) could let more than MaxOvershoot through before the mark.
func CapNow(p Policy, ep domain.Endpoint, interval time.Duration, now time.Time) bool {
	switch {
	case p.MaxInFlight == 0:
		return false
	case !p.CapWhenSlow, ep.SlowUntil > domain.Millis(now), interval <= 0:
		return true
	}
	return float64(SlowDetection)/float64(interval) > MaxOvershoot
}

// WatchSlow reports whether an attempt to ep (read at now) is watched for
// its answer taking SlowWatch, to mark the endpoint slow: with CapWhenSlow
// and a cap, unless ep is marked already.
func WatchSlow(p Policy, ep domain.Endpoint, now time.Time) bool {
	return p.CapWhenSlow && p.MaxInFlight > 0 && ep.SlowUntil <= domain.Millis(now)
}
