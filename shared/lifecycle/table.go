// Package lifecycle declares a delivery's life once: its states, the events
// that move it, the transitions with the condition each one's write carries
// (the table below, drawn in docs/lifecycle.md), and the pure decisions that
// pick a transition from the delivery, its endpoint, its event, the queue
// message and the time. It does no I/O: the worker, the sweeper, resend and
// redrive carry out what it decides, and a simulation can call it with plain
// values.
package lifecycle

import (
	"fmt"
	"strings"
)

// State is where a delivery is in its life. Status (what the API shows) is
// coarser: pending covers Pending and InFlight, failed covers DLQPending and
// DeadLettered.
type State string

// The states.
const (
	Pending      State = "Pending"      // waiting for its next attempt (status pending, no live lease)
	InFlight     State = "InFlight"     // an attempt is claimed (status pending, lease_until in the future)
	Delivered    State = "Delivered"    // a 2xx came back (status delivered)
	DLQPending   State = "DLQPending"   // failed for good, its DLQ message not yet sent (status failed, dlq_pending)
	DeadLettered State = "DeadLettered" // failed for good and in the DLQ (status failed)
	Start        State = "[*]"          // before ingest, and after DynamoDB's TTL deletes the item
)

// Event is what moves a delivery.
type Event string

// The events.
const (
	Ingested      Event = "ingested"      // the api wrote the event and its deliveries
	Claimed       Event = "claimed"       // a worker took the next attempt
	TakenOver     Event = "taken_over"    // the lease ran out (worker died): the next claim logs the attempt as interrupted
	Yielded       Event = "yielded"       // the claim is given back unused: its rate slot is far, the message goes back for it
	Answered2xx   Event = "answered_2xx"  // the receiver took it
	Retryable     Event = "retryable"     // 5xx or transport error, attempts left
	Throttled     Event = "throttled"     // 429 with Retry-After, free throttles left: the attempt is given back
	Rejected      Event = "rejected"      // 3xx/4xx, or a forbidden address at dial time
	Exhausted     Event = "exhausted"     // the last attempt failed
	Unattemptable Event = "unattemptable" // endpoint deleted or disabled or changed, event expired or about to, attempts used up by a crash
	Deferred      Event = "deferred"      // rate limit, cap or pause: the due time moves later
	Requeued      Event = "requeued"      // the sweeper hands a stuck delivery to a new message (gen+1)
	Parked        Event = "parked"        // a wait longer than SQS's 15-minute delay is kept in the table, not in the queue
	Unparked      Event = "unparked"      // the scheduler hands a parked delivery to a new message (gen+1), delayed to its time
	DLQSent       Event = "dlq_sent"      // its DLQ message was sent and marked
	Restarted     Event = "restarted"     // recover or a DLQ redrive: a fresh series (gen+1, series+1)
	Expired       Event = "expired"       // TTL: DynamoDB deletes it (reads treat it as gone from the TTL on)
)

// Transition is one edge: a state, the event, the next state, the store
// write that makes it (a named method of shared/store) and the condition
// that write carries, which is what makes it safe under at-least-once
// delivery and concurrent workers.
type Transition struct {
	From      State
	On        Event
	To        State
	Write     string // store method; "" when nothing is written
	Condition string
}

const noLease = "no live lease (lease_until absent or < now)"

