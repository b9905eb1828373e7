package opevents

import (
	"context"
	"log/slog"
)

// Log writes each event as one JSON line through a logger, in the shape
// EventBridge delivers it to a rule's target (source, detail-type, time,
// detail): make dev has no bus, and a developer sees there what would have
// been published.
type Log struct {
	Log *slog.Logger
}

// Publish logs events.
func (l Log) Publish(ctx context.Context, events ...Event) {
	for _, e := range events {
		l.Log.InfoContext(ctx, "operational event", "source", Source, "detail-type", string(e.Type),
			"time", stamp(e.At), "detail", e.Detail)
	}
}
