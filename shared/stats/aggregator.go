package stats

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/obs"
)

// Writer adds an Update to its counter item (store.AddStats).
type Writer interface {
	AddStats(context.Context, Update) error
}

// Aggregator is the stats function: it folds a batch of stream records and
// writes one counter update per (endpoint, hour) and (account, hour).
type Aggregator struct {
	Store   Writer
	Log     *slog.Logger
	Metrics *obs.Metrics
}

// Handle is the Lambda handler for the table's stream mapping. An error
// fails the batch: the mapping retries it (halved, a bounded number of
// times), and updates already written are added again (docs/api.md, Stats).
func (a *Aggregator) Handle(ctx context.Context, ev events.DynamoDBEvent) error {
	return a.Apply(ctx, FromLambda(ev))
}

// Apply folds changes and writes the updates, stopping at the first error.
func (a *Aggregator) Apply(ctx context.Context, changes []Change) error {
	updates := Fold(changes)
	m := a.Metrics.Batch()
	defer m.Flush()
	m.Count("StatsRecords", float64(len(changes)))
	for i, u := range updates {
		if err := a.Store.AddStats(ctx, u); err != nil {
			a.Log.ErrorContext(ctx, "stats write failed", "account_id", u.Account, "endpoint_id", u.Endpoint,
				"hour", u.Hour, "written", i, "updates", len(updates), "error", err)
			m.Count("StatsWriteErrors", 1)
			return err
		}
	}
	m.Count("StatsWrites", float64(len(updates)))
	return nil
}
