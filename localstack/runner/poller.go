package runner

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS is what the poller calls.
type SQS interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// Poller does what the Lambda SQS event source mapping does: long-polls the
// queue, invokes the handler with batches of up to BatchSize (gathered for up
// to Window, the mapping's batching window, when BatchSize is over 10), and
// deletes the messages the handler did not report as batch item failures
// (all of them stay when the invocation fails).
//
// The handled messages of invocations that end within deleteLinger of each
// other are deleted in one DeleteMessageBatch (up to 10); an invocation's
// slot is free again once its messages are deleted, so the messages in
// flight stay at most Concurrency x BatchSize.
//
// One long poll is waiting at a time, and a batch is received only when an
// invocation is free to take it: the invocations run concurrently, up to
// Concurrency. (One poll loop per invocation would not do: the SQS
// emulator wakes every waiting long poll for each message sent and all but
// one come back empty, so 32 loops made 24,880 receives for 2,000 messages,
// most of make dev's SQS work; 4 loops still made 930. docs/performance.md.)
type Poller struct {
	SQS         SQS
	QueueURL    string
	QueueARN    string
	Handler     lambda.Handler // invoked for batches at once: Concurrent, not lambda.NewHandler
	Concurrency int            // concurrent invocations (the mapping's maximum concurrency)
	BatchSize   int32          // more than 10 only with a Window (as the mapping asks)
	Window      time.Duration  // the batching window: how long a batch is gathered after its first message
	Timeout     time.Duration  // the function's timeout
	Log         *slog.Logger

	receives, messages, deletes atomic.Int64 // ReceiveMessage calls made, messages they returned, DeleteMessageBatch calls
	billed                      atomic.Int64 // the invocations' durations added up (ns): what Lambda bills

	mu      sync.Mutex
	handled []handled // to delete, in the order the invocations ended
	wake    chan struct{}
}

// handled is one invocation's messages to delete; done is closed once the
// delete was made.
type handled struct {
	entries []types.DeleteMessageBatchRequestEntry
	done    chan struct{}
}

// deleteLinger is how long the first handled message waits for others to
// share its delete: under make dev's unpaced load test invocations end every
// few milliseconds, and a delete for each was half of make dev's SQS calls.
const deleteLinger = 5 * time.Millisecond

// Stats are the ReceiveMessage calls made so far and the messages they returned.
func (p *Poller) Stats() (receives, messages int64) { return p.receives.Load(), p.messages.Load() }

// Billed is the invocations' durations so far, added up: what Lambda would
// bill, at this machine's speed.
func (p *Poller) Billed() time.Duration { return time.Duration(p.billed.Load()) }

// Deletes is the DeleteMessageBatch calls made so far.
func (p *Poller) Deletes() int64 { return p.deletes.Load() }

// Run polls until ctx ends, then waits for the invocations in flight.
func (p *Poller) Run(ctx context.Context) {
	free := make(chan struct{}, max(p.Concurrency, 1))
	var wg sync.WaitGroup
	p.wake = make(chan struct{}, 1)
	stop, deleted := make(chan struct{}), make(chan struct{})
	go func() { defer close(deleted); p.deleteHandled(stop) }()
	for ctx.Err() == nil {
		select {
		case free <- struct{}{}: // an invocation is free
		case <-ctx.Done():
			continue
		}
		msgs, err := p.receive(ctx)
		if err != nil && ctx.Err() == nil {
			p.Log.Warn("poll failed", "error", err)
			sleepCtx(ctx, time.Second)
		}
		if len(msgs) == 0 {
			<-free
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-free; wg.Done() }()
			p.invoke(ctx, msgs)
		}()
	}
	wg.Wait()
	close(stop)
	<-deleted
	p.Log.Info("poller stopped", "receives", p.receives.Load(), "messages", p.messages.Load(), "deletes", p.deletes.Load())
}

// deleteHandled deletes the handled messages as they come, each call
// deleteLinger after the first invocation it serves ended, until stop.
func (p *Poller) deleteHandled(stop <-chan struct{}) {
	for {
		select {
		case <-p.wake:
			time.Sleep(deleteLinger)
			p.flush()
		case <-stop:
			return
		}
	}
}

