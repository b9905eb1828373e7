// Package redrive is the redrive function: invoked from the Lambda console
// with a JSON event, it moves matching DLQ messages back for a fresh series
// of attempts and leaves the rest in the DLQ.
package redrive

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/deadletter"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// Request is the console test event (samples in events/redrive*.json).
type Request struct {
	MaxMessages int               `json:"max_messages"` // how many DLQ messages to look at (default 100, at most 10000)
	EndpointID  string            `json:"endpoint_id"`  // only this endpoint's
	EventType   string            `json:"event_type"`   // only this event type's
	Reason      domain.FailReason `json:"reason"`       // only this failure reason ("poison" for messages SQS moved after maxReceiveCount)
	DryRun      bool              `json:"dry_run"`      // count, move nothing
}

// Response counts what happened.
type Response struct {
	Examined int `json:"examined"`
	Matched  int `json:"matched"`
	Moved    int `json:"moved"` // back in the delivery queue with a fresh series
	Stale    int `json:"stale"` // matched, but the delivery moved on since (restarted, delivered): removed from the DLQ
	// Gone: matched, but its delivery is gone (expired or deleted, or within
	// the expiry margin): nothing restarted, ever; removed from the DLQ and
	// logged ("not restarted: delivery gone") with its ids.
	Gone       int  `json:"gone"`
	Left       int  `json:"left"`       // not matching (or dry run): still in the DLQ
	Unreadable int  `json:"unreadable"` // not a message of ours: left in the DLQ
	DryRun     bool `json:"dry_run"`
	// Stopped says why the run ended: StopEmpty, StopMaxMessages or
	// StopDeadline. HasMore is true unless the DLQ was drained: run the same
	// request again to continue (what was moved is gone from the DLQ; what
	// was left is visible again).
	Stopped string `json:"stopped"`
	HasMore bool   `json:"has_more"`
}

// Why a run ended.
const (
	StopEmpty       = "empty"        // two receives in a row found nothing
	StopMaxMessages = "max_messages" // examined max_messages
	StopDeadline    = "deadline"     // stopped before the function's timeout
)

// DefaultMargin is how much of the invocation's time a run keeps unused
// when it stops: one more round (a receive and up to 10 restarts, each a
// DynamoDB transaction and an SQS send, with the SDK's retries) takes well
// under it. Releasing the messages it holds comes on top (TimeToStop).
const DefaultMargin = 30 * time.Second

// releaseCost is what releasing one batch of 10 held messages is allowed
// (a ChangeMessageVisibilityBatch call; tens of milliseconds in practice).
const releaseCost = 100 * time.Millisecond

// TimeToStop reports whether a run must stop before its next round: the
// time left before the deadline must cover the margin and the release of
// the held messages, so that the run ends, with its counts, before Lambda
// cuts it off (which would return nothing and leave the held messages
// invisible for 15 minutes).
func TimeToStop(now, deadline time.Time, held int, margin time.Duration) bool {
	release := time.Duration((held+9)/10) * releaseCost
	return deadline.Sub(now) < margin+release
}

// SQS is what the redrive function calls on the DLQ.
type SQS interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
}

// Store is what redrive needs of the table.
type Store interface {
	deadletter.Restarter
	GetDelivery(ctx context.Context, id string) (domain.Delivery, error)
}

// Redriver moves DLQ messages back.
type Redriver struct {
	SQS     SQS
	DLQURL  string
	Store   Store
	Queue   deadletter.MessageSender
	Log     *slog.Logger
	Metrics *obs.Metrics
	// Margin before the invocation's deadline (ctx.Deadline) at which a run
	// stops; 0 is DefaultMargin.
	Margin time.Duration
	// Now is the clock TimeToStop reads; nil is time.Now.
	Now func() time.Time
}

// ReasonPoison names messages that reached the DLQ through SQS's
// maxReceiveCount rather than as a failed delivery.
const ReasonPoison domain.FailReason = "poison"

// Handle runs one redrive. Messages looked at are kept invisible for the
// run (so none is seen twice) and the ones left are made visible again at
// the end.
func (r *Redriver) Handle(ctx context.Context, req Request) (Response, error) {
	if req.MaxMessages <= 0 {
		req.MaxMessages = 100
	}
	req.MaxMessages = min(req.MaxMessages, 10000)
	res := Response{DryRun: req.DryRun}
	var keep, remove []types.Message
	defer func() {
		// Whatever happens, what we hold goes back to the DLQ at once.
		r.release(context.WithoutCancel(ctx), keep)
	}()
	margin, now := r.Margin, r.Now
	if margin <= 0 {
		margin = DefaultMargin
	}
	if now == nil {
		now = time.Now
	}
	deadline, hasDeadline := ctx.Deadline()
	empty := 0
	for res.Examined < req.MaxMessages && empty < 2 {
		if hasDeadline && TimeToStop(now(), deadline, len(keep), margin) {
			res.Stopped = StopDeadline
			break
		}
		out, err := r.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(r.DLQURL), MaxNumberOfMessages: int32(min(10, req.MaxMessages-res.Examined)),
			VisibilityTimeout: 900, WaitTimeSeconds: 1,
		})
		if err != nil {
			return res, err
		}
		if len(out.Messages) == 0 {
			empty++
			continue
		}
		remove = remove[:0]
		for _, m := range out.Messages {
			res.Examined++
			if r.handle(ctx, req, m, &res) {
				remove = append(remove, m)
			} else {
				keep = append(keep, m)
			}
		}
		if err := r.delete(ctx, remove); err != nil {
			return res, err
		}
	}
	switch {
	case res.Stopped != "":
	case empty >= 2:
		res.Stopped = StopEmpty
	default:
		res.Stopped = StopMaxMessages
	}
	res.HasMore = res.Stopped != StopEmpty
	m := r.Metrics.Batch()
	m.Count(obs.MetricRedriveMoved, float64(res.Moved))
	m.Flush()
	r.Log.Info("redrive finished", "examined", res.Examined, "matched", res.Matched, "moved", res.Moved,
		"stale", res.Stale, "left", res.Left, "unreadable", res.Unreadable, "dry_run", res.DryRun,
		"stopped", res.Stopped, "has_more", res.HasMore,
		"endpoint_id", req.EndpointID, "event_type", req.EventType, "reason", req.Reason)
	return res, nil
}

