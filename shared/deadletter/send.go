// Package deadletter sends a failed delivery's DLQ message once, and
// restarts a dead-lettered delivery with a new series.
package deadletter

import (
	"context"
	"errors"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// Store is the table's part in dead-lettering.
type Store interface {
	ClaimDeadLetter(context.Context, string) error
	MarkDeadLettered(ctx context.Context, id string, gen int) error
}

// Queue sends to the DLQ.
type Queue interface {
	DeadLetter(context.Context, queue.Message) error
}

// ErrNotMarked: the DLQ message was sent, but marking it failed; it may be
// sent again (after the DLQ claim runs out), never lost.
var ErrNotMarked = errors.New("DLQ message sent but not marked")

// Send is the one DLQ sequence, used by the worker and the
// sweeper: take the DLQ claim (unless the caller already holds it, as the
// writer of the failure does), send the message, and mark the generation
// sent. If the process dies in between, the delivery stays in the sweep
// index and the sweeper (or its message) takes over after the claim runs
// out: the one case where a DLQ message can be sent twice. store.ErrConflict
// means someone else holds the claim or it was sent.
func Send(ctx context.Context, st Store, q Queue, d domain.Delivery, claimHeld bool) error {
	if !claimHeld {
		if err := st.ClaimDeadLetter(ctx, d.ID); err != nil {
			return err
		}
	}
	if err := q.DeadLetter(ctx, queue.DeadLetterFor(d)); err != nil {
		return err
	}
	if err := st.MarkDeadLettered(ctx, d.ID, d.Gen); err != nil && !errors.Is(err, store.ErrConflict) {
		return errors.Join(ErrNotMarked, err)
	}
	return nil
}
