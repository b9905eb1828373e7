package delivery

import (
	"context"
	"log/slog"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// note logs an effect's why, counts its metric and gives back its refunds.
func (r *run) note(ctx context.Context, e lifecycle.Effect) {
	if e.Why != "" {
		var attrs []any // one line per attempt carries it; empty ones left out (CloudWatch Logs bills bytes)
		if a := r.k.Answer; a != nil {
			attrs = append(attrs, "attempt", r.k.Claimed.Attempts, "status", a.Status, "duration_ms", r.entry.DurationMs)
			if a.Class != "" {
				attrs = append(attrs, "error_class", a.Class)
			}
		}
		if e.Level >= slog.LevelWarn {
			attrs = append(attrs, "message_id", r.rec.MessageId)
		}
		r.log.Log(ctx, e.Level, e.Why, attrs...)
	}
	if e.Metric != "" {
		r.m.Count(e.Metric, 1)
	}
	if e.Took > 0 {
		r.m.Observe(obs.MetricTimeToDeliver, e.Took)
	}
	for _, f := range e.Refunds {
		if err := r.Limiter.Refund(context.WithoutCancel(ctx), f.Line.Key(r.msg.AccountID, r.msg.EndpointID), ratelimit.Reservation{First: f.Slot.At, Interval: f.Slot.Interval}); err != nil {
			r.log.Warn("could not give an unused rate slot back", "error", err)
		}
	}
}

// send makes the claimed attempt; its slot goes back to the endpoint's pool
// (a message here waiting for one) as soon as the answer is in.
func (r *run) send(ctx context.Context, e lifecycle.Effect) {
	req := destination.For(r.k.Endpoint, r.k.Event, r.msg.DeliveryID, r.att.Claim.AttemptID, e.Number, r.Now(), e.Settings)
	req.PrevFailed = e.PrevFailed
	if e.WatchSlow {
		defer r.watchSlow(ctx).Stop()
	}
	res := r.Sender.Send(ctx, req)
	if r.att.Release() {
		r.m.Count(obs.MetricSlotHandoffs, 1)
	}
	r.m.Count(obs.MetricAttempts, 1)
	r.m.Observe(obs.MetricAttemptDuration, res.Duration)
	r.k.Answer = &lifecycle.Answer{Outcome: res, Started: res.StartedAt, At: r.Now()}
	r.entry = res.Entry(r.k.Delivery.AttemptEntry(r.att.Claim.AttemptID, e.Number))
}

// watchSlow marks the endpoint slow (lifecycle.CapNow) if the attempt is
// still waiting for its answer after lifecycle.SlowWatch.
func (r *run) watchSlow(ctx context.Context) *time.Timer {
	return time.AfterFunc(lifecycle.SlowWatch, func() {
		if err := r.Store.MarkSlow(context.WithoutCancel(ctx), r.k.Endpoint.ID, domain.Millis(r.Now().Add(lifecycle.SlowFor))); err != nil {
			r.log.Warn("could not mark the endpoint slow", "error", err)
		}
	})
}
