package httpapi

import (
	"context"
	"net/http"
)

// egressIPs is GET /v1/egress-ips: the addresses every webhook is sent from,
// for receivers that allowlist senders. They are the stack's Elastic IPs
// when it is deployed with static egress IPs (infra/egress.go), read from
// EGRESS_IPS (shared/config); otherwise none: deliveries then leave from AWS's shared
// ranges, which no one can allowlist, and the list is empty.
type egressIPs struct {
	IPs []string `json:"ips"`
}

func (a *API) getEgressIPs(_ context.Context, _ *request) response {
	ips := a.EgressIPs
	if ips == nil {
		ips = []string{} // [] rather than null: "none" is an answer
	}
	return ok(http.StatusOK, egressIPs{IPs: ips})
}
