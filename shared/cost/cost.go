// Package cost turns what one delivery uses (AWS requests, DynamoDB
// capacity units, Lambda time, log bytes) into dollars per million at
// pinned list prices, so that docs/cost.md's table is computed, not typed,
// and a change that makes a delivery dearer shows in a test.
package cost

import (
	"math"

	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/schema"
)

// Prices are AWS list prices in us-east-1, pinned on the date they were
// read, in dollars.
type Prices struct {
	Date                 string
	APIGatewayREST       float64 // per million requests (first 333 million a month)
	APIGatewayHTTP       float64 // per million requests of up to 512 KB (first 300 million a month)
	LambdaRequest        float64 // per million invocations
	LambdaGBSecondARM    float64 // per GB-second, arm64
	SQSRequest           float64 // per million requests of up to 64 KB (standard queue)
	DynamoWRU, DynamoRRU float64 // on-demand, per million write / read request units
	DynamoWCUHour        float64 // provisioned, per write capacity unit an hour
	DynamoRCUHour        float64 // provisioned, per read capacity unit an hour
	DynamoStorageGBMonth float64
	DynamoPITRGBMonth    float64
	LogsIngestGB         float64 // CloudWatch Logs ingestion, per GB
	XRayTrace            float64 // per million traces recorded
}

// ListPrices are the prices docs/cost.md quotes.
var ListPrices = Prices{
	Date: "2026-12-02", APIGatewayREST: 3.50, APIGatewayHTTP: 1.00, LambdaRequest: 0.20, LambdaGBSecondARM: 0.0000133334,
	SQSRequest: 0.40, DynamoWRU: 0.625, DynamoRRU: 0.125, DynamoWCUHour: 0.00065, DynamoRCUHour: 0.00013,
	DynamoStorageGBMonth: 0.25, DynamoPITRGBMonth: 0.20,
	LogsIngestGB: 0.50, XRayTrace: 5.00,
}

// Usage is what one event's path uses, per event, as counted
// (localstack/e2e TestAWSCallsPerDelivery and TestBatchCallsPerEvent).
type Usage struct {
	Deliveries     float64 // per event
	APIRequests    float64 // API Gateway requests per event (1 singly, 1/100 in a batch of 100)
	APIInvocations float64 // api Lambda invocations per event
	APISeconds     float64 // api Lambda time per invocation
	DeliverBatches float64 // deliver invocations per event (deliveries / messages per batch)
	DeliverSeconds float64 // deliver time per invocation, apart from sleeping for rate slots (billed)
	PacedSleep     float64 // seconds per event a deliver invocation sleeps for the account's rate slots (billed)
	MemoryGB       float64 // the api function's memory
	DeliverGB      float64 // the deliver function's memory
	SQSRequests    float64 // per event: sends, receives (empty ones too), deletes
	WriteUnits     float64 // per event
	ReadUnits      float64 // per event
	StoredGB       float64 // per event, kept for the retention (a month)
	IndexGB        float64 // per event, in global indexes only (no PITR), a month
	LogBytes       float64 // per event, at info
	TracedFraction float64 // of events with a recorded trace (X-Ray sampling)
	HTTPAPI        bool    // behind an HTTP API (infra context api=http) instead of the REST API
	// Provisioned is the share of the table's provisioned capacity used
	// (infra context tableCapacity=provisioned, auto scaling's target);
	// 0: on-demand.
	Provisioned float64
}

// Breakdown is dollars per million events, by service.
type Breakdown struct {
	APIGateway, Lambda, SQS, DynamoDB, Storage, Logs, XRay float64
}

// Total is the sum.
func (b Breakdown) Total() float64 {
	return b.APIGateway + b.Lambda + b.SQS + b.DynamoDB + b.Storage + b.Logs + b.XRay
}

