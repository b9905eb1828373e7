package main

import (
	"time"

	"github.com/gifq/webhooks/shared/lifecycle"
)

// Waiting is where a message waits between now and its next step (a retry,
// a rate-limit slot, a cap deferral, an endpoint pause).
type Waiting string

// The waiting designs.
const (
	// Hidden is today's: the received message is hidden with
	// ChangeMessageVisibility for the wait, in flight all along.
	Hidden Waiting = "A"
	// Delayed re-sends the message with DelaySeconds (at most 900 s),
	// chaining sends for longer waits.
	Delayed Waiting = "B"
	// Due keeps the wait in DynamoDB's due time; a scheduler every period
	// enqueues what is due (late by up to the period).
	Due Waiting = "C"
	// Mixed delays waits up to 900 s and keeps longer ones in DynamoDB; the
	// scheduler enqueues each with a delay to its exact time.
	Mixed Waiting = "BC"
)

// Options are the deployment's settings and AWS's quotas: one row of the
// results table.
type Options struct {
	Name    string
	Waiting Waiting

	MaxConcurrency int     // the event source mapping's maximum concurrency per queue (2..1000)
	BatchSize      int     // messages per invocation (1..10); an invocation lasts as long as its slowest
	Queues         int     // partitioned delivery queues, each with its own mapping; accounts hashed onto them
	EndpointCap    int     // concurrent attempts per endpoint (ENDPOINT_MAX_IN_FLIGHT; 0: none)
	Breaker        int     // open an endpoint's breaker after this many consecutive timeouts (0: no breaker)
	APIRate        float64 // the API stage's throttle, requests/s (capped by the account's)
	APIBurst       float64
	PerKeyRate     float64 // a usage plan per API key: each producer's rate (0: none); burst twice that
	SchedulerEvery float64 // C and BC: the scheduler's period, seconds
	// KeepLateSlots: a message that reaches the worker after its rate-limit
	// slot uses it anyway (today's worker books a new slot once it is more
	// than slotTolerance late).
	KeepLateSlots bool

	// AWS quotas (documented defaults; docs/scale.md cites each).
	InFlightLimit      int     // SQS standard queue, messages received and not deleted
	AccountConcurrency int     // Lambda, per account and region
	ScaleUpPerMinute   float64 // Lambda's SQS pollers add at most this many concurrent invocations a minute
	PartitionWCU       float64 // DynamoDB, per partition
	PartitionRCU       float64
	AccountAPIRate     float64 // API Gateway, per account and region
	AccountAPIBurst    float64
	MaxDelay           float64 // SQS DelaySeconds
	MaxVisibility      float64 // SQS visibility from the receive
	QueueVisibility    float64 // the delivery queue's visibility timeout (a refused Hide leaves this)
}

// Defaults is today's stack (infra/config.go, docs/deploy.md) with AWS's
// default quotas.
func Defaults() Options {
	return Options{
		Name: "today", Waiting: Hidden,
		MaxConcurrency: 50, BatchSize: 10, Queues: 1, EndpointCap: 5,
		APIRate: 50, APIBurst: 100, SchedulerEvery: 60,
		InFlightLimit: 120_000, AccountConcurrency: 1_000, ScaleUpPerMinute: 300,
		PartitionWCU: 1_000, PartitionRCU: 3_000, AccountAPIRate: 10_000, AccountAPIBurst: 5_000,
		MaxDelay: 900, MaxVisibility: 12 * 3600, QueueVisibility: 180,
	}
}

// Worker tunables, as shared/delivery/worker.go has them (unexported there).
const (
	maxWaitInWorker = 1.0 // a slot this close is waited for in the worker
	slotTolerance   = 1.0 // a slot missed by more is reserved again
	capBackoffMin   = 1.0
	capBackoffMax   = 30.0
	sweepGraceHalf  = 150.0 // deferrals longer than half the sweep grace move the due time (PushDue)
)

// Breaker tunables: the worker's (shared/lifecycle/breaker.go). The model
// keeps its own cohort-level breaker (the option's threshold, these pauses,
// ±20 % jitter, one probe at a time) beside the real Decide and Settle.
var (
	probeFirst = lifecycle.BreakerFirstPause.Seconds() // the first pause after the breaker opens
	probeMax   = lifecycle.BreakerMaxPause.Seconds()   // pauses double up to this
)

// capBackoff is the worker's back-off for a message that found its endpoint
// at the cap, without the jitter.
func capBackoff(deferrals int) float64 {
	d := capBackoffMin * float64(int(1)<<min(max(deferrals-1, 0), 5))
	return min(d, capBackoffMax)
}

var day = (24 * time.Hour).Seconds()
