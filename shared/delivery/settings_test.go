package delivery

import (
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
)

// The attempt goes with the endpoint's effective settings
// (endpointcfg.Resolve): its own timeout and headers, or the deployment's
// timeout when it has none.
func TestAttemptUsesTheEndpointsSettings(t *testing.T) {
	for _, tt := range []struct {
		name     string
		settings domain.EndpointSettings
		timeout  time.Duration // the worker's DELIVERY_TIMEOUT
		want     time.Duration
		headers  map[string]string
	}{
		{"none: DELIVERY_TIMEOUT", domain.EndpointSettings{}, 7 * time.Second, 7 * time.Second, nil},
		{"its own", domain.EndpointSettings{TimeoutSeconds: 3, Headers: map[string]string{"Authorization": "Bearer gw"}}, 10 * time.Second, 3 * time.Second, map[string]string{"Authorization": "Bearer gw"}},
		{"never past DELIVERY_TIMEOUT", domain.EndpointSettings{TimeoutSeconds: 9}, 5 * time.Second, 5 * time.Second, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, 200)
			key := r.d.AccountID + "/" + r.d.EndpointID
			ep := r.st.endpoints[key]
			ep.Settings = tt.settings
			r.st.endpoints[key] = ep
			r.w.AttemptTimeout = tt.timeout
			before := r.w.Now()
			r.deliver(t, queue.For(r.d))
			after := r.w.Now()
			if len(r.recv.got) != 1 {
				t.Fatalf("%d POSTs", len(r.recv.got))
			}
			got := r.recv.got[0]
			if got.Deadline.Before(before.Add(tt.want)) || got.Deadline.After(after.Add(tt.want)) {
				t.Errorf("deadline %s after the attempt, want %s", got.Deadline.Sub(before), tt.want)
			}
			if len(got.Headers) != len(tt.headers) || got.Headers["Authorization"] != tt.headers["Authorization"] {
				t.Errorf("headers %v, want %v", got.Headers, tt.headers)
			}
		})
	}
}
