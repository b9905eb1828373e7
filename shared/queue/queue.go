package queue

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/obs"
)

// SQS is the part of the SQS client the queue uses.
type SQS interface {
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(context.Context, *sqs.SendMessageBatchInput, ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ChangeMessageVisibility(context.Context, *sqs.ChangeMessageVisibilityInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// Limits SQS sets.
const (
	MaxDelay      = 15 * time.Minute // DelaySeconds
	MaxVisibility = 12 * time.Hour   // from the receive
	batchSize     = 10
)

// Queue sends to the delivery queue (its fast lane and, when deployed, its
// slow and paced lanes: lifecycle.Lane) and the DLQ.
type Queue struct {
	sqs               SQS
	fast, slow, paced *lane // slow, paced: nil when there is no such lane
	dlqURL            *string
}

// lane is one delivery queue and its group commit.
type lane struct {
	url       *string
	mu        sync.Mutex
	sending   bool       // a request of Send's and SendAll's is in flight
	gathering *sendGroup // the messages sent meanwhile, for the next request
}

// sendGroup is the messages of several sends that share one
// SendMessageBatch. start is closed when the request may be made (the one
// before it has ended), done when out and err are set.
type sendGroup struct {
	entries     []types.SendMessageBatchRequestEntry
	start, done chan struct{}
	out         *sqs.SendMessageBatchOutput
	err         error
}

// New returns a Queue.
func New(client SQS, url, dlqURL string) *Queue {
	return &Queue{sqs: client, fast: &lane{url: aws.String(url)}, dlqURL: aws.String(dlqURL)}
}

// WithSlowLane sends the messages whose Lane is "slow" to the queue at url.
func (q *Queue) WithSlowLane(url string) *Queue {
	q.slow = &lane{url: aws.String(url)}
	return q
}

// WithPacedLane sends the messages whose Lane is "paced" to the queue at url.
func (q *Queue) WithPacedLane(url string) *Queue {
	q.paced = &lane{url: aws.String(url)}
	return q
}

// laneOf is the queue m goes to: its lane's if there is one, else the fast
// lane's.
func (q *Queue) laneOf(m Message) *lane {
	switch {
	case m.Lane == LaneSlow && q.slow != nil:
		return q.slow
	case m.Lane == LanePaced && q.paced != nil:
		return q.paced
	}
	return q.fast
}

// Outgoing is a message to send after a delay.
type Outgoing struct {
	Message Message
	Delay   time.Duration
}

// Send puts one message on the delivery queue, visible after delay (at most
// 15 min). It is sent as SendAll sends.
func (q *Queue) Send(ctx context.Context, m Message, delay time.Duration) error {
	_, err := q.SendAll(ctx, []Outgoing{{Message: m, Delay: delay}})
	return err
}

// SendAll puts messages on the delivery queue, ten to a request. It returns
// the indexes of the messages SQS did not take, with the first error.
//
// The messages a process sends while a request of its own to the queue is
// in flight wait for it to end and then go together in the next request, up
// to ten: a group commit, with no wait when none is in flight. A deliver
// invocation's messages putting their retries back share requests instead
// of making one each (SQS bills by the request), and so do make dev's
// producers. (Our messages are ids, under 1 KiB: ten are far under SQS's
// limit on a request's size.)
func (q *Queue) SendAll(ctx context.Context, msgs []Outgoing) (failed []int, err error) {
	msgs = traced(ctx, msgs)
	byLane := map[*lane][]int{} // each lane's messages, as indexes into msgs
	for i, m := range msgs {
		l := q.laneOf(m.Message)
		byLane[l] = append(byLane[l], i)
	}
	for l, idx := range byLane {
		for start := 0; start < len(idx); start += batchSize {
			ten := idx[start:min(start+batchSize, len(idx))]
			some := make([]Outgoing, len(ten))
			for j, i := range ten {
				some[j] = msgs[i]
			}
			refused, sendErr := l.sendTen(ctx, q.sqs, some)
			for _, j := range refused {
				failed = append(failed, ten[j])
			}
			if err == nil {
				err = sendErr
			}
		}
	}
	slices.Sort(failed)
	return failed, err
}

// sendTen sends up to ten messages, in the next request or, when the next
// has no room left, in one of their own at once.
func (q *lane) sendTen(ctx context.Context, c SQS, msgs []Outgoing) (failed []int, err error) {
	sender := obs.InvocationTraceHeader(ctx) // its Lineage
	g, offset, writer := q.join(msgs, sender)
	if g == nil {
		g = &sendGroup{entries: entries(msgs, 0, sender)}
		g.out, g.err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: q.url, Entries: g.entries})
	} else if writer {
		<-g.start // the request in flight before it has ended
		// The request is the others' too: its maker going away (a producer
		// that hung up) must not fail their messages, nor its own, whose
		// deliveries are stored already.
		g.out, g.err = c.SendMessageBatch(context.WithoutCancel(ctx), &sqs.SendMessageBatchInput{QueueUrl: q.url, Entries: g.entries})
		close(g.done)
		q.next()
	} else {
		<-g.done
	}
	return g.failedOf(offset, len(msgs))
}

// join adds msgs to the gathering group (a new one if none gathers), and
// says where they begin in it and whether its caller makes the request; a
// group whose request can be made at once (none in flight) is the messages
// alone. With no room left in the gathering group, it returns none: the
// messages go alone, at once.
func (q *lane) join(msgs []Outgoing, sender string) (g *sendGroup, offset int, writer bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if g = q.gathering; g == nil {
		g, writer = &sendGroup{start: make(chan struct{}), done: make(chan struct{})}, true
		q.gathering = g
	} else if len(g.entries)+len(msgs) > batchSize {
		return nil, 0, false
	}
	offset = len(g.entries)
	g.entries = append(g.entries, entries(msgs, offset, sender)...)
	if !q.sending {
		q.sending, q.gathering = true, nil
		close(g.start)
	}
	return g, offset, writer
}

// next lets the gathering group make its request, now that the one in
// flight has ended.
func (q *lane) next() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if g := q.gathering; g != nil {
		q.gathering = nil
		close(g.start)
		return
	}
	q.sending = false
}

