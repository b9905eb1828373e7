package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/store"
)

// The fault kinds, as the checker prints them.
const (
	faultLostSend  = "sqs_send_lost"     // a send answered OK that never reached the queue
	faultSQSError  = "sqs_error"         // a call refused with a 500, nothing done
	faultDuplicate = "sqs_duplicate"     // a message sent twice (SQS is at least once)
	faultThrottle  = "dynamodb_throttle" // ProvisionedThroughputExceeded, nothing done
	faultRace      = "dynamodb_race"     // a competitor made the same conditional write first, then vanished
	faultCrash     = "process_killed"    // the process died right after a write took effect
	faultClock     = "clock_jump"        // the functions' clock moved by up to ±maxJump
	maxJump        = 3 * time.Second
	faultsFileMode = 0o644
)

// Rates are the probability of each fault per call it applies to; scaled
// by the soak's -faults knob (0 turns them all off).
type Rates struct {
	LostSend, SQSError, Duplicate, Throttle, Race, Crash float64
	ClockEvery                                           time.Duration // a jump on average this often
}

func defaultRates(scale float64) Rates {
	r := Rates{LostSend: 0.01, SQSError: 0.01, Duplicate: 0.01, Throttle: 0.005, Race: 0.005, Crash: 0.0003, ClockEvery: 30 * time.Second}
	r.LostSend, r.SQSError, r.Duplicate, r.Throttle, r.Race, r.Crash = r.LostSend*scale, r.SQSError*scale, r.Duplicate*scale, r.Throttle*scale, r.Race*scale, r.Crash*scale
	if scale <= 0 {
		r.ClockEvery = 0
	}
	return r
}

// Faults decides, from a seeded generator, which calls fail and how, and
// appends one line per fault injected to a file the checker counts (a
// process killed by a fault has written its line first).
type Faults struct {
	Rates
	mu  sync.Mutex
	rng *rand.Rand
	log io.Writer
	// kill ends the process where a fault kills it: os.Exit in the soak.
	// The simulated run marks it dead instead: every call after fails,
	// none takes effect, until the simulation starts its next invocation.
	kill func()
	dead atomic.Bool
}

var errDead = errors.New("soak: the process was killed")

// down is errDead once the (simulated) process is dead.
func (f *Faults) down() error {
	if f.dead.Load() {
		return errDead
	}
	return nil
}

func newFaults(r Rates, seed uint64, path string) (*Faults, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, faultsFileMode)
	if err != nil {
		return nil, err
	}
	return &Faults{Rates: r, rng: rand.New(rand.NewPCG(seed, 0x50a6)), log: f, kill: func() { os.Exit(137) }}, nil
}

// roll reports whether a fault of probability p happens now, and notes it.
func (f *Faults) roll(p float64, kind string) bool {
	if p <= 0 {
		return false
	}
	f.mu.Lock()
	hit := f.rng.Float64() < p
	f.mu.Unlock()
	if hit {
		f.note(kind)
	}
	return hit
}

func (f *Faults) note(kind string) { _, _ = fmt.Fprintln(f.log, kind) }

// afterWrite is where a process dies between two effects: the write took
// effect, nothing after it happens (no answer, no next effect, no delete).
func (f *Faults) afterWrite() {
	if f.kill != nil && f.roll(f.Crash, faultCrash) {
		f.kill()
	}
}

var errInternal = fmt.Errorf("soak: injected InternalError (HTTP 500)")

// dynamo wraps the table's client.
type dynamo struct {
	store.DynamoDB
	f *Faults
	t *tracer
}

func (d dynamo) throttled(key map[string]ddbtypes.AttributeValue) error {
	if err := d.f.down(); err != nil {
		return err
	}
	if d.f.roll(d.f.Throttle, faultThrottle) {
		d.t.note(deliveryOf(key), faultThrottle, "", "")
		return &ddbtypes.ProvisionedThroughputExceededException{Message: aws.String("soak: injected throttle")}
	}
	return nil
}

// deliveryOf is the delivery a key names ("" if none).
func deliveryOf(key map[string]ddbtypes.AttributeValue) string {
	if pk, ok := key["pk"].(*ddbtypes.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, "DLV#") {
		return strings.TrimPrefix(pk.Value, "DLV#")
	}
	return ""
}

// raced is a race fault on the delivery key names.
func (d dynamo) raced(key map[string]ddbtypes.AttributeValue) bool {
	if d.f.roll(d.f.Race, faultRace) {
		d.t.note(deliveryOf(key), faultRace, "", "")
		return true
	}
	return false
}

