package main

import (
	"math"
	"math/rand/v2"
)

// Workload is the day being simulated.
type Workload struct {
	Accounts         int
	ZipfS            float64
	DeliveriesPerDay float64
	Diurnal          float64 // the rate swings by this fraction around its mean, peaking at 12:00
	RateFloor        float64 // the contract's 5 deliveries/s per account
	RateHeadroom     float64 // big accounts get set-rate of this times their mean

	DownFraction             float64 // of all endpoints, down for OutageFor from OutageAt
	DeadAccounts             float64 // of all accounts, every endpoint of theirs down for OutageFor from OutageAt
	OutageAt, OutageFor      float64
	DeadTimeout              float64 // a down endpoint's attempt waits this long
	BurstRank                int     // the account that floods
	BurstEvents              float64
	BurstAt, BurstRPS        float64 // when, and how fast its producer posts
	LatencyMedian, Latency99 float64 // a healthy receiver's answer time (lognormal)
	Overhead                 float64 // the worker's DynamoDB calls around a POST
	Transient5xx, Reject4xx  float64 // a healthy receiver's share of 5xx and 4xx answers
	IngestDelay              float64 // API, DynamoDB and SQS hop before a message can be received
}

// DefaultWorkload is the reference day (docs/scale.md).
func DefaultWorkload() Workload {
	return Workload{
		Accounts: 10_000, ZipfS: 1, DeliveriesPerDay: 100e6, Diurnal: 0.6, RateFloor: 5, RateHeadroom: 3,
		DownFraction: 0.01, OutageAt: 10.5 * 3600, OutageFor: 3 * 3600, DeadTimeout: 10,
		BurstRank: 5_000, BurstEvents: 500_000, BurstAt: 12 * 3600, BurstRPS: 20_000,
		LatencyMedian: 0.15, Latency99: 2, Overhead: 0.03, Transient5xx: 0.001, Reject4xx: 0.0001,
		IngestDelay: 0.06,
	}
}

// fanout is how many endpoints an account of rank r has (all subscribed to
// every event): the largest accounts use all 16.
func fanout(rank int) int {
	switch {
	case rank <= 100:
		return 16
	case rank <= 1000:
		return 3
	}
	return 1
}

// diurnal is the day's shape at t: mean 1.
func (w Workload) diurnal(t float64) float64 {
	return 1 - w.Diurnal*math.Cos(2*math.Pi*t/day)
}

// lognormal is the healthy receivers' latency.
type lognormal struct{ mu, sigma float64 }

func (w Workload) latency() lognormal {
	sigma := math.Log(w.Latency99/w.LatencyMedian) / 2.3263
	return lognormal{mu: math.Log(w.LatencyMedian), sigma: sigma}
}

// CDF is P(L <= x).
func (l lognormal) CDF(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return 0.5 * math.Erfc(-(math.Log(x)-l.mu)/(l.sigma*math.Sqrt2))
}

// meanMax[k] is the mean of the largest of k answer times under a timeout:
// how long an invocation of k attempts to healthy receivers lasts.
func (l lognormal) meanMax(k int, timeout float64, rnd *rand.Rand) float64 {
	if k == 0 {
		return 0
	}
	const n = 20_000
	sum := 0.0
	for range n {
		m := 0.0
		for range k {
			m = max(m, math.Exp(l.mu+l.sigma*rnd.NormFloat64()))
		}
		sum += min(m, timeout)
	}
	return sum / n
}
