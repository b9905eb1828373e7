// Package queue speaks SQS: the delivery queue's messages, putting a message
// back for later (per-message visibility is the retry backoff), and the
// dead-letter queue.
package queue

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// Message kinds.
const (
	KindDeliver    = "deliver"     // work on a delivery
	KindDeadLetter = "dead_letter" // a delivery that failed for good (the DLQ's messages)
	KindResend     = "resend"      // one manual attempt, asked for through the API
)

// Message is the body of a queue message. It carries ids, never the event
// body, which lives in DynamoDB. Field names are spelled out for the people
// reading the DLQ in the console.
type Message struct {
	Kind       string `json:"kind"`
	DeliveryID string `json:"delivery_id"`
	EventID    string `json:"event_id"`
	EndpointID string `json:"endpoint_id"`
	AccountID  string `json:"account_id"`
	// Gen is the delivery's generation this message drives; a message of an
	// older generation has been superseded and is dropped.
	Gen int `json:"gen"`
	// SlotAt is the rate-limit slot (unix ms) already reserved for this
	// message's attempt, so it does not reserve another.
	SlotAt int64 `json:"slot_at,omitempty"`
	// SlotFor is the delivery's attempt count the slot was reserved at: a
	// slot is good for one attempt, not for the retries after it.
	SlotFor int `json:"slot_for,omitempty"`
	// SlotIvl is the account's interval (ms) when the slot was booked: a
	// slot not used can be given back only while it is the last one booked
	// (ratelimit.Refund), which is what it tells. Both are whole ms: a
	// rate whose interval is not (ratelimit.Interval is to the µs, 300/s is
	// 3,333 µs) has its slot up to a millisecond early here and its unused
	// slot never given back (Refund's condition does not hold for the
	// truncated values; the slot is spent, as every unused slot was before
	// refunds).
	SlotIvl int64 `json:"slot_ivl,omitempty"`
	// SlotLead is how much earlier (ms) than usual its slot's delay lands
	// it: a message that reached a worker too late for its slot is sent
	// back a second earlier for the next (lifecycle.Message.Lead).
	SlotLead int64 `json:"slot_lead,omitempty"`
	// AttemptID is a resend's attempt id, given by the API.
	AttemptID string `json:"attempt_id,omitempty"`
	// Deferred counts how often the message was put back without an
	// attempt, carried over when it is sent again as a new message.
	Deferred int `json:"deferred,omitempty"`
	// Hops counts how often deliver sent this delivery's message back to
	// its own queue (retries and deferrals alike). Lambda's recursive loop
	// detection stops such a chain after about 16 hops unless the function
	// allows recursion (the stack sets RecursiveLoop: Allow on deliver); the
	// count is logged so that a long chain is visible.
	Hops int `json:"hops,omitempty"`
	// Trace is the X-Ray trace of the event this message drives
	// (Root=...;Parent=...;Sampled=..., the ingest's), set when the message
	// is first sent and kept by every retry and deferral sent again from it:
	// it is the message's AWSTraceHeader (with the sending invocation's
	// Lineage), and the worker's obs.WithTraceHeader(ctx, msg.Trace) puts
	// an attempt's log lines and spans in the event's trace.
	Trace string `json:"trace,omitempty"`
	// Lane is "slow" on the slow lane's queue (lifecycle.Lane): the
	// messages of an endpoint that is failing; "paced" on the paced lane's:
	// messages carrying an account slot booked ahead.
	Lane string `json:"lane,omitempty"`
	// Body is the event's body, carried by ingest's messages when it is at
	// most CarriedBodyMax (and kept by every retry and deferral sent again
	// from them), with EventType: the worker then reads three items, not
	// four, a read unit less per attempt. Messages of the sweeper, the
	// scheduler, redrives, resends and dead letters carry none. Base64 in
	// the message's JSON, so it comes back byte for byte (a json.RawMessage
	// would be compacted, and the receiver must get the bytes it was sent).
	Body []byte `json:"body,omitempty"`
	// First marks ingest's own first message of a delivery it has just
	// written, carrying its event's body: the delivery is as ingest wrote
	// it (Delivery), so the worker does not read its item, one read unit
	// less. The claim's condition holds it to that (gen, attempts, its ids)
	// and its write returns the item as it is. A message sent again (a
	// retry, a deferral) carries none.
	First *First `json:"first,omitempty"`

	// Dead letters, and messages carrying their event's body.
	EventType  string            `json:"event_type,omitempty"`
	Reason     domain.FailReason `json:"reason,omitempty"`
	Attempts   int               `json:"attempts,omitempty"`
	LastStatus int               `json:"last_status,omitempty"`
	LastError  string            `json:"last_error,omitempty"`
	FailedAt   string            `json:"failed_at,omitempty"`
}

