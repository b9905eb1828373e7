// Package stats folds the table's stream into hourly delivery counters per
// endpoint and per account, and reads them back as a summary: attempts,
// delivered, failed, dead-lettered, status classes and a latency histogram
// in fixed buckets (p50/p99 are read from the buckets). Pure: the stats
// function and make dev's stream poller decode records into Changes, Fold
// them, and write each Update with one UpdateItem (store.AddStats).
package stats

import (
	"sort"
	"time"
)

// Image is the part of a delivery item (DLV#<id> / DLV) the fold reads, from
// a stream record's old or new image.
type Image struct {
	Account, Endpoint string
	Status            string // pending, delivered, failed
	LastAttemptID     string // set by the write that records an attempt's outcome
	LastStatus        int    // the last attempt's HTTP status (0: it had none)
	LastError         string // the last attempt's error class (no HTTP answer)
	LastMs            int64  // the last attempt's duration
	DLQPending        bool   // failed, its DLQ message not yet sent
}

// Change is one stream record of a delivery item: Old is nil for an insert,
// New nil for a removal. At is when the change was made (the record's
// approximate creation time): it names the hour counted.
type Change struct {
	Old, New *Image
	At       time.Time
}

// Status classes, in Counts.Classes.
const (
	Class2xx = iota
	Class3xx
	Class4xx
	Class5xx
	ClassNetwork // no HTTP answer: timeout, refused, TLS, blocked address
	NumClasses
)

// ClassNames are the classes as the API names them.
var ClassNames = [NumClasses]string{"2xx", "3xx", "4xx", "5xx", "network"}

// LatencyBounds are the latency buckets' upper bounds in ms; the last bucket
// (index len(LatencyBounds)) holds everything slower.
var LatencyBounds = []int64{50, 100, 250, 500, 1000, 2500, 5000, 10000}

// NumBuckets is the number of latency buckets.
const NumBuckets = 9

// Counts are one hour's counters for an endpoint or an account.
type Counts struct {
	Attempts, Delivered, Failed, DeadLettered int64
	Classes                                   [NumClasses]int64
	Latency                                   [NumBuckets]int64
}

// Add adds o to c.
func (c *Counts) Add(o Counts) {
	c.Attempts += o.Attempts
	c.Delivered += o.Delivered
	c.Failed += o.Failed
	c.DeadLettered += o.DeadLettered
	for i := range c.Classes {
		c.Classes[i] += o.Classes[i]
	}
	for i := range c.Latency {
		c.Latency[i] += o.Latency[i]
	}
}

// Zero reports whether nothing was counted.
func (c Counts) Zero() bool { return c == Counts{} }

// Key names one counter item: an account's (Endpoint "") or one of its
// endpoints', for the hour starting at Hour.
type Key struct {
	Account, Endpoint string
	Hour              time.Time
}

// Update is what one UpdateItem adds to one counter item.
type Update struct {
	Key
	Counts
}

// Fold counts a batch of changes into one Update per (endpoint, hour) and
// per (account, hour) that something happened in, in a stable order.
// Changes that count nothing (a claim, a put-back, an insert) are skipped
// after a few field compares.
func Fold(changes []Change) []Update {
	acc := map[Key]*Counts{}
	for _, ch := range changes {
		c, ok := count(ch)
		if !ok {
			continue
		}
		hour := ch.At.UTC().Truncate(time.Hour)
		for _, k := range []Key{{ch.New.Account, ch.New.Endpoint, hour}, {ch.New.Account, "", hour}} {
			if acc[k] == nil {
				acc[k] = &Counts{}
			}
			acc[k].Add(c)
		}
	}
	out := make([]Update, 0, len(acc))
	for k, c := range acc {
		out = append(out, Update{k, *c})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Key, out[j].Key
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		if a.Endpoint != b.Endpoint {
			return a.Endpoint < b.Endpoint
		}
		return a.Hour.Before(b.Hour)
	})
	return out
}

// count is what one change adds: an attempt when the write recorded a new
// one (its id changed), a delivered or failed delivery when the status
// became final, a dead-lettered one when a failed delivery's DLQ message
// was marked sent.
func count(ch Change) (Counts, bool) {
	var c Counts
	n, o := ch.New, ch.Old
	if n == nil || o == nil || n.Account == "" || n.Endpoint == "" {
		return c, false
	}
	if n.LastAttemptID != "" && n.LastAttemptID != o.LastAttemptID {
		c.Attempts = 1
		c.Classes[Class(n.LastStatus)]++
		c.Latency[Bucket(n.LastMs)]++
	}
	if n.Status != o.Status {
		switch n.Status {
		case "delivered":
			c.Delivered = 1
		case "failed":
			c.Failed = 1
		}
	}
	if o.DLQPending && !n.DLQPending && n.Status == "failed" && o.Status == "failed" {
		c.DeadLettered = 1
	}
	return c, !c.Zero()
}

// Class is the status class of an attempt that got HTTP status code (0:
// none, a network class error).
func Class(code int) int {
	switch {
	case code >= 200 && code < 300:
		return Class2xx
	case code >= 300 && code < 400:
		return Class3xx
	case code >= 400 && code < 500:
		return Class4xx
	case code >= 500 && code < 600:
		return Class5xx
	}
	return ClassNetwork
}

// Bucket is the latency bucket of an attempt that took ms.
func Bucket(ms int64) int {
	for i, b := range LatencyBounds {
		if ms <= b {
			return i
		}
	}
	return len(LatencyBounds)
}

// Percentile is the upper bound (ms) of the bucket the q-th quantile of the
// histogram falls in; the slowest bucket reports the last bound. 0 when the
// histogram is empty.
func Percentile(h [NumBuckets]int64, q float64) int64 {
	var total int64
	for _, n := range h {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.999999)
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, n := range h {
		seen += n
		if seen >= rank && i < len(LatencyBounds) {
			return LatencyBounds[i]
		}
	}
	return LatencyBounds[len(LatencyBounds)-1]
}
