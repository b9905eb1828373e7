// Package cost turns what one delivery uses (AWS requests, DynamoDB
// capacity units, Lambda time, log bytes) into dollars per million at
// pinned list prices, so that docs/cost.md's table is computed, not typed,
// and a change that makes a delivery dearer shows in a test.
package cost

import "math"

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
	// request.
	BatchWriteUnits, BatchReadUnits = 8, 1
)

// The bounds TestAWSCallsPerDelivery holds the other two shapes to, per
// delivery, cap on, failed conditional writes counted: a fan-out of 5 is
// (9 + 4 x 7) / 5 = 7.4; a batch of 100 to one endpoint at the account's
// 5/s, 8 and what bookings and slot races add.
const (
	MaxFanOut5WriteUnits  = 7.4
	MaxBatch100WriteUnits = 8.2
)

// Assumptions the counts cannot give, each with its source.
const (
	memoryGB = 0.25 // infra: 256 MB api and deliver functions
	// The api's time per request in AWS (three DynamoDB calls and one SQS
	// call); a batch of 100's (docs/cost.md).
	apiSeconds, batchAPISeconds = 0.030, 0.200
	// A deliver invocation: the receiver's answer dominates.
	deliverSeconds = 0.150
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
	// Billed sleep per delivery paced at the account's default 5/s (a
	// batch of 100 to one account): each poller of the paced lane's
	// mapping (five at least on AWS) gathers its own batches, so below
	// about 40 paced deliveries a second a batch holds about one second's
	// slots of one poller's share, and an invocation sleeps ~1.5 s x 5 / r
	// a delivery (docs/lifecycle.md "The paced lane"); estimated, not
	// measured (the local runner's one poller reads 0.165 s).
	pacedSleepAt5 = 1.5
)

// logBytes is what CloudWatch Logs ingests for one event: app lines, EMF
// per API request (a batch's one line for all its events) and per deliver
// invocation, platform lines per invocation, the access log per request.
func logBytes(app, apiRequests, apiInvocations, deliverBatches float64) float64 {
	return app + apiRequests*(apiEMFBytes+accessLogBytes) + deliverBatches*deliverEMFBytes + (apiInvocations+deliverBatches)*platformLogBytes
}

// Single is one event posted alone to one endpoint, delivered first time.
func Single() Usage {
	return Usage{Deliveries: 1, APIRequests: 1, APIInvocations: 1, APISeconds: apiSeconds,
		DeliverBatches: 1.0 / messagesPerBatch, DeliverSeconds: deliverSeconds, MemoryGB: memoryGB, DeliverGB: memoryGB,
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
	u.WriteUnits, u.ReadUnits = BatchWriteUnits, BatchReadUnits+SweepDeliveryRead
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
	u.SQSRequests = 2 + 2.0*n/messagesPerBatch // two SendMessageBatch (the fast and the paced lane: the 2nd slot on is 0.2 s ahead); receive and delete each
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
