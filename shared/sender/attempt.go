package sender

import (
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/endpointcfg"
)

// For is the request of one attempt of delivery deliveryID (ev to ep):
// attempt num of its series (0: a manual one), signed with the secrets and
// keys live at now, under the endpoint's effective settings
// (endpointcfg.Resolve: its timeout within the deployment's, its headers),
// to its destination (an AWS endpoint's target; nil: its URL).
func For(ep *domain.Endpoint, ev *domain.Event, deliveryID, attemptID string, num int, now time.Time, timeout time.Duration) Request {
	cfg := endpointcfg.Resolve(*ep, domain.Account{}, endpointcfg.Defaults{Timeout: timeout})
	at := domain.Millis(now)
	return Request{URL: ep.URL, Body: ev.Body, Secrets: ep.SigningSecrets(at), V1aKeys: ep.V1aKeys(at), OmitV1: !ep.SignsV1(),
		EventType: ev.Type, EventID: ev.ID, DeliveryID: deliveryID, AttemptID: attemptID, AttemptNum: num,
		Timeout: cfg.Timeout, Headers: cfg.Headers, Destination: ep.Destination}
}

// Entry is the attempt log's entry for this result: a, with what the
// attempt produced filled in.
func (r Result) Entry(a domain.Attempt) domain.Attempt {
	a.StartedAt, a.DurationMs = domain.Millis(r.StartedAt), r.Duration.Milliseconds()
	a.StatusCode, a.ErrorClass, a.Error = r.StatusCode, r.ErrorClass, r.Error
	a.ResponseBody, a.ResponseTruncated = r.ResponseBody, r.ResponseTruncated
	return a
}
