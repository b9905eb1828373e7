package queue

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
)

// DLQ reasons of messages the worker cannot work on.
const (
	ReasonMalformed = "malformed_message" // not a message of ours, or corrupted
	ReasonMismatch  = "message_mismatch"  // the ids it carries are not its delivery's
)

// ForStep is what lifecycle.Step knows of the message, as rec handed it over.
func (m Message) ForStep(rec events.SQSMessage) lifecycle.Message {
	received, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	return lifecycle.Message{Kind: m.Kind, DeliveryID: m.DeliveryID, AccountID: m.AccountID, EndpointID: m.EndpointID,
		EventID: m.EventID, Gen: m.Gen, SlotFor: m.SlotFor, Deferred: m.Deferred, Received: max(received, 1),
		Slot: lifecycle.Slot{At: domain.Time(m.SlotAt), Interval: time.Duration(m.SlotIvl) * time.Millisecond}, Lane: LaneOf(m.Lane),
		Lead: time.Duration(m.SlotLead) * time.Millisecond, Carried: m.Delivery() != nil}
}

// Message.Lane on the slow and paced lanes (the fast lane's is empty).
const (
	LaneSlow  = "slow"
	LanePaced = "paced"
)

// LaneOf is the lifecycle.Lane a Message.Lane names.
func LaneOf(name string) lifecycle.Lane {
	switch name {
	case LaneSlow:
		return lifecycle.LaneSlow
	case LanePaced:
		return lifecycle.LanePaced
	}
	return lifecycle.LaneFast
}

// LaneName is Message.Lane for l.
func LaneName(l lifecycle.Lane) string {
	switch l {
	case lifecycle.LaneSlow:
		return LaneSlow
	case lifecycle.LanePaced:
		return LanePaced
	}
	return ""
}

// PutBack is the message sent again (or parked) for the put-back e: with
// the slot it carries from now on, one more hop, and one more deferral
// unless it is a retry.
func (m Message) PutBack(e lifecycle.Effect) Message {
	switch {
	case e.SetSlot != nil:
		m.SlotAt, m.SlotFor, m.SlotIvl = domain.Millis(e.SetSlot.At), e.SlotFor, e.SetSlot.Interval.Milliseconds()
	case e.Unslot:
		m.SlotAt, m.SlotFor, m.SlotIvl = 0, 0, 0
	}
	if !e.NotDeferral {
		m.Deferred++
	}
	m.SlotLead = e.Lead.Milliseconds()
	m.First = nil // the delivery may have moved on: read it
	m.Hops++
	m.Lane = LaneName(e.Lane)
	return m
}

// EachMessage runs handle on every message of the batch at once and reports
// the ones it did not finish as batch item failures, for SQS to hand over
// again. A batch of one (a quiet queue's usual invocation) is handled on the
// caller's goroutine: a goroutine of its own started with a small stack that
// the AWS SDK's calls grew by copying, about a third of the stack growth in
// BenchmarkDelivery's profile (docs/performance.md "Our CPU per delivery").
func EachMessage(ctx context.Context, ev events.SQSEvent, handle func(context.Context, events.SQSMessage) bool) events.SQSEventResponse {
	if len(ev.Records) == 1 {
		if rec := ev.Records[0]; !handle(ctx, rec) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: rec.MessageId}}}
		}
		return events.SQSEventResponse{}
	}
	var mu sync.Mutex
	var resp events.SQSEventResponse
	var wg sync.WaitGroup
	for _, rec := range ev.Records {
		wg.Go(func() {
			if !handle(ctx, rec) {
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return resp
}
