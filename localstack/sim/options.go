package main

import (
	"time"

	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/pace"
	"github.com/gifq/webhooks/shared/schema"
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
	Scale   float64 // this row's load, times the -scale flag (0: 1)
	// DeadAccounts: this fraction of the accounts (drawn by the seed) have
	// every endpoint dead all day, instead of the workload's outage.
	DeadAccounts float64
	Steady       bool // no outage and no burst: the load alone

	MaxConcurrency  int // the fast lane's event source mapping's maximum concurrency per queue (2..1000)
	SlowConcurrency int // the slow lane's (lifecycle.LaneOf); 0: no slow lane, every message on the fast one
	// PacedConcurrency is the paced lane's (lifecycle.PacedLane); 0: none.
	// Its use is estimated from its arrivals, not served: its messages
	// ride the fast lane here (the model's workers do not sleep for slots).
	PacedConcurrency int
	FairQueues       bool    // MessageGroupId = the account: SQS fair queues serve noisy tenants after quiet ones
	BatchSize        int     // messages per invocation (1..10); an invocation lasts as long as its slowest
	Queues           int     // partitioned fast-lane queues, each with its own mapping; accounts hashed onto them
	EndpointCap      int     // concurrent attempts per endpoint (ENDPOINT_MAX_IN_FLIGHT; 0: none)
	Breaker          bool    // the per-endpoint breaker (lifecycle.BreakerAfterAttempt, BREAKER)
	APIRate          float64 // the API stage's throttle, requests/s (capped by the account's)
	APIBurst         float64
	PerKeyRate       float64 // each producer's ingest limit (0: none): its rate; burst PerKeyBurst
	PerKeyBurst      float64
	SchedulerEvery   float64 // C and BC: the scheduler's period, seconds
	SweepShards      int     // the sweep index's partition keys (schema.SweepShards)
	// KeepLateSlots: a message that reaches the worker after its rate-limit
	// slot uses it anyway (today's step books a new one once it is more
	// than its second allows, pace.Usable).
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

// The reference stack (before the slow lane and fair queues), with AWS's
// default quotas: the rows that chose the waiting design start from it.
func baseline() Options {
	return Options{
		Name: "baseline", Waiting: Hidden,
		MaxConcurrency: 50, BatchSize: 10, Queues: 1, EndpointCap: 5,
		APIRate: 50, APIBurst: 100, SchedulerEvery: 60, SweepShards: schema.SweepShards,
		InFlightLimit: 120_000, AccountConcurrency: 1_000, ScaleUpPerMinute: 300,
		PartitionWCU: 1_000, PartitionRCU: 3_000, AccountAPIRate: 10_000, AccountAPIBurst: 5_000,
		MaxDelay: 900, MaxVisibility: 12 * 3600, QueueVisibility: 180,
	}
}

// Today is the shipped stack (infra/config.go DefaultConfig, docs/deploy.md):
// design BC, the fast lane's mapping at 300 and the slow lane's at 50, fair
// queues, the breaker, the cap of 5, the stage throttle at 2,000 rps /
// burst 500, each key's ingest limit 100/s with a burst of 1,000, and a
// late slot booked again (pace.Usable).
func Today() Options {
	o := baseline()
	o.Name, o.Waiting = "BC iso today", Mixed
	o.MaxConcurrency, o.SlowConcurrency, o.FairQueues, o.Breaker = 300, 50, true, true
	o.PacedConcurrency = 50
	o.APIRate, o.APIBurst = 2_000, 500
	o.PerKeyRate, o.PerKeyBurst = 100, 1_000
	return o
}

// Worker tunables: the step's (shared/lifecycle), in seconds.
var (
	maxWaitInWorker = lifecycle.MaxWaitInWorker.Seconds()   // a slot this close is waited for in the worker
	slotTolerance   = (time.Second - pace.SendBy).Seconds() // a slot this late is booked again (pace.Usable, at best)
	// Deferrals and retries that end more than half the sweep grace after
	// the delivery's due time move it (lifecycle.KeepsDue, as the step's
	// putBack and record; infra's SweepGrace, 5 minutes).
	sweepGrace = 5 * time.Minute
	// A probe's lease: shared/app.LeaseFor(10 s), 2 x the timeout + 5 s.
	probeLease = 25.0
	// A paced lane invocation: no batching window; its messages wait at
	// most pace.Early for their seconds, then the attempts.
	pacedInvocation = 0.2
)

var day = (24 * time.Hour).Seconds()