// First is what a new delivery's item holds beyond its message's ids and
// slot (ingest's newDelivery).
type First struct {
	CreatedAt int64 `json:"created_at"` // unix ms: also its next_attempt_at and updated_at
	ExpiresAt int64 `json:"ttl"`        // unix s
}

// Delivery is the delivery m's First says ingest wrote (nil without one, or
// without the event's body): domain.NewDelivery, due at its slot or when it
// was made.
func (m Message) Delivery() *domain.Delivery {
	if m.First == nil || len(m.Body) == 0 || m.Kind != KindDeliver {
		return nil
	}
	d := domain.NewDelivery(m.DeliveryID, m.AccountID, m.EndpointID, m.EventID, m.EventType, m.First.CreatedAt, m.First.ExpiresAt)
	d.Gen, d.DueAt = m.Gen, m.SlotAt
	if d.DueAt == 0 {
		d.DueAt = d.CreatedAt
	}
	return &d
}

// CarriedBodyMax is the largest event body a message carries: ten such
// messages (base64: 5.5 KB each) still fit one SendMessageBatch in SQS's
// 64 KB billing chunk, and an event item that size is one read unit.
const CarriedBodyMax = 4 << 10

// Carrying is m carrying body (its event's, of type eventType) when it is
// small enough; m as it is otherwise.
func (m Message) Carrying(eventType string, body []byte) Message {
	if len(body) > 0 && len(body) <= CarriedBodyMax {
		m.EventType, m.Body = eventType, body
	}
	return m
}

// Event is the event m carries (nil when it carries no body): what the
// worker would read of the event's item.
func (m Message) Event() *domain.Event {
	if len(m.Body) == 0 {
		return nil
	}
	return &domain.Event{ID: m.EventID, AccountID: m.AccountID, Type: m.EventType, Body: m.Body}
}

// For returns the message that drives delivery d.
func For(d domain.Delivery) Message {
	return Message{Kind: KindDeliver, DeliveryID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, AccountID: d.AccountID, Gen: d.Gen}
}

// DeadLetterFor returns the DLQ message of a failed delivery.
func DeadLetterFor(d domain.Delivery) Message {
	m := For(d)
	m.Kind = KindDeadLetter
	m.EventType, m.Reason, m.Attempts = d.EventType, d.FailReason, d.Attempts
	m.LastStatus, m.LastError = d.LastStatus, d.LastError
	if d.FailedAt != 0 {
		m.FailedAt = time.UnixMilli(d.FailedAt).UTC().Format(time.RFC3339)
	}
	return m
}

// ErrMalformed is a body that is not one of our messages.
var ErrMalformed = errors.New("malformed queue message")

// Decode reads a message body.
func Decode(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return m, ErrMalformed
	}
	if m.Kind == "" {
		m.Kind = KindDeliver
	}
	if (m.Kind != KindDeliver && m.Kind != KindDeadLetter && m.Kind != KindResend) ||
		(m.Kind == KindResend) != domain.HasPrefix(m.AttemptID, "att") || !domain.HasPrefix(m.DeliveryID, "dlv") ||
		m.EventID == "" || m.EndpointID == "" || m.AccountID == "" {
		return m, ErrMalformed
	}
	return m, nil
}

// Encode writes a message body.
func (m Message) Encode() string {
	b, _ := json.Marshal(m) // plain strings, numbers and bytes: cannot fail
	return string(b)
}
