// Package putback makes a queue message come back later without keeping it
// in flight (lifecycle.DoPutBack): a fresh copy sent with a delay, or, past
// what SQS can delay, the delivery parked in the table for the scheduler
// (shared/sweep). The received copy is then finished; if the process dies
// first, it comes back and finds the same decision (a second copy of one
// generation never makes a second attempt: the claim decides).
package putback

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// Store is the table's part: the due time moved, a delivery parked.
type Store interface {
	PushDue(ctx context.Context, id string, gen int, until int64) error
	ParkDelivery(ctx context.Context, id string, p store.Park) error
}

// Queue sends the delayed copy.
type Queue interface {
	Send(context.Context, queue.Message, time.Duration) error
}

// Do puts msg back as e says; d is its delivery as loaded (nil: not
// loaded). The error is a system error, for the step; a due time that could
// not be moved is only logged (the sweeper may then re-queue the delivery
// early, and the claim keeps that to one attempt).
func Do(ctx context.Context, st Store, q Queue, log *slog.Logger, msg queue.Message, d *domain.Delivery, e lifecycle.Effect) (lifecycle.PutBackResult, error) {
	msg = msg.PutBack(e)
	if !e.MoveDue.IsZero() && d != nil {
		if err := st.PushDue(ctx, d.ID, d.Gen, domain.Millis(e.MoveDue)); err != nil && !errors.Is(err, store.ErrConflict) {
			log.Warn("could not move the due time; the sweeper may re-queue this delivery", "error", err)
		}
	}
	if !e.Park {
		return lifecycle.PutBackDone, q.Send(ctx, msg, e.Delay)
	}
	err := st.ParkDelivery(ctx, msg.DeliveryID, store.Park{Until: domain.Millis(e.Until), Gen: msg.Gen,
		SlotAt: msg.SlotAt, SlotFor: msg.SlotFor, Deferred: msg.Deferred})
	switch {
	case errors.Is(err, store.ErrConflict):
		return lifecycle.PutBackSuperseded, nil
	case errors.Is(err, store.ErrOutlives):
		return lifecycle.PutBackOutlives, nil
	}
	return lifecycle.PutBackDone, err
}