func (d dynamo) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if err := d.throttled(in.Key); err != nil {
		return nil, err
	}
	return d.DynamoDB.GetItem(ctx, in, o...)
}

func (d dynamo) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if err := d.throttled(nil); err != nil {
		return nil, err
	}
	return d.DynamoDB.Query(ctx, in, o...)
}

func (d dynamo) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := d.throttled(nil); err != nil {
		return nil, err
	}
	if in.ConditionExpression != nil && d.f.roll(d.f.Race, faultRace) {
		_, _ = d.DynamoDB.PutItem(ctx, in, o...)
	}
	out, err := d.DynamoDB.PutItem(ctx, in, o...)
	if err == nil {
		d.f.afterWrite()
	}
	return out, err
}

func (d dynamo) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if err := d.throttled(in.Key); err != nil {
		return nil, err
	}
	if in.ConditionExpression != nil && d.raced(in.Key) {
		_, _ = d.DynamoDB.UpdateItem(ctx, in, o...)
	}
	out, err := d.DynamoDB.UpdateItem(ctx, in, o...)
	if err == nil {
		d.f.afterWrite()
	}
	return out, err
}

func (d dynamo) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if err := d.throttled(nil); err != nil {
		return nil, err
	}
	out, err := d.DynamoDB.DeleteItem(ctx, in, o...)
	if err == nil {
		d.f.afterWrite()
	}
	return out, err
}

func (d dynamo) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if err := d.throttled(nil); err != nil {
		return nil, err
	}
	if d.f.roll(d.f.Race, faultRace) {
		_, _ = d.DynamoDB.TransactWriteItems(ctx, in, o...)
	}
	out, err := d.DynamoDB.TransactWriteItems(ctx, in, o...)
	if err == nil {
		d.f.afterWrite()
	}
	return out, err
}

func (d dynamo) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if err := d.throttled(nil); err != nil {
		return nil, err
	}
	out, err := d.DynamoDB.BatchWriteItem(ctx, in, o...)
	if err == nil {
		d.f.afterWrite()
	}
	return out, err
}

// queueClient wraps the functions' SQS client.
type queueClient struct {
	app.SQS
	f *Faults
	t *tracer
	// busy is the other tenants' messages the delivery queue (and its
	// paced lane) shows at every look, as a busy deployment's always has
	// some; not the slow lane's or the DLQ's.
	busy    int
	notBusy map[string]bool // the slow lane's and the DLQ's URLs
}

func (q queueClient) SendMessage(ctx context.Context, in *sqs.SendMessageInput, o ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if err := q.f.down(); err != nil {
		return nil, err
	}
	url, body, delay := aws.ToString(in.QueueUrl), aws.ToString(in.MessageBody), fmt.Sprintf("delay=%ds", in.DelaySeconds)
	if q.f.roll(q.f.SQSError, faultSQSError) {
		q.t.body(body, "send_"+faultSQSError, url, delay)
		return nil, errInternal
	}
	if q.f.roll(q.f.LostSend, faultLostSend) {
		q.t.body(body, faultLostSend, url, delay)
		return &sqs.SendMessageOutput{MessageId: aws.String("lost")}, nil
	}
	if q.f.roll(q.f.Duplicate, faultDuplicate) {
		q.t.body(body, "send_"+faultDuplicate, url, delay)
		_, _ = q.SQS.SendMessage(ctx, in, o...)
	}
	out, err := q.SQS.SendMessage(ctx, in, o...)
	if err == nil {
		q.t.body(body, "send", url, delay)
		q.f.afterWrite()
	}
	return out, err
}

func (q queueClient) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, o ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if err := q.f.down(); err != nil {
		return nil, err
	}
	url := aws.ToString(in.QueueUrl)
	each := func(what string) {
		for _, e := range in.Entries {
			q.t.body(aws.ToString(e.MessageBody), what, url, fmt.Sprintf("delay=%ds batch", e.DelaySeconds))
		}
	}
	if q.f.roll(q.f.SQSError, faultSQSError) {
		each("send_" + faultSQSError)
		return nil, errInternal
	}
	if q.f.roll(q.f.LostSend, faultLostSend) {
		each(faultLostSend)
		out := &sqs.SendMessageBatchOutput{}
		for _, e := range in.Entries {
			out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String("lost")})
		}
		return out, nil
	}
	if q.f.roll(q.f.Duplicate, faultDuplicate) {
		each("send_" + faultDuplicate)
		_, _ = q.SQS.SendMessageBatch(ctx, in, o...)
	}
	out, err := q.SQS.SendMessageBatch(ctx, in, o...)
	if err == nil {
		failed := map[string]bool{}
		for _, f := range out.Failed {
			failed[aws.ToString(f.Id)] = true
		}
		for _, e := range in.Entries {
			what := "send"
			if failed[aws.ToString(e.Id)] {
				what = "send_failed_entry"
			}
			q.t.body(aws.ToString(e.MessageBody), what, url, fmt.Sprintf("delay=%ds batch", e.DelaySeconds))
		}
		q.f.afterWrite()
	}
	return out, err
}

