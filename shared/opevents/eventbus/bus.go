// Package eventbus publishes operational events (package opevents) to an
// EventBridge bus. Apart from opevents so that the local runner, which logs
// them instead, does not link the EventBridge client.
package eventbus

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/opevents"
)

// PutEventsAPI is the one EventBridge call the bus publisher makes.
type PutEventsAPI interface {
	PutEvents(context.Context, *eventbridge.PutEventsInput, ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// maxEntries is PutEvents' limit of entries per call.
const maxEntries = 10

// Bus publishes to an EventBridge bus with PutEvents, up to 10 events a
// call. An event that is not accepted (the call failed, or its entry came
// back with an error code) is logged and counted as MetricOpEventsFailed;
// the SDK's own retries are the only retries: an alert that is late by a
// function's lifetime is worth less than a delivery that waits for it.
type Bus struct {
	Client  PutEventsAPI
	Name    string // the bus's name or ARN
	Log     *slog.Logger
	Metrics *obs.Metrics
}

// Publish sends events; it never fails the caller.
func (b *Bus) Publish(ctx context.Context, events ...opevents.Event) {
	// The fact has happened: the caller's context ending (a producer that
	// hung up) must not lose its alert.
	ctx = context.WithoutCancel(ctx)
	failed := 0
	for start := 0; start < len(events); start += maxEntries {
		batch := events[start:min(start+maxEntries, len(events))]
		entries := make([]types.PutEventsRequestEntry, 0, len(batch))
		for _, e := range batch {
			detail, err := json.Marshal(e.Detail)
			if err != nil { // the details are plain structs: not expected
				b.Log.Error("operational event not encoded", "detail_type", string(e.Type), "error", err)
				failed++
				continue
			}
			entries = append(entries, types.PutEventsRequestEntry{
				EventBusName: aws.String(b.Name), Source: aws.String(opevents.Source), DetailType: aws.String(string(e.Type)),
				Detail: aws.String(string(detail)), Time: aws.Time(e.At),
			})
		}
		if len(entries) == 0 {
			continue
		}
		out, err := b.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		if err != nil {
			b.Log.Error("operational events not published", "count", len(entries), "error", err)
			failed += len(entries)
			continue
		}
		for i, r := range out.Entries {
			if r.ErrorCode != nil {
				b.Log.Error("operational event not published", "detail_type", aws.ToString(entries[i].DetailType),
					"error_code", aws.ToString(r.ErrorCode), "error", aws.ToString(r.ErrorMessage))
				failed++
			}
		}
	}
	if failed > 0 && b.Metrics != nil {
		m := b.Metrics.Batch()
		m.Count(obs.MetricOpEventsFailed, float64(failed))
		m.Flush()
	}
}