// PerMillion prices a million events of u at p.
func PerMillion(u Usage, p Prices) Breakdown {
	const m = 1e6
	gbs := u.MemoryGB*u.APIInvocations*u.APISeconds + u.DeliverGB*(u.DeliverBatches*u.DeliverSeconds+u.PacedSleep)
	api := p.APIGatewayREST
	if u.HTTPAPI {
		api = p.APIGatewayHTTP
	}
	return Breakdown{
		APIGateway: u.APIRequests * api,
		Lambda:     (u.APIInvocations+u.DeliverBatches)*p.LambdaRequest + m*gbs*p.LambdaGBSecondARM,
		SQS:        u.SQSRequests * p.SQSRequest,
		DynamoDB:   dynamo(u, p),
		Storage:    m * (u.StoredGB*(p.DynamoStorageGBMonth+p.DynamoPITRGBMonth) + u.IndexGB*p.DynamoStorageGBMonth),
		Logs:       m * u.LogBytes / (1 << 30) * p.LogsIngestGB,
		XRay:       u.TracedFraction * p.XRayTrace,
	}
}

// dynamo is a million events' capacity units in dollars: on demand, per
// unit; provisioned, a unit a second for a million seconds (277.8 unit
// hours) at full use, divided by the share used.
func dynamo(u Usage, p Prices) float64 {
	if u.Provisioned <= 0 {
		return u.WriteUnits*p.DynamoWRU + u.ReadUnits*p.DynamoRRU
	}
	const unitHours = 1e6 / 3600
	return (u.WriteUnits*p.DynamoWCUHour + u.ReadUnits*p.DynamoRCUHour) * unitHours / u.Provisioned
}

// Round2 is d to the cent.
func Round2(d float64) float64 { return math.Round(d*100) / 100 }

// Counted is what localstack/e2e counts one event costing on its way, with
// the shipped settings (cap on): TestAWSCallsPerDelivery asserts the single
// delivery's units against the emulator's consumed capacity, so the two
// move together; the fan-out's and the batch's are docs/cost.md's measured
// counts.
const (
	// One event, one endpoint, delivered on the first attempt.
	SingleWriteUnits, SingleReadUnits = 9, 2
	// Each further delivery of the same event (fan-out).
	FanOutWriteUnits, FanOutReadUnits = 7, 1
	// Per event through POST /v1/events/batch (100 a request): the
	// limiter's writes and the account's endpoint query are shared by the
	// request, the endpoint's slot take and free by a receive batch
	// (BatchSlotWrites), and every message of it but the first reads the
	// route again instead (PooledRouteRead).
	BatchWriteUnits, BatchReadUnits = 6, 1
)

// A receive batch's messages to one endpoint share its in-flight slots
// (shared/inflight): one take and one free a batch while the endpoint keeps
// up, and a strong read of the endpoint's route (one unit) by each message
// using a slot taken before it came. The paced lane's receive batches at the
// default 5/s hold about 5 deliveries (TestAWSCallsPerDelivery's batch100:
// 20 batches for 100).
const (
	BatchSlotWrites    = SlotWrites
	PooledRouteRead    = 1
	deliveriesPerBatch = 5
)

// The bounds TestAWSCallsPerDelivery holds the other two shapes to, per
// delivery, cap on, failed conditional writes counted: a fan-out of 5 is
// (9 + 4 x 7) / 5 = 7.4; a batch of 100 to one endpoint at the account's
// 5/s, 6 and a receive batch's slot take and free (6.4 in batches of 5; up
// to 0.5 more measured on a loaded box, whose smaller batches take more),
// and what bookings and slot races add.
const (
	MaxFanOut5WriteUnits  = 7.4
	MaxBatch100WriteUnits = 6.9
)