// handle decides one message; true when it leaves the DLQ.
func (r *Redriver) handle(ctx context.Context, req Request, m types.Message, res *Response) bool {
	msg, err := queue.Decode(aws.ToString(m.Body))
	if err != nil {
		res.Unreadable++
		return false
	}
	reason := msg.Reason
	if poisoned(msg) {
		reason = ReasonPoison
	}
	if (req.EndpointID != "" && msg.EndpointID != req.EndpointID) || (req.Reason != "" && reason != req.Reason) ||
		(req.EventType != "" && !r.hasEventType(ctx, msg, req.EventType)) {
		res.Left++
		return false
	}
	res.Matched++
	if req.DryRun {
		res.Left++
		return false
	}
	log := r.Log.With("delivery_id", msg.DeliveryID, "reason", reason)
	switch msg.Kind {
	case queue.KindDeliver:
		return r.poison(ctx, msg, res, log)
	case queue.KindResend:
		// A manual resend SQS gave up on: send it back as it is. It is one
		// attempt under the id the API gave it, never a fresh series.
		if err := r.Queue.Send(ctx, msg, 0); err != nil {
			log.Error("send failed; message left in the DLQ", "error", err)
			res.Left++
			return false
		}
		res.Moved++
		log.Warn("poison resend message sent back to the delivery queue")
		return true
	}
	_, err = deadletter.Restart(ctx, r.Store, r.Queue, msg.DeliveryID, msg.EndpointID, msg.Gen)
	switch {
	case err == nil, errors.Is(err, deadletter.ErrNotQueued):
		res.Moved++
		log.Info("delivery restarted from the DLQ")
		return true
	case errors.Is(err, store.ErrNotFound):
		res.Gone++
		log.Warn("not restarted: delivery gone (expired or deleted); DLQ message removed",
			"event_id", msg.EventID, "endpoint_id", msg.EndpointID, "account_id", msg.AccountID)
		return true
	case errors.Is(err, store.ErrConflict):
		res.Stale++
		log.Info("DLQ message is stale (the delivery moved on); removed")
		return true
	}
	log.Error("restart failed; message left in the DLQ", "error", err)
	res.Left++
	return false
}

// poisoned reports whether a DLQ message got there through SQS's
// maxReceiveCount (a delivery queue message) rather than as a failed delivery.
func poisoned(msg queue.Message) bool {
	return msg.Kind == queue.KindDeliver || msg.Kind == queue.KindResend
}

// poison handles a delivery message SQS moved here after maxReceiveCount:
// if its delivery is still pending in that generation, a fresh copy goes
// back (if it is still poison, SQS will move it here again); otherwise it is
// stale.
func (r *Redriver) poison(ctx context.Context, msg queue.Message, res *Response, log *slog.Logger) bool {
	d, err := r.Store.GetDelivery(ctx, msg.DeliveryID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		log.Error("lookup failed; message left in the DLQ", "error", err)
		res.Left++
		return false
	case d.Status == domain.StatusPending && d.Gen == msg.Gen:
		fresh := queue.For(d)
		if err := r.Queue.Send(ctx, fresh, 0); err != nil {
			log.Error("send failed; message left in the DLQ", "error", err)
			res.Left++
			return false
		}
		res.Moved++
		log.Warn("poison message sent back to the delivery queue")
		return true
	case d.Status == domain.StatusFailed && d.Gen == msg.Gen:
		// It failed for good in the meantime: its own DLQ message carries it.
	}
	res.Stale++
	return true
}

// hasEventType filters on the event type; dead letters carry it, poison
// messages need a lookup.
func (r *Redriver) hasEventType(ctx context.Context, msg queue.Message, eventType string) bool {
	if msg.EventType != "" {
		return msg.EventType == eventType
	}
	d, err := r.Store.GetDelivery(ctx, msg.DeliveryID)
	return err == nil && d.EventType == eventType
}

func (r *Redriver) delete(ctx context.Context, msgs []types.Message) error {
	for start := 0; start < len(msgs); start += 10 {
		var entries []types.DeleteMessageBatchRequestEntry
		for _, m := range msgs[start:min(start+10, len(msgs))] {
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
		}
		if _, err := r.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(r.DLQURL), Entries: entries}); err != nil {
			return err
		}
	}
	return nil
}

func (r *Redriver) release(ctx context.Context, msgs []types.Message) {
	for start := 0; start < len(msgs); start += 10 {
		var entries []types.ChangeMessageVisibilityBatchRequestEntry
		for _, m := range msgs[start:min(start+10, len(msgs))] {
			entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
		}
		if _, err := r.SQS.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(r.DLQURL), Entries: entries}); err != nil {
			r.Log.Warn("could not release DLQ messages; they reappear after 15 minutes", "error", err)
		}
	}
}