func (q queueClient) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, o ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	if err := q.f.down(); err != nil {
		return nil, err
	}
	if q.f.roll(q.f.SQSError, faultSQSError) {
		return nil, errInternal
	}
	out, err := q.SQS.ReceiveMessage(ctx, in, o...)
	// A message handed to two consumers at once (SQS's at-least-once).
	if err == nil && len(out.Messages) > 0 && q.f.roll(q.f.Duplicate, faultDuplicate) {
		out.Messages = append(out.Messages, out.Messages[0])
		q.t.body(aws.ToString(out.Messages[0].Body), "receive_"+faultDuplicate, aws.ToString(in.QueueUrl), "")
	}
	if err == nil && q.t != nil {
		for _, m := range out.Messages {
			q.t.receipt(aws.ToString(m.ReceiptHandle), aws.ToString(m.Body))
			q.t.body(aws.ToString(m.Body), "receive", aws.ToString(in.QueueUrl), "count="+m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)])
		}
	}
	return out, err
}

func (q queueClient) DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, o ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	if err := q.f.down(); err != nil {
		return nil, err
	}
	if q.f.roll(q.f.SQSError, faultSQSError) {
		return nil, errInternal
	}
	for _, e := range in.Entries {
		q.t.handle(aws.ToString(e.ReceiptHandle), "delete", aws.ToString(in.QueueUrl), "")
	}
	return q.SQS.DeleteMessageBatch(ctx, in, o...)
}

func (q queueClient) ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, o ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	if err := q.f.down(); err != nil {
		return nil, err
	}
	if q.f.roll(q.f.SQSError, faultSQSError) {
		q.t.handle(aws.ToString(in.ReceiptHandle), "visibility_"+faultSQSError, aws.ToString(in.QueueUrl), fmt.Sprintf("to=%ds", in.VisibilityTimeout))
		return nil, errInternal
	}
	q.t.handle(aws.ToString(in.ReceiptHandle), "visibility", aws.ToString(in.QueueUrl), fmt.Sprintf("to=%ds", in.VisibilityTimeout))
	return q.SQS.ChangeMessageVisibility(ctx, in, o...)
}

func (q queueClient) ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, o ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	for _, e := range in.Entries {
		q.t.handle(aws.ToString(e.ReceiptHandle), "visibility", aws.ToString(in.QueueUrl), fmt.Sprintf("to=%ds batch", e.VisibilityTimeout))
	}
	return q.SQS.ChangeMessageVisibilityBatch(ctx, in, o...)
}

func (q queueClient) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, o ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	if err := q.f.down(); err != nil {
		return nil, err
	}
	if q.f.roll(q.f.SQSError, faultSQSError) {
		return nil, errInternal
	}
	out, err := q.SQS.GetQueueAttributes(ctx, in, o...)
	name := string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)
	if n, ok := out.Attributes[name]; err == nil && ok && q.busy > 0 && !q.notBusy[aws.ToString(in.QueueUrl)] {
		visible, _ := strconv.Atoi(n)
		out.Attributes[name] = strconv.Itoa(visible + q.busy)
	}
	return out, err
}

// clock is the functions' clock: the real one plus an offset that jumps.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
	t      *tracer
}

// at is the real time, a trace line's.
func (c *clock) at() time.Time { return time.Now() }

// off is the clock's offset now.
func (c *clock) off() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// jumps moves the clock to a new offset within ±maxJump about every
// f.ClockEvery, until ctx ends.
func (c *clock) jumps(ctx context.Context, f *Faults) {
	if f.ClockEvery <= 0 {
		return
	}
	for {
		f.mu.Lock()
		wait := time.Duration(f.rng.ExpFloat64() * float64(f.ClockEvery))
		jump := time.Duration((f.rng.Float64()*2 - 1) * float64(maxJump))
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		c.mu.Lock()
		c.offset = jump
		c.mu.Unlock()
		f.note(faultClock)
		c.t.note("", faultClock, "", jump.Round(time.Millisecond).String())
	}
}
