package delivery

import (
	"context"
	"log/slog"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// endpointSlot books the attempt a slot on the endpoint's own limiter when
// it has a rate of its own (endpointcfg.Resolve, here without the account,
// so whenever one is set: the account's limiter still binds when it is the
// lower), in addition to the account's slot: the attempt goes at the later
// of the two, which it returns. The
// endpoint's limiter is the account limiter's table, keyed by endpointKey.
//
// A far endpoint slot is not carried: both slots are given back (Refund)
// and the message comes back a lead before the endpoint slot to book both
// again. Carrying it would need a second slot in the queue message and the
// parked item; given back, the endpoint's schedule holds only the attempts
// about to go. What is not given back: the endpoint slot of an attempt
// whose claim then fails (it costs the endpoint a little rate, never more
// than its rate), and resends book the account's rate only.
func (w *Worker) endpointSlot(ctx context.Context, msg queue.Message, d domain.Delivery, ep *domain.Endpoint, account ratelimit.Reservation, m *obs.Batch, log *slog.Logger) (time.Time, step, bool) {
	cfg := w.settings(ep)
	if !cfg.OwnRate {
		return account.First, done, true
	}
	key := endpointKey(ep)
	now := w.Now()
	res, err := w.Limiter.Reserve(ctx, key, 1, cfg.RatePerSecond)
	if err != nil {
		w.refund(ctx, d.AccountID, account, log)
		return now, step{err: err}, false
	}
	if wait := res.First.Sub(now); wait <= maxWaitInWorker {
		return later2(account.First, res.First), done, true
	}
	m.Count(obs.MetricRateLimitDeferrals, 1)
	w.refund(ctx, d.AccountID, account, log)
	w.refund(ctx, key, res, log)
	w.keepDue(ctx, d, res.First, log)
	next := msg
	next.SlotAt, next.SlotFor = 0, 0 // given back: booked again on return
	next.Deferred--                  // waitFor counts put-backs; a far slot is not one
	if s := w.waitFor(ctx, next, now.Add(ratelimit.Delay(res.First, now, ratelimit.Lead))); s.err != nil {
		return now, s, false
	}
	return now, done, false
}

// later2 is the later of two times.
func later2(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
