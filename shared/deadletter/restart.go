package deadletter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
)

// Restarter gives failed deliveries a fresh series.
type Restarter interface {
	Restart(ctx context.Context, id, endpointID string, gen int) (domain.Delivery, error)
}

// MessageSender queues a message.
type MessageSender interface {
	Send(context.Context, queue.Message, time.Duration) error
}

// Restart gives a failed delivery a fresh series of attempts and queues it.
// With gen >= 0 only that generation's failure is restarted (a DLQ message
// restarting what it reported, so a second copy does nothing); gen < 0
// restarts whatever failure the delivery is in (bulk recover).
// store.ErrConflict means the delivery was not failed in that generation;
// store.ErrNotFound that it is gone (expired or deleted) or about to be.
// If the send is lost, the restart is still durable and the sweeper queues it.
func Restart(ctx context.Context, st Restarter, q MessageSender, id, endpointID string, gen int) (domain.Delivery, error) {
	d, err := st.Restart(ctx, id, endpointID, gen)
	if err != nil {
		return d, err
	}
	if err := q.Send(ctx, queue.For(d), 0); err != nil {
		return d, fmt.Errorf("%w: %v", ErrNotQueued, err)
	}
	return d, nil
}

// ErrNotQueued: the restart is done, but its message was not sent; the
// sweeper will send it.
var ErrNotQueued = errors.New("restarted but not queued")
