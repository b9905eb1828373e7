package domain

import "testing"

// A system event goes only to an endpoint that names it: not to one with
// no filter, nor to "*"; other events keep the filter's ordinary rules.
func TestSystemEventsNeedAnExplicitFilter(t *testing.T) {
	cases := []struct {
		filter []string
		typ    string
		want   bool
	}{
		{nil, SystemEndpointFailing, false},
		{[]string{"*"}, SystemEndpointFailing, false},
		{[]string{"endpoint.*"}, SystemEndpointFailing, true},
		{[]string{"endpoint.recovered"}, SystemEndpointRecovered, true},
		{[]string{"endpoint.recovered"}, SystemEndpointFailing, false},
		{[]string{"end*"}, SystemEndpointDisabled, true},
		{nil, "payout.fulfilled", true},
		{[]string{"*"}, "endpoint.created", true}, // not a system event
		{[]string{"endpoint.*"}, "payout.fulfilled", false},
	}
	for _, c := range cases {
		ep := Endpoint{EventTypes: c.filter}
		if got := ep.Subscribes(c.typ); got != c.want {
			t.Errorf("filter %v, %s: %v, want %v", c.filter, c.typ, got, c.want)
		}
	}
}