// flush deletes every handled message: the messages of as many invocations
// as fit in ten, a call (an invocation of more than ten, ten a call).
func (p *Poller) flush() {
	for {
		p.mu.Lock()
		n, entries := 0, []types.DeleteMessageBatchRequestEntry(nil)
		for ; n < len(p.handled) && (n == 0 || len(entries)+len(p.handled[n].entries) <= 10); n++ {
			entries = append(entries, p.handled[n].entries...)
		}
		served := p.handled[:n:n]
		p.handled = p.handled[n:]
		p.mu.Unlock()
		if n == 0 {
			return
		}
		for len(entries) > 0 {
			ten := entries[:min(len(entries), 10)]
			entries = entries[len(ten):]
			for i := range ten { // ids unique in the call: a message received twice may be in it twice
				ten[i].Id = aws.String(strconv.Itoa(i))
			}
			p.deletes.Add(1)
			if _, err := p.SQS.DeleteMessageBatch(context.Background(), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.QueueURL), Entries: ten}); err != nil {
				p.Log.Warn("deleting handled messages failed; they return after their visibility timeout", "error", err)
			}
		}
		for _, h := range served {
			close(h.done)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// receive long-polls for a batch; with a Window, it goes on gathering
// messages until the batch is full or the window since the first has passed.
func (p *Poller) receive(ctx context.Context) ([]types.Message, error) {
	msgs, err := p.receiveOnce(ctx, p.BatchSize, 2)
	if err != nil || len(msgs) == 0 || p.Window <= 0 {
		return msgs, err
	}
	for end := time.Now().Add(p.Window); len(msgs) < int(p.BatchSize) && time.Now().Before(end) && ctx.Err() == nil; {
		// Short polls: a long poll's wait is whole seconds, the window's end
		// is not, and a receive cut short by a deadline could take messages
		// with it.
		more, err := p.receiveOnce(ctx, p.BatchSize-int32(len(msgs)), 0)
		if err != nil {
			break // the batch so far is handled; the error will show on the next poll
		}
		msgs = append(msgs, more...)
		if len(more) == 0 {
			sleepCtx(ctx, min(windowPoll, time.Until(end)))
		}
	}
	return msgs, nil
}

// windowPoll is how often a batching window looks for more messages.
const windowPoll = 100 * time.Millisecond

func (p *Poller) receiveOnce(ctx context.Context, n int32, wait int32) ([]types.Message, error) {
	out, err := p.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(p.QueueURL), MaxNumberOfMessages: max(min(n, 10), 1), WaitTimeSeconds: wait,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, nil
		}
		return nil, err
	}
	p.receives.Add(1)
	p.messages.Add(int64(len(out.Messages)))
	return out.Messages, nil
}

// invoke hands the handler one batch, and returns once what it did not
// report as failed is deleted.
func (p *Poller) invoke(ctx context.Context, msgs []types.Message) {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		ev.Records = append(ev.Records, toRecord(m, p.QueueARN))
	}
	payload, _ := json.Marshal(ev)
	// The invocation is not cut short by the poller stopping: like Lambda,
	// it runs to the end of its timeout.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.Timeout)
	began := time.Now()
	res, err := p.Handler.Invoke(ictx, payload)
	p.billed.Add(int64(time.Since(began)))
	cancel()
	if err != nil {
		p.Log.Error("deliver invocation failed; the batch returns after its visibility timeout", "error", err)
		return
	}
	var resp events.SQSEventResponse
	_ = json.Unmarshal(res, &resp)
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	h := handled{done: make(chan struct{})}
	for _, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			h.entries = append(h.entries, types.DeleteMessageBatchRequestEntry{ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(h.entries) == 0 {
		return
	}
	p.mu.Lock()
	p.handled = append(p.handled, h)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // a delete is already due
	}
	<-h.done
}

func toRecord(m types.Message, arn string) events.SQSMessage {
	rec := events.SQSMessage{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: map[string]string{}, MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSourceARN: arn, EventSource: "aws:sqs", AWSRegion: "us-east-1",
	}
	for k, v := range m.Attributes {
		rec.Attributes[k] = v
	}
	for k, v := range m.MessageAttributes {
		rec.MessageAttributes[k] = events.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
	}
	return rec
}
