package delivery

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/sender"
	"github.com/gifq/webhooks/shared/store"
)

// resend makes one manual attempt of a delivery, whatever its status. It
// goes through the same rate limit, in-flight cap and signing as automatic
// attempts, is logged as kind "manual", and leaves the automatic series as
// it is: a 2xx does not cancel pending retries.
func (w *Worker) resend(ctx context.Context, msg queue.Message, received int, m *obs.Batch) step {
	now := w.Now()
	if s, early := tooEarly(msg, now); early {
		return s
	}
	snap, err := w.Store.LoadForAttempt(ctx, store.Ref{DeliveryID: msg.DeliveryID, AccountID: msg.AccountID, EndpointID: msg.EndpointID, EventID: msg.EventID})
	if err != nil {
		return step{err: err}
	}
	log := w.Log.With("delivery_id", msg.DeliveryID, "attempt_id", msg.AttemptID, "endpoint_id", msg.EndpointID, "kind", domain.AttemptManual)
	d, ep := snap.Delivery, snap.Endpoint
	act := lifecycle.DecideResend(lifecycle.Input{Msg: lifecycleMessage(msg), Delivery: d, Endpoint: ep, Event: snap.Event, Now: now})
	switch act.Verb {
	case lifecycle.Quarantine:
		return step{quarantine: act.Why}
	case lifecycle.Drop:
		log.Info(act.Why)
		return done
	case lifecycle.Wait:
		return later(act.Until.Sub(now))
	}
	slot, ok := w.freeSlot(ep, now)
	if !ok {
		m.Count(obs.MetricEndpointDeferrals, 1)
		return later(capBackoff(received + msg.Deferred))
	}
	rate, s, ok := w.rateSlot(ctx, msg, true, *d, false, m)
	if !ok {
		return s
	}
	if err := sleepUntil(ctx, rate.First); err != nil {
		return step{err: err}
	}
	if s, changed := w.endpointChanged(ctx, ep, log); changed { // a PATCH answered since the read (defect 7)
		return s
	}
	claim := store.Claim{ID: domain.NewID("clm"), LeaseUntil: domain.Millis(w.Now().Add(w.LeaseFor)), Slot: slot, URL: ep.URL}
	a := domain.Attempt{ID: msg.AttemptID, DeliveryID: d.ID, Kind: domain.AttemptManual, Series: d.Series,
		StartedAt: domain.Millis(w.Now()), ExpiresAt: d.ExpiresAt}
	switch err := w.Store.ClaimManual(ctx, *d, a, claim); {
	case errors.Is(err, store.ErrDuplicate):
		w.refund(ctx, d.AccountID, rate, log)
		return done // this resend was already made, or is being made under a live claim
	case errors.Is(err, store.ErrConflict):
		w.refund(ctx, d.AccountID, rate, log)
		return unslotted(later(time.Second)) // the endpoint slot was taken meanwhile
	case err != nil:
		return step{err: err}
	}
	if err := w.stayOnSlot(ctx, rate.First); err != nil {
		return step{err: err} // the claim's lease runs out and the next receive takes it over
	}
	cfg := w.settings(ep)
	res := w.Sender.Send(ctx, sender.Request{
		URL: ep.URL, Body: snap.Event.Body, Secrets: ep.SigningSecrets(domain.Millis(w.Now())), V1aKeys: ep.V1aKeys(domain.Millis(w.Now())), OmitV1: !ep.SignsV1(),
		EventType: snap.Event.Type, EventID: snap.Event.ID, DeliveryID: d.ID, AttemptID: a.ID, AttemptNum: 0,
		Timeout: cfg.Timeout, Headers: cfg.Headers,
	})
	fillAttempt(&a, res)
	verdict := retry.Classify(res.Result)
	a.Outcome = domain.AttemptOutcome(verdict.String()) // the verdict words are the outcome words
	o := store.Outcome{Healthy: verdict == retry.Delivered, DisableEndpoint: lifecycle.Gone(res.StatusCode)}
	if verdict == retry.Throttle {
		o.PauseUntil = domain.Millis(w.Now().Add(min(res.RetryAfter, lifecycle.MaxThrottlePause)))
	}
	m.Count(obs.MetricAttempts, 1)
	m.Observe(obs.MetricAttemptDuration, res.Duration)
	if err := w.finishManual(ctx, *d, ep, claim, a, o, log); err != nil {
		// Left in progress: its message comes back once the claim's lease has
		// run out, and that receive takes the attempt over (ClaimManual).
		// Sooner, it would find the attempt under a live lease, take it for
		// done and leave it in progress for good.
		return step{err: err, retryIn: time.Until(time.UnixMilli(claim.LeaseUntil)) + time.Second}
	}
	log.Info("manual attempt", "status", res.StatusCode, "error_class", res.ErrorClass, "duration_ms", res.Duration.Milliseconds(), "verdict", a.Outcome)
	return done
}

// finishManual records a manual attempt's result, trying a transient
// failure again while the claim's lease lasts (whileLeased). A write that
// was applied before its error finds the attempt recorded (ErrConflict):
// done.
func (w *Worker) finishManual(ctx context.Context, d domain.Delivery, ep *domain.Endpoint, c store.Claim, a domain.Attempt, o store.Outcome, log *slog.Logger) error {
	return w.whileLeased(ctx, c.LeaseUntil, log, func(ctx context.Context, _ int) (bool, error) {
		switch err := w.Store.FinishManual(ctx, d, ep, c, a, o); {
		case err == nil, errors.Is(err, store.ErrConflict):
			return true, nil
		default:
			return false, err
		}
	})
}
