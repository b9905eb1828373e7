package httpapi

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// An endpoint shows its breaker only while it is not closed, with its state
// at the time of the read and the end of its pause.
func TestEndpointViewShowsTheBreakerUnlessClosed(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	ms := func(d time.Duration) int64 { return domain.Millis(now.Add(d)) }
	for _, c := range []struct {
		name string
		ep   domain.Endpoint
		want string // "" for no breaker shown
	}{
		{"closed", domain.Endpoint{}, ""},
		{"closed, counting failures", domain.Endpoint{BreakerFails: 3}, ""},
		{"open", domain.Endpoint{BreakerFails: 5, BreakerOpenUntil: ms(30 * time.Second)}, "open"},
		{"pause over", domain.Endpoint{BreakerFails: 5, BreakerOpenUntil: ms(-time.Second)}, "half_open"},
		{"probe in flight", domain.Endpoint{BreakerFails: 5, BreakerOpenUntil: ms(-time.Second), BreakerProbeUntil: ms(10 * time.Second)}, "probing"},
	} {
		v := viewEndpoint(c.ep, now)
		switch {
		case c.want == "" && v.Breaker != nil:
			t.Errorf("%s: breaker shown: %+v", c.name, v.Breaker)
		case c.want != "" && (v.Breaker == nil || v.Breaker.State != c.want ||
			v.Breaker.OpenUntil != rfc3339(c.ep.BreakerOpenUntil)):
			t.Errorf("%s: breaker %+v, want state %s", c.name, v.Breaker, c.want)
		}
	}
}
