package testenv

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/gifq/webhooks/localstack/emulator"
)

// Calls counts AWS API calls by "Service.Operation", through SDK middleware.
// Receives that returned no message are counted apart ("SQS.ReceiveMessage(empty)"):
// they are the poller idling, not work.
type Calls struct {
	mu    sync.Mutex
	n     map[string]int
	units map[string]float64 // capacity units the emulator reported consumed, by "write" and "read"
}

// MessagesReceived counts messages handed out by ReceiveMessage (one
// message received twice counts twice).
const MessagesReceived = "SQS.messages-received"

// ConditionFailed counts single-item writes refused by their condition
// (already counted under their operation): AWS bills each a write unit per
// KB of the item, at least one, which WriteUnits includes (one each).
const ConditionFailed = "DynamoDB.condition-failed"

// NewCalls returns an empty counter.
func NewCalls() *Calls { return &Calls{n: map[string]int{}, units: map[string]float64{}} }

func (c *Calls) middleware(service string) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("countCalls",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				askCapacity(in.Parameters)
				out, md, err := next.HandleInitialize(ctx, in)
				op := service + "." + awsmiddleware.GetOperationName(ctx)
				kind, units := consumed(out.Result)
				failed := failedConditionally(err)
				if failed {
					// AWS bills a write whose condition failed (a write unit per KB
					// of the item, at least one); the emulator reports nothing.
					kind, units = "write", 1
				}
				received := 0
				if r, ok := out.Result.(*sqs.ReceiveMessageOutput); ok && err == nil {
					if received = len(r.Messages); received == 0 {
						op += "(empty)"
					}
				}
				c.mu.Lock()
				c.n[op]++
				c.units[kind] += units
				if received > 0 {
					c.n[MessagesReceived] += received
				}
				if failed {
					c.n[ConditionFailed]++
				}
				c.mu.Unlock()
				return out, md, err
			}), middleware.After)
	}
}

// WriteUnits and ReadUnits are the DynamoDB capacity units the counted calls
// consumed so far, as the emulator reported them (ReturnConsumedCapacity
// INDEXES on writes: the table's units plus each index entry written).
func (c *Calls) WriteUnits() float64 { return c.unitsOf("write") }

// ReadUnits: see WriteUnits.
func (c *Calls) ReadUnits() float64 { return c.unitsOf("read") }

func (c *Calls) unitsOf(kind string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.units[kind]
}

// askCapacity asks DynamoDB to report the capacity a call consumes (the app
// does not ask; its calls are otherwise unchanged).
func askCapacity(params any) {
	const idx, total = types.ReturnConsumedCapacityIndexes, types.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = idx
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = idx
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = idx
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = idx
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = idx
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
	}
}

// failedConditionally says whether err is a single-item write refused by
// its condition.
func failedConditionally(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// consumed is the capacity a DynamoDB call's output reports.
func consumed(result any) (string, float64) {
	one := func(cc *types.ConsumedCapacity) float64 {
		if cc == nil || cc.CapacityUnits == nil {
			return 0
		}
		return *cc.CapacityUnits
	}
	all := func(ccs []types.ConsumedCapacity) float64 {
		n := 0.0
		for i := range ccs {
			n += one(&ccs[i])
		}
		return n
	}
	switch out := result.(type) {
	case *dynamodb.PutItemOutput:
		return "write", one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return "write", one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return "write", one(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		return "write", all(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		return "write", all(out.ConsumedCapacity)
	case *dynamodb.GetItemOutput:
		return "read", one(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		return "read", all(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		return "read", one(out.ConsumedCapacity)
	}
	return "", 0
}

// Snapshot returns the counts so far.
func (c *Calls) Snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// Total is every AWS request so far, as billed: the empty receives of a
// long poll too (each is a request), but not MessagesReceived, which counts
// messages, not requests.
func (c *Calls) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for op, v := range c.n {
		if op != MessagesReceived && op != ConditionFailed {
			n += v
		}
	}
	return n
}

// Count is the calls of one "Service.Operation" so far.
func (c *Calls) Count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

// Reset sets every count to zero.
func (c *Calls) Reset() {
	c.mu.Lock()
	c.n = map[string]int{}
	c.units = map[string]float64{}
	c.mu.Unlock()
}

// String lists the counts, sorted.
func (c *Calls) String() string {
	snap := c.Snapshot()
	keys := make([]string, 0, len(snap))
	for k := range snap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(strconv.Itoa(snap[k]))
		b.WriteString(" ")
	}
	return strings.TrimSpace(b.String())
}

// CountedClients returns clients on the env's emulators whose calls c counts.
func (e *Env) CountedClients(c *Calls) (*dynamodb.Client, *sqs.Client) {
	cfg := emulator.Config()
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = &e.DynamoURL
		o.APIOptions = append(o.APIOptions, c.middleware("DynamoDB"))
	})
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		o.BaseEndpoint = &e.SQSURL
		o.APIOptions = append(o.APIOptions, c.middleware("SQS"))
	})
	return db, q
}
