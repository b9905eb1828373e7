package opevents

import (
	"context"
	"log/slog"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
)

// The constructors below are the one place each fact's detail is made from
// the domain values, so the API, the sweeper and the worker say the same.

// AuthFailed is endpoint.auth_failed for ep, whose attempt a the token
// endpoint refused.
func AuthFailed(ep domain.Endpoint, a domain.Attempt, at time.Time) Event {
	return Event{Type: EndpointAuthFailed, At: at, Detail: EndpointAuthFailedDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, DeliveryID: a.DeliveryID, Error: a.ErrorClass, FailedAt: stamp(at),
	}}
}

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

// Failing is endpoint.failing for ep, whose attempt a failed at at.
func Failing(ep domain.Endpoint, a domain.Attempt, at time.Time) Event {
	return Event{Type: EndpointFailing, At: at, Detail: EndpointFailingDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, URL: obs.SafeURL(ep.URL), FailingSince: stamp(at), LastStatus: a.StatusCode, LastError: a.ErrorClass,
	}}
}

// Disabling is endpoint.disabling for ep (as read before its attempt a,
// failing since failing_since), which a failure from disablesAt on disables.
func Disabling(ep domain.Endpoint, a domain.Attempt, disablesAt, at time.Time) Event {
	return Event{Type: EndpointDisabling, At: at, Detail: EndpointDisablingDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, URL: obs.SafeURL(ep.URL), FailingSince: ms(ep.FailingSince),
		DisablesAt: stamp(disablesAt), LastStatus: a.StatusCode, LastError: a.ErrorClass,
	}}
}

// Recovered is endpoint.recovered for ep (as read before the attempt that
// succeeded at at: its failing_since set).
func Recovered(ep domain.Endpoint, at time.Time) Event {
	return Event{Type: EndpointRecovered, At: at, Detail: EndpointRecoveredDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, URL: obs.SafeURL(ep.URL), FailingSince: ms(ep.FailingSince), RecoveredAt: stamp(at),
	}}
}

// Changed is endpoint.created, endpoint.updated or endpoint.deleted (typ)
// for ep as written (as it was, for a delete).
func Changed(typ Type, ep domain.Endpoint, at time.Time) Event {
	return Event{Type: typ, At: at, Detail: EndpointChangedDetail{
		AccountID: ep.AccountID, EndpointID: ep.ID, URL: obs.SafeURL(ep.URL), EventTypes: ep.EventTypes, Disabled: ep.Disabled, ChangedAt: stamp(at),
	}}
}

// AfterAttempt is the deliver worker's one call after it recorded an
// attempt a (store.RecordAttempt or FinishManual): the facts that its
// outcome o makes for ep, the endpoint as read before the attempt. The
// endpoint starting to fail or recovering (the same rules as the store's
// write of failing_since: lifecycle.StartsFailing, Recovers), disabled by
// the outcome (a 410, or failing for ENDPOINT_DISABLE_AFTER), a breaker
// tripped, a probe that closed it; a probe that failed leaves it open (no
// new fact). Only such changes state anything: most attempts state
// nothing (endpoint.auth_failed too: raised when the endpoint's auth
// starts failing, store.RecordAttempt having brought ep's
// auth_failing_since up to date). The dead letter is DeadLettered, once its DLQ message is sent.
func AfterAttempt(ep domain.Endpoint, a domain.Attempt, o lifecycle.Outcome, at time.Time) []Event {
	var out []Event
	switch {
	case ep.Disabled:
	case lifecycle.Recovers(ep, o):
		out = append(out, Recovered(ep, at))
	case lifecycle.StartsFailing(ep, o) && o.DisableEndpoint == "":
		out = append(out, Failing(ep, a, at))
	}
	switch o.Breaker.On {
	case lifecycle.BreakerTripped:
		out = append(out, BreakerOpen(ep, o.Breaker, at))
	case lifecycle.BreakerProbeOK:
		out = append(out, BreakerClose(ep, at))
	}
	if lifecycle.StartsAuthFailing(ep, a.ErrorClass) {
		out = append(out, AuthFailed(ep, a, at))
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

// Warner marks an endpoint warned that it is about to be disabled
// (store.WarnDisabling): won by one attempt of a failing period.
type Warner interface {
	WarnDisabling(ctx context.Context, ep domain.Endpoint, at time.Time) (won bool, err error)
}

// Recorded publishes what a recorded attempt states (AfterAttempt), and
// endpoint.disabling when its outcome says the endpoint nears its disable
// and this attempt won the mark: once per failing period. A failed mark is
// logged; a later failure in the window warns instead.
type Recorded struct {
	Publisher
	Warner       Warner
	Log          *slog.Logger
	DisableAfter time.Duration
}

// Publish publishes the facts of attempt a (ep: the endpoint as read before it).
func (r Recorded) Publish(ctx context.Context, ep domain.Endpoint, a domain.Attempt, o lifecycle.Outcome, at time.Time) {
	facts := AfterAttempt(ep, a, o, at)
	if o.WarnDisabling {
		won, err := r.Warner.WarnDisabling(ctx, ep, at)
		if err != nil {
			r.Log.WarnContext(ctx, "could not mark the endpoint warned of its disable; a later failure warns", "error", err)
		}
		if won {
			facts = append(facts, Disabling(ep, a, time.UnixMilli(ep.FailingSince).Add(r.DisableAfter), at))
		}
	}
	r.Publisher.Publish(ctx, facts...)
}
