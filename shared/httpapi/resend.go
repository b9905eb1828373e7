package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

func (a *API) resend(ctx context.Context, req *request) response {
	d, r, failed := a.loadDelivery(ctx, req)
	if failed {
		return r
	}
	now := a.Now()
	if now.Sub(time.UnixMilli(d.CreatedAt)) > domain.DefaultRetention {
		return fail(http.StatusConflict, "too_old", "deliveries can be resent for 30 days after the event")
	}
	ep, err := a.Store.GetEndpoint(ctx, req.account, d.EndpointID)
	if errors.Is(err, store.ErrNotFound) {
		return fail(http.StatusConflict, "endpoint_deleted", "the delivery's endpoint was deleted")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	if ep.Disabled {
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint before resending to it")
	}
	// A resend books a slot of the account's rate like an event: it counts
	// against the key's ingest limit, so resends cannot crowd out events.
	if r, limited := limitAnswer(a.KeyLimits.take(ctx, req, 1)); limited {
		return r
	}
	acct, err := a.Store.GetAccount(ctx, req.account)
	if err != nil {
		return a.internal(ctx, err)
	}
	rate := acct.RatePerSecond
	if rate <= 0 {
		rate = a.DefaultRate
	}
	msg := resendMessage(d)
	msg.AttemptID = domain.NewID("att")
	delay := time.Duration(0)
	// Booked as ingest books: delayed to its slot's second (pace.Delay).
	if res, err := a.Limiter.ReserveAhead(ctx, req.account, 1, rate, 0); err == nil {
		msg.SlotAt = domain.Millis(res.First)
		delay = pace.Delay(res.First, a.Now())
	}
	if err := a.Queue.Send(ctx, msg, delay); err != nil {
		return a.internal(ctx, err)
	}
	return ok(http.StatusAccepted, map[string]string{"delivery_id": d.ID, "attempt_id": msg.AttemptID, "status": "queued"})
}

// resendMessage is the queue message of a manual attempt of d.
func resendMessage(d domain.Delivery) queue.Message {
	m := queue.For(d)
	m.Kind = queue.KindResend
	return m
}
