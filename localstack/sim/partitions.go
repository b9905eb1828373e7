package main

import (
	"math"
	"time"

	"github.com/gifq/webhooks/shared/cost"
)

// partitions checks the second's use of the partitions the hot path uses
// today (shared/store keys.go, schema.Table), each against DynamoDB's 1,000
// write units and 3,000 read units a second per partition:
//
//   - ACCT#<account>: the account item and its endpoint items. Reads: ingest's
//     strong query, and per message loaded its endpoint (the batch read) and
//     per claim the endpoint again. Writes: only the endpoints' health and
//     breaker changes, and the probe.
//   - RATE#<account>: the delivery rate limiter, a booking per event at
//     ingest and per retry or missed slot in the worker.
//   - ILIM#<key>: the API key's ingest limiter, a write per request (one key
//     per account here).
//   - EVTS#<account>#<day>: the account_events index, a write per event.
//   - EP#<endpoint>: the endpoint_log index, a write per delivery at ingest.
//   - SLOT#<endpoint>: the in-flight slot item, two writes per attempt.
//   - the sweep index's shards (schema.SweepShards): a delivery's entry
//     written at ingest, moved by a failed attempt, a park or a long
//     deferral, removed by its outcome.
//
// DLV#<delivery> and EVT#<event> are one item's partition each, never hot.
// Adaptive capacity's split for heat can spread an item collection (ACCT#:
// 1 + 16 items) over partitions by sort key, and isolates a hot item on a
// partition of its own, but one item never gets more than a partition's
// throughput: the figures here are per partition key, and the report says
// which would split.
func (s *Sim) partitions(t float64) {
	// This second's busiest partition of each kind; the day's is the peak
	// of its quota (Metrics.Peak).
	var hotW, hotR Use
	track := func(hot *Use, limit float64, bound, bind string) func(string, float64) {
		return func(name string, v float64) {
			if v > hot.Peak {
				hot.What, hot.Peak = name, v
			}
			if v > limit {
				s.m.bindAs(bound+kindOf(name), bind+name, t)
			}
		}
	}
	wcu := track(&hotW, s.o.PartitionWCU, "DynamoDB partition ", "DynamoDB partition writes: ")
	rcu := track(&hotR, s.o.PartitionRCU, "DynamoDB partition reads ", "DynamoDB partition reads: ")
	for _, a := range s.touchedA {
		if a.bookings > 0 {
			w := math.Ceil(a.bookings/float64(s.o.BatchSize)) * cost.RetryRateBookingWrite
			s.m.WCU += w
			a.rateWCU += w
			a.bookings = 0
		}
		if a.rank != 0 { // the background's many small accounts: none of them hot
			if a.healthy > 0 {
				wcu("EP#<endpoint> of "+accountName(a, ""), a.healthyLog/float64(a.healthy))
				wcu("SLOT#<endpoint> of "+accountName(a, ""), a.healthySlot/float64(a.healthy))
			}
			wcu(accountName(a, "ACCT#"), a.acctWCU)
			rcu(accountName(a, "ACCT#"), a.acctRCU)
			wcu(accountName(a, "RATE#"), a.rateWCU)
			// Where the interval (whole microseconds) gives fewer slots a
			// second than the rate set, the account's own demand (a
			// minute's average) against them.
			a.demand = a.demand*math.Pow(1-1.0/60, t-a.demandAt) + a.slotsSec/60
			a.demandAt = t
			if limit := float64(time.Second) / float64(a.ivl); limit < 0.999*a.rate {
				s.m.useAs("account rate limiter slots a second", accountName(a, "RATE#"), a.demand, limit, t)
				if a.demand > limit {
					s.m.bindAs("account rate limiter", "account rate limiter: "+accountName(a, "RATE#")+" needs more slots a second than its interval gives", t)
				}
			}
			wcu(accountName(a, "ILIM#<key> of "), a.keyWCU)
			wcu(accountName(a, "EVTS#")+"#<day>", a.eventsWCU)
		}
		a.acctWCU, a.acctRCU, a.rateWCU, a.keyWCU, a.eventsWCU, a.slotsSec = 0, 0, 0, 0, 0, 0
		a.healthyLog, a.healthySlot, a.healthySent, a.touched = 0, 0, 0, false
	}
	for _, e := range s.touchedE {
		wcu("EP#<endpoint> of "+accountName(s.accts[e.acct], ""), e.logWCU)
		wcu("SLOT#<endpoint> of "+accountName(s.accts[e.acct], ""), e.slotWCU)
		e.logWCU, e.slotWCU, e.sent, e.touched = 0, 0, 0, false
	}
	wcu("sweep index shard (1 of "+itoa(s.o.SweepShards)+")", s.sweepWCU/float64(s.o.SweepShards))
	s.m.useAs(partitionWrites, hotW.What, hotW.Peak, s.o.PartitionWCU, t)
	s.m.useAs(partitionReads, hotR.What, hotR.Peak, s.o.PartitionRCU, t)
	s.touchedA, s.touchedE, s.sweepWCU = s.touchedA[:0], s.touchedE[:0], 0
}

func accountName(a *account, prefix string) string {
	return prefix + "account ranked " + itoa(a.rank)
}

// kindOf is a partition's kind: its name up to the first space or '#'.
func kindOf(name string) string {
	for i, r := range name {
		if r == '#' || r == ' ' {
			return name[:i]
		}
	}
	return name
}
