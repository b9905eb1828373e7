package deadletter

import (
	"context"
	"errors"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/store"
)

// SendForStep is Send as lifecycle.Step reads it: what it came to, and an
// error only when it came to nothing (a system error, for the step).
func SendForStep(ctx context.Context, st Store, q Queue, d domain.Delivery, claimHeld bool) (lifecycle.DeadLetterResult, error) {
	switch err := Send(ctx, st, q, d, claimHeld); {
	case err == nil:
		return lifecycle.DeadLetterSent, nil
	case errors.Is(err, ErrNotMarked):
		return lifecycle.DeadLetterUnmarked, nil
	case errors.Is(err, store.ErrConflict):
		return lifecycle.DeadLetterElsewhere, nil
	default:
		return lifecycle.DeadLetterNone, err
	}
}

// RestartForStep is Restart of a redriven DLQ message's generation as
// lifecycle.Step reads it: done, unless a system error says otherwise. A
// lost send (the sweeper queues it) is a restart; notRestarted says why
// nothing was restarted (NotRestartedGone, NotRestartedMovedOn), "" when
// the delivery was.
func RestartForStep(ctx context.Context, st Restarter, q MessageSender, id, endpointID string, gen int) (notRestarted string, err error) {
	_, err = Restart(ctx, st, q, id, endpointID, gen)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return NotRestartedGone, nil
	case errors.Is(err, store.ErrConflict):
		return NotRestartedMovedOn, nil
	case errors.Is(err, ErrNotQueued):
		return "", nil
	}
	return "", err
}

// Why a redriven DLQ message restarted nothing.
const (
	NotRestartedGone    = "delivery_gone"     // expired or deleted (or within the expiry margin): nothing to restart, ever
	NotRestartedMovedOn = "delivery_moved_on" // no longer failed in that generation (restarted already: a second copy)
)