// Assumptions the counts cannot give, each with its source.
const (
	memoryGB = 0.25 // infra: the api function's 256 MB
	// The api's time per request in AWS (three DynamoDB calls and one SQS
	// call); a batch of 100's (docs/cost.md).
	apiSeconds, batchAPISeconds = 0.030, 0.200
	// A deliver invocation waits deliverWaitSeconds for the receiver's
	// answer and DynamoDB, and uses deliverCPUSeconds of one vCPU: 2 ms,
	// BenchmarkDelivery's cpu-µs/op on a loaded 2-core box (0.64-0.75 ms
	// idle; make bench-cpu BENCH_CPU_PKGS=./shared/delivery/), plus 1 ms
	// for a TLS handshake with the receiver, which the benchmark's
	// plain-HTTP loopback does not make. Lambda gives a function CPU in
	// proportion to its memory, a whole vCPU at 1,769 MB (AWS Lambda
	// docs, "Configuring function memory").
	deliverWaitSeconds, deliverCPUSeconds, fullCPUMB = 0.150, 0.003, 1769
	// Messages per deliver invocation: 1 at low traffic (the worst case
	// priced here); up to 10 under load.
	messagesPerBatch = 1
	// Stored per delivery (item, keys-only index entries, event share,
	// attempt), kept a month: docs/cost.md "Storage".
	storedBytes = 1700
	// The sweep index entry a delivered delivery keeps until its TTL: its
	// keys, sweep_shard, due_at and DynamoDB's 100 B an index entry (a
	// global index: no point-in-time recovery charge).
	sweepEntryBytes = 170
	// Log bytes as CloudWatch Logs ingests them on AWS (docs/cost.md
	// "Logs"): the app's lines at info (TestAWSCallsPerDelivery: 342 for
	// a single delivery, the api's request line; a plain success logs no
	// line), EMF lines (the api's 264 B per request, the deliver function's
	// 375 B per invocation), Lambda's START, END and REPORT lines (none:
	// the functions' system log level is WARN), and the API's access log
	// line (246 B per request).
	appLogBytes, apiEMFBytes, deliverEMFBytes, platformLogBytes, accessLogBytes = 342, 264, 375, 0, 246
	// X-Ray's default sampling: 5 % after the first request each second.
	traced = 0.05
	// Billed sleep per delivery paced at the account's rate (a batch of
	// 100 to one account): a message is delayed to land in the Early
	// before its slot's second or the second after (shared/pace), and
	// waits for the second only when it lands before it: Early²/2 a
	// second on average, 0.02 s, with no pipeline latency and one message
	// an invocation (the paced lane's five pollers on AWS). Measured with
	// five pollers at 5/s: docs/cost.md "Billed Lambda time".
	pacedSleepAt5 = float64(pace.Early) * float64(pace.Early) / 2 / 1e18 // s² from ns²
)

// DeliverSeconds is a deliver invocation's billed time at memoryMB: its
// wait, and its CPU at the share of a vCPU that memory buys.
func DeliverSeconds(memoryMB float64) float64 {
	return deliverWaitSeconds + deliverCPUSeconds/min(1, memoryMB/fullCPUMB)
}

// AtDeliverMemory is u with the deliver function at memoryMB.
func (u Usage) AtDeliverMemory(memoryMB float64) Usage {
	u.DeliverSeconds, u.DeliverGB = DeliverSeconds(memoryMB), memoryMB/1024
	return u
}

// logBytes is what CloudWatch Logs ingests for one event: app lines, EMF
// per API request (a batch's one line for all its events) and per deliver
// invocation, platform lines per invocation, the access log per request.
func logBytes(app, apiRequests, apiInvocations, deliverBatches float64) float64 {
	return app + apiRequests*(apiEMFBytes+accessLogBytes) + deliverBatches*deliverEMFBytes + (apiInvocations+deliverBatches)*platformLogBytes
}

// Single is one event posted alone to one endpoint, delivered first time.
func Single() Usage {
	return Usage{Deliveries: 1, APIRequests: 1, APIInvocations: 1, APISeconds: apiSeconds,
		DeliverBatches: 1.0 / messagesPerBatch, DeliverSeconds: DeliverSeconds(schema.DeliverMemoryMB), MemoryGB: memoryGB, DeliverGB: schema.DeliverMemoryMB / 1024.0,
		SQSRequests: 1 + 2.0/messagesPerBatch, // the send; the batch's receive and delete
		WriteUnits:  SingleWriteUnits, ReadUnits: SingleReadUnits + SweepDeliveryRead, StoredGB: storedBytes / 1e9, IndexGB: sweepEntryBytes / 1e9,
		LogBytes: logBytes(appLogBytes, 1, 1, 1.0/messagesPerBatch), TracedFraction: traced}
}