// traced is msgs with the sender's trace on those that carry none (a copy
// when one changes: the caller's slice is left as it was). A message keeps
// the trace it has: a retry or deferral the worker sends again stays in the
// event's trace (Message.Trace).
func traced(ctx context.Context, msgs []Outgoing) []Outgoing {
	h := messageTrace(obs.TraceHeader(ctx))
	if h == "" {
		return msgs
	}
	out := make([]Outgoing, len(msgs))
	for i, m := range msgs {
		if m.Message.Trace == "" {
			m.Message.Trace = h
		}
		out[i] = m
	}
	return out
}

// messageTrace is a trace header without its Lineage: the part that names
// the event's trace, kept in the message.
func messageTrace(h string) string {
	var keep []string
	for _, f := range strings.Split(h, ";") {
		if k, _, _ := strings.Cut(strings.TrimSpace(f), "="); k == "Root" || k == "Parent" || k == "Sampled" {
			keep = append(keep, strings.TrimSpace(f))
		}
	}
	return strings.Join(keep, ";")
}

// lineage is a trace header's Lineage field ("" when none).
func lineage(h string) string {
	for _, f := range strings.Split(h, ";") {
		if k, _, _ := strings.Cut(strings.TrimSpace(f), "="); k == "Lineage" {
			return strings.TrimSpace(f)
		}
	}
	return ""
}

// traceAttribute is the AWSTraceHeader system attribute of a message: its
// trace, with the sending invocation's Lineage (Lambda's recursion
// detection counts the hops by it, as when the SDK sets the header); nil
// for an untraced message.
func traceAttribute(trace, sender string) map[string]types.MessageSystemAttributeValue {
	if trace == "" {
		return nil
	}
	if l := lineage(sender); l != "" {
		trace += ";" + l
	}
	return map[string]types.MessageSystemAttributeValue{
		string(types.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(trace)},
	}
}

