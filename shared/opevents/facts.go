package opevents

import (
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
)

// The constructors below are the one place each fact's detail is made from
// the domain values, so the API, the sweeper and the worker say the same.

// Disabled is endpoint.disabled for ep (as written, disabled) by by. The
// URL is shown as logs show it: without its query (tokens ride there).
func Disabled(ep domain.Endpoint, by string, at time.Time) Event {
	return Event{Type: EndpointDisabled, At: at, Detail: EndpointDisabledDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, URL: obs.SafeURL(ep.URL), Reason: ep.DisabledReason, By: by, DisabledAt: stamp(at),
	}}
}

// DeadLettered is delivery.dead_lettered for d (failed, its DLQ message sent).
func DeadLettered(d domain.Delivery, at time.Time) Event {
	failedAt := ms(d.FailedAt)
	if failedAt == "" {
		failedAt = stamp(at)
	}
	return Event{Type: DeliveryDeadLettered, At: at, Detail: DeliveryDeadLetteredDetail{
		AccountID: d.AccountID, EndpointID: d.EndpointID, DeliveryID: d.ID, EventID: d.EventID, EventType: d.EventType,
		Reason: string(d.FailReason), Attempts: d.Attempts, FailedAt: failedAt,
	}}
}

// BreakerOpen is endpoint.breaker_opened for ep as read before the attempt
// whose failure opened its breaker (change, from lifecycle): the failures
// in a row are that endpoint's count and this one (the count is reset in
// the table when the breaker opens).
func BreakerOpen(ep domain.Endpoint, change lifecycle.BreakerChange, at time.Time) Event {
	return Event{Type: BreakerOpened, At: at, Detail: BreakerOpenedDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, ConsecutiveFailures: ep.BreakerFails + 1, OpenUntil: ms(change.OpenUntil),
	}}
}

// BreakerClose is endpoint.breaker_closed for ep, whose probe succeeded at at.
func BreakerClose(ep domain.Endpoint, at time.Time) Event {
	return Event{Type: BreakerClosed, At: at, Detail: BreakerClosedDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, ClosedAt: stamp(at),
	}}
}

// Rotated is endpoint.secret_rotated for ep as written after the rotation.
func Rotated(ep domain.Endpoint, at time.Time) Event {
	return Event{Type: SecretRotated, At: at, Detail: SecretRotatedDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, RotatedAt: stamp(at),
		PreviousSecretExpiresAt: ms(domain.PreviousSecretExpiresAt(ep.Secrets, domain.Millis(at))),
	}}
}

// AfterAttempt is the deliver worker's one call after it recorded an
// attempt (store.RecordAttempt or FinishManual): the facts that attempt's
// outcome o makes for ep, the endpoint as read before the attempt. An
// endpoint disabled by the outcome (a 410, or failing for
// ENDPOINT_DISABLE_AFTER), a breaker tripped, a probe that closed it; a
// probe that failed leaves it open (no new fact). The dead letter is
// DeadLettered, once its DLQ message is sent.
func AfterAttempt(ep domain.Endpoint, o lifecycle.Outcome, at time.Time) []Event {
	var out []Event
	switch o.Breaker.On {
	case lifecycle.BreakerTripped:
		out = append(out, BreakerOpen(ep, o.Breaker, at))
	case lifecycle.BreakerProbeOK:
		out = append(out, BreakerClose(ep, at))
	}
	if o.DisableEndpoint != "" && !ep.Disabled {
		by := ByFailures
		if o.DisableEndpoint == lifecycle.GoneReason {
			by = ByReceiver
		}
		disabled := ep
		disabled.Disabled, disabled.DisabledReason = true, o.DisableEndpoint
		out = append(out, Disabled(disabled, by, at))
	}
	return out
}