// ThroughHTTPAPI is u behind an HTTP API (infra context api=http). A batch
// of 100 is one request while it is at most 512 KB; larger ones are
// billed per 512 KB, which this leaves out.
func (u Usage) ThroughHTTPAPI() Usage {
	u.HTTPAPI = true
	return u
}

// OnProvisioned is u on a table of provisioned capacity used at share
// (auto scaling's target utilization, 0.7 as the stack sets it). It leaves
// out what the counts cannot give: the capacity kept while the load is
// below the minimum, and a burst's throttling before the scaling catches up.
func (u Usage) OnProvisioned(share float64) Usage {
	u.Provisioned = share
	return u
}

// Batch100 is one event of a POST /v1/events/batch of 100, one endpoint,
// paced at the account's default 5/s (its billed sleep priced).
func Batch100() Usage {
	u := Single()
	u.APIRequests, u.APIInvocations, u.APISeconds = 0.01, 0.01, batchAPISeconds
	u.SQSRequests = 0.12 + 2.0/messagesPerBatch // 12 SendMessageBatch for 100 (one per lane per 10); receive and delete
	u.WriteUnits = BatchWriteUnits + float64(BatchSlotWrites)/deliveriesPerBatch
	u.ReadUnits = BatchReadUnits + SweepDeliveryRead + PooledRouteRead*(1-1.0/deliveriesPerBatch)
	u.PacedSleep = pacedSleepAt5
	u.TracedFraction = traced * u.APIRequests                     // a trace per request, carried through the queue
	u.LogBytes = logBytes(3.42, 0.01, 0.01, 1.0/messagesPerBatch) // the app's lines: the request's line, a hundredth
	return u
}

// FanOut5 is one event posted alone to five endpoints, per delivery.
func FanOut5() Usage {
	u := Single()
	const n = 5
	u.Deliveries = n
	u.DeliverBatches = n / messagesPerBatch
	u.SQSRequests = 2 + 2.0*n/messagesPerBatch // two SendMessageBatch (the fast lane; the paced lane for the slots of the next second); receive and delete each
	u.WriteUnits = SingleWriteUnits + (n-1)*FanOutWriteUnits
	u.ReadUnits = SingleReadUnits + (n-1)*FanOutReadUnits + n*SweepDeliveryRead
	u.StoredGB, u.IndexGB = n*storedBytes/1e9, n*sweepEntryBytes/1e9
	u.LogBytes = logBytes(appLogBytes, 1, 1, n/messagesPerBatch) // app lines: the api's request line
	return u.PerDelivery()
}

// Best is u in the cheapest configuration docs/cost.md documents: an HTTP
// API and a table of provisioned capacity auto scaled to 70 % use.
func (u Usage) Best() Usage { return u.ThroughHTTPAPI().OnProvisioned(0.7) }

// PerDelivery is u divided by its deliveries: a fan-out priced per
// delivery rather than per event.
func (u Usage) PerDelivery() Usage {
	n := u.Deliveries
	return Usage{Deliveries: 1, APIRequests: u.APIRequests / n, APIInvocations: u.APIInvocations / n, APISeconds: u.APISeconds,
		DeliverBatches: u.DeliverBatches / n, DeliverSeconds: u.DeliverSeconds, PacedSleep: u.PacedSleep / n, MemoryGB: u.MemoryGB, DeliverGB: u.DeliverGB, SQSRequests: u.SQSRequests / n,
		WriteUnits: u.WriteUnits / n, ReadUnits: u.ReadUnits / n, StoredGB: u.StoredGB / n, IndexGB: u.IndexGB / n, LogBytes: u.LogBytes / n,
		TracedFraction: u.TracedFraction / n, HTTPAPI: u.HTTPAPI}
}