// entries are msgs as a request's entries, their ids counted from first;
// sender is the trace header of the sending invocation.
func entries(msgs []Outgoing, first int, sender string) []types.SendMessageBatchRequestEntry {
	out := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		out[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(first + i)),
			MessageBody: aws.String(m.Message.Encode()), DelaySeconds: delaySeconds(m.Delay),
			MessageGroupId: groupOf(m.Message), MessageSystemAttributes: traceAttribute(m.Message.Trace, sender)}
	}
	return out
}

// groupOf is a delivery-queue message's MessageGroupId: its account. On a
// standard queue a group id turns on SQS's fair queues: a tenant holding
// more than its share of the messages in flight (one whose endpoints are
// slow or dead) is served after the quiet ones, so their dwell time stays
// flat; messages of one group are still received in parallel and with
// their own delays (unlike a FIFO queue's groups).
func groupOf(m Message) *string {
	if m.AccountID == "" {
		return nil
	}
	return aws.String(m.AccountID)
}

// failedOf is which of the n messages at offset in the group SQS did not
// take (indexes from 0), with the first error.
func (g *sendGroup) failedOf(offset, n int) (failed []int, err error) {
	if g.err != nil {
		for i := range n {
			failed = append(failed, i)
		}
		return failed, g.err
	}
	for _, f := range g.out.Failed {
		i, _ := strconv.Atoi(aws.ToString(f.Id))
		if i < offset || i >= offset+n {
			continue
		}
		failed = append(failed, i-offset)
		if err == nil {
			err = fmt.Errorf("sqs refused message: %s %s", aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
	return failed, err
}

// Hide makes a message received from the queue sourceARN (the event
// record's EventSourceARN: a receipt is good only for its own queue)
// invisible for d (rounded up to whole seconds, at most 12 h): with the
// message reported as a batch failure, this is how a system error waits.
func (q *Queue) Hide(ctx context.Context, sourceARN, receipt string, d time.Duration) error {
	url := q.fast.url
	if q.slow != nil && sourceARN != "" && strings.HasSuffix(aws.ToString(q.slow.url), "/"+sourceARN[strings.LastIndex(sourceARN, ":")+1:]) {
		url = q.slow.url
	}
	secs := int32(math.Ceil(min(d, MaxVisibility).Seconds()))
	_, err := q.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: url, ReceiptHandle: aws.String(receipt), VisibilityTimeout: max(secs, 0),
	})
	return err
}

// DeadLetter sends m to the DLQ, with its reason also as message attributes
// so the console can show it.
func (q *Queue) DeadLetter(ctx context.Context, m Message) error {
	if m.Trace == "" {
		m.Trace = messageTrace(obs.TraceHeader(ctx))
	}
	return q.deadLetter(ctx, m.Encode(), string(m.Reason), m.DeliveryID, m.Trace)
}

// DeadLetterRaw moves a body we cannot read to the DLQ as it is.
func (q *Queue) DeadLetterRaw(ctx context.Context, body, reason string) error {
	return q.deadLetter(ctx, body, reason, "", messageTrace(obs.TraceHeader(ctx)))
}

func (q *Queue) deadLetter(ctx context.Context, body, reason, deliveryID, trace string) error {
	attrs := map[string]types.MessageAttributeValue{
		"reason": {DataType: aws.String("String"), StringValue: aws.String(reason)},
	}
	if deliveryID != "" {
		attrs["delivery_id"] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(deliveryID)}
	}
	_, err := q.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.dlqURL, MessageBody: aws.String(body), MessageAttributes: attrs,
		MessageSystemAttributes: traceAttribute(trace, obs.InvocationTraceHeader(ctx))})
	return err
}

func delaySeconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	return int32(math.Ceil(min(d, MaxDelay).Seconds()))
}