// Transitions is the lifecycle. Every store write that changes a delivery's
// state is one of these.
var Transitions = []Transition{
	{Start, Ingested, Pending, "CreateEvent", "written (fresh id) before its event, whose conditional put commits it; due_at = now in the sweep index"},
	{Pending, Claimed, InFlight, "ClaimAttempt", "status = pending AND gen = g AND attempts = n AND next_attempt_at <= now AND " + noLease + "; with the cap: a slot of the worker's endpoint pool (shared/inflight)"},
	{InFlight, TakenOver, InFlight, "ClaimAttempt", "as claimed, the old lease having run out; the interrupted attempt is logged just before (left as it is if that attempt id is logged already)"},
	{InFlight, Yielded, Pending, "YieldClaim", "claim = c AND attempts = n AND status = pending; attempts - 1, claim and lease removed, the endpoint slot back to the worker's pool (no request was made)"},
	{InFlight, Answered2xx, Delivered, "RecordAttempt", "claim = c; keeps its sweep entry"},
	{InFlight, Retryable, Pending, "RecordAttempt", "claim = c; next_attempt_at = now + schedule wait; due_at the same, or kept when that is within half the sweep grace of it (KeepsDue)"},
	{InFlight, Throttled, Pending, "RecordAttempt", "claim = c; attempts - 1, throttles + 1 (at most MaxFreeThrottles)"},
	{InFlight, Rejected, DLQPending, "RecordAttempt", "claim = c; the recorder holds the DLQ claim"},
	{InFlight, Exhausted, DLQPending, "RecordAttempt", "claim = c; the recorder holds the DLQ claim"},
	{InFlight, Unattemptable, DLQPending, "FailWithoutAttempt", "status = pending AND gen = g AND " + noLease + " (a crash used the last attempt)"},
	{Pending, Unattemptable, DLQPending, "FailWithoutAttempt", "status = pending AND gen = g AND " + noLease},
	{Pending, Deferred, Pending, "PushDue", "status = pending AND gen = g AND due_at < until"},
	{Pending, Requeued, Pending, "Requeue", "status = pending AND due_at < now - grace AND (requeued_at absent or < now - grace) AND attempts < max AND ttl beyond the expiry margin AND " + noLease + "; gen + 1, due_at = requeued_at = now"},
	{Pending, Parked, Pending, "ParkDelivery", "status = pending AND gen = g; due_at = park_until = until (the sweep and park indexes), the message's slot kept"},
	{Pending, Unparked, Pending, "Unpark", "status = pending AND park_until < now + ahead AND park_gen = gen; gen + 1, out of the park index (one scheduler run wins)"},
	{DLQPending, DLQSent, DeadLettered, "MarkDeadLettered", "status = failed AND dlq_pending AND gen = g (after ClaimDeadLetter: dlq claim free, then the SQS send)"},
	{DLQPending, Restarted, Pending, "Restart", "status = failed AND ttl beyond the expiry margin (AND gen = g for a redriven DLQ message)"},
	{DeadLettered, Restarted, Pending, "Restart", "status = failed AND ttl beyond the expiry margin (AND gen = g for a redriven DLQ message)"},
	{Pending, Expired, Start, "", "ttl <= now (only when failing it as event_expired was itself lost)"},
	{Delivered, Expired, Start, "", "ttl <= now"},
	{DeadLettered, Expired, Start, "", "ttl <= now"},
}

// Mermaid draws a transition table (Transitions, BreakerTransitions) as a
// Mermaid state diagram; docs/lifecycle.md holds its output (tests keep the
// two the same).
func Mermaid(table []Transition) string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for _, t := range table {
		label := string(t.On)
		if t.Write != "" {
			label += " / " + t.Write
		}
		fmt.Fprintf(&b, "    %s --> %s : %s\n", t.From, t.To, label)
	}
	return b.String()
}

// Allowed reports whether the table has an edge from one state to another on an event.
func Allowed(from State, on Event, to State) bool {
	for _, t := range Transitions {
		if t.From == from && t.On == on && t.To == to {
			return true
		}
	}
	return false
}

// MarkdownTable lists a transition table with its writes and conditions,
// as docs/lifecycle.md shows them.
func MarkdownTable(table []Transition) string {
	var b strings.Builder
	b.WriteString("| from | event | to | write | condition |\n|---|---|---|---|---|\n")
	for _, t := range table {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", t.From, t.On, t.To, t.Write, t.Condition)
	}
	return b.String()
}
