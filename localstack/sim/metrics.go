package main

import (
	"math"
	"sort"
	"strconv"
)

// Metrics is what a run reports.
type Metrics struct {
	Binds []Bind // each quota or limit, the first time it bound

	PeakInFlight, PeakInFlightAt       float64
	PeakConcurrency, PeakConcurrencyAt float64
	Uses                               []Use // each quota's peak use
	LaneMoves, BreakersOpened          float64
	P50, P99                           float64 // seconds, ingest to delivered, unaffected accounts
	P99Small                           float64 // the same, the small accounts' (the background's ~9,800)
	Delivered, DLQ, Attempts, Retries  float64
	// PastDeadline is the most any delivery failed past its deadline
	// (lifecycle.Deadline), in seconds (negative: all before it).
	PastDeadline                       float64
	CapDeferrals, RateDeferrals        float64
	Scheduled                          float64
	Left                               float64 // not finished when the run ended (the burst's backlog)
	Throttled429, APIRequests          float64
	SQSRequests, Invocations, WCU, RCU float64
	LambdaDeliverGBs, LambdaAPIGBs     float64
	RunSeconds                         float64 // how long the simulation took
	DayM                               float64 // the day's deliveries, millions

	processedOther, processedSlow float64 // messages the worker put back without an attempt; attempts to dead endpoints

	waits      []float64 // unaffected deliveries by whole seconds waited before the attempt
	waitsSmall []float64 // the background's
	apiConcNow float64
	bgCarry    float64
	lat        lognormal
	base       float64
}

// Bind is a quota or limit reached at a time.
type Bind struct {
	What string
	At   float64
	kind string
}

func (m *Metrics) bind(what string, t float64) { m.bindAs(what, what, t) }

// bindAs records what the first time a limit of this kind binds.
func (m *Metrics) bindAs(kind, what string, t float64) {
	for _, b := range m.Binds {
		if b.kind == kind {
			return
		}
	}
	m.Binds = append(m.Binds, Bind{What: what, At: t, kind: kind})
}

// Use is a quota's peak use in a second: what took it (a partition's
// name), when, against its limit.
type Use struct {
	Quota, What     string
	Peak, Limit, At float64
}

// Ratio is the peak as a fraction of the limit.
func (u Use) Ratio() float64 { return u.Peak / u.Limit }

// Name is the quota, and what took it when that says more.
func (u Use) Name() string {
	if u.What != u.Quota {
		return u.Quota + " " + u.What
	}
	return u.Quota
}

// The quotas of the hottest partitions' writes and reads a second.
const (
	partitionWrites = "DynamoDB partition writes"
	partitionReads  = "DynamoDB partition reads"
)

// Peak is quota's peak use (zero when it was never recorded).
func (m Metrics) Peak(quota string) Use {
	for _, u := range m.Uses {
		if u.Quota == quota {
			return u
		}
	}
	return Use{Quota: quota}
}

func (m *Metrics) use(quota string, v, limit, t float64) { m.useAs(quota, quota, v, limit, t) }

// useAs records v against quota's limit at t, keeping the peak.
func (m *Metrics) useAs(quota, what string, v, limit, t float64) {
	for i := range m.Uses {
		if u := &m.Uses[i]; u.Quota == quota {
			if v > u.Peak {
				u.What, u.Peak, u.At = what, v, t
			}
			return
		}
	}
	m.Uses = append(m.Uses, Use{Quota: quota, What: what, Peak: v, Limit: limit, At: t})
}

// Tightest is the quota with the highest peak use against its limit.
func (m Metrics) Tightest() Use {
	var best Use
	for _, u := range m.Uses {
		if u.Limit > 0 && (best.Limit == 0 || u.Ratio() > best.Ratio()) {
			best = u
		}
	}
	return best
}

func (m *Metrics) peak(v, at *float64, x, t float64) {
	if x > *v {
		*v, *at = x, t
	}
}

// wait records n deliveries that waited w seconds from the producer's post
// to the attempt that succeeded; small: the background's.
func (m *Metrics) wait(w, n float64, small bool) {
	record(&m.waits, w, n)
	if small {
		record(&m.waitsSmall, w, n)
	}
}

func record(waits *[]float64, w, n float64) {
	i := int(w)
	for len(*waits) <= i {
		*waits = append(*waits, 0)
	}
	(*waits)[i] += n
}

// Percentile is the q-th quantile of ingest-to-delivered latency: the whole
// seconds waited (recorded) plus the fixed hops plus the receiver's answer
// time (lognormal, a success so under the timeout), convolved exactly.
func (m *Metrics) Percentile(q, timeout float64) float64 { return m.percentile(m.waits, q, timeout) }

func (m *Metrics) percentile(waits []float64, q, timeout float64) float64 {
	total := 0.0
	for _, n := range waits {
		total += n
	}
	if total == 0 {
		return math.NaN()
	}
	cdfL := func(x float64) float64 { return math.Min(1, m.lat.CDF(x)/m.lat.CDF(timeout)) }
	cdf := func(x float64) float64 {
		sum := 0.0
		for w, n := range waits {
			if n > 0 {
				sum += n * cdfL(x-float64(w)-m.base)
			}
		}
		return sum / total
	}
	lo, hi := 0.0, float64(len(waits))+timeout+1
	for range 60 {
		mid := (lo + hi) / 2
		if cdf(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func (s *Sim) finish() {
	m := &s.m
	m.lat, m.base = s.lat, s.w.IngestDelay+s.w.Overhead
	m.P50, m.P99 = m.Percentile(0.50, s.w.DeadTimeout), m.Percentile(0.99, s.w.DeadTimeout)
	m.P99Small = m.percentile(m.waitsSmall, 0.99, s.w.DeadTimeout)
	left := float64(s.ddbWaiting)
	for _, q := range s.queues {
		left += float64(q.nvis + q.hidden)
	}
	for _, a := range s.accts {
		for _, b := range a.backlog {
			left += float64(b.n) * a.fanout
		}
	}
	m.Left = left + float64(s.timed) // attempts still in flight at the end are not counted (at most the cap per endpoint)
	sort.SliceStable(m.Binds, func(i, j int) bool { return m.Binds[i].At < m.Binds[j].At })
}

func itoa(n int) string { return strconv.Itoa(n) }

func clock(t float64) string {
	h, mnt := int(t)/3600, int(t)%3600/60
	if h >= 24 {
		return "+" + strconv.Itoa(h-24) + "h" + pad(mnt)
	}
	return pad(h) + ":" + pad(mnt)
}

func pad(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
