package queue_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/queue"
)

// EachMessage reports exactly the messages not finished, for a batch of one
// (handled on the caller's goroutine: no goroutine, no allocation when it
// succeeds) and for a batch of several (handled at once).
func TestEachMessage(t *testing.T) {
	ctx := context.Background()
	one := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "a"}}}
	ok := func(context.Context, events.SQSMessage) bool { return true }
	if resp := queue.EachMessage(ctx, one, ok); len(resp.BatchItemFailures) != 0 {
		t.Errorf("a finished message reported: %v", resp.BatchItemFailures)
	}
	if n := testing.AllocsPerRun(100, func() { queue.EachMessage(ctx, one, ok) }); n != 0 {
		t.Errorf("a batch of one: %v allocations, want 0 (no goroutine of its own)", n)
	}
	failed := queue.EachMessage(ctx, one, func(context.Context, events.SQSMessage) bool { return false })
	if len(failed.BatchItemFailures) != 1 || failed.BatchItemFailures[0].ItemIdentifier != "a" {
		t.Errorf("a batch of one not finished: %v", failed.BatchItemFailures)
	}

	batch := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "a"}, {MessageId: "b"}, {MessageId: "c"}}}
	var wg sync.WaitGroup
	wg.Add(len(batch.Records)) // every message is in flight at once: none finishes before all started
	resp := queue.EachMessage(ctx, batch, func(_ context.Context, m events.SQSMessage) bool {
		wg.Done()
		wg.Wait()
		return m.MessageId != "b"
	})
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	if !slices.Equal(ids, []string{"b"}) {
		t.Errorf("batch item failures %v, want [b]", ids)
	}
}
