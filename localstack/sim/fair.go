package main

import "container/heap"

// The visible messages of one queue, by message group (the account), and
// the order a receive takes them in: SQS fair queues as AWS documents them
// ("How Amazon SQS fair queues work", docs/scale.md cites it). A tenant is
// noisy while it holds more than 10 % of the queue's messages in flight and
// at least 30 of its own, or more than 10 % of the consumers' recent
// processing time; while any quiet tenant's message is visible, a receive
// takes it first; among noisy tenants, the one with the fewest messages in
// flight first. Without fair queues (or with no noisy tenant) the order is
// first visible, first received, as the model always had it.
type group struct {
	acct       int32
	background bool
	cs         []*cohort
	head       int
	n          int     // visible messages
	noisy      bool    // as of the start of this second
	inflight   float64 // its messages in flight, as of the start of this second
	proc       float64 // its processing time, seconds, decayed (fairDecay a second)
	// this second
	taken, slowHeld float64
	idx             int // in the heap; -1 when empty
}

// Fair-queue thresholds (AWS's documented values) and the memory of
// "recent" processing time: AWS does not say; a minute here.
const (
	noisyShare    = 0.10
	noisyInFlight = 30
	fairDecay     = 1.0 / 60
)

type groupHeap []*group

func (h groupHeap) Len() int { return len(h) }
func (h groupHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.noisy != b.noisy {
		return !a.noisy
	}
	if a.noisy && a.inflight != b.inflight {
		return a.inflight < b.inflight
	}
	ca, cb := a.cs[a.head], b.cs[b.head]
	if ca.vis != cb.vis {
		return ca.vis < cb.vis
	}
	return ca.seq < cb.seq
}
func (h groupHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *groupHeap) Push(x any) {
	g := x.(*group)
	g.idx = len(*h)
	*h = append(*h, g)
}
func (h *groupHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	g.idx = -1
	return g
}

func (q *queue) group(acct int32) *group {
	g := q.groups[acct]
	if g == nil {
		g = &group{acct: acct, idx: -1}
		q.groups[acct] = g
		q.order = append(q.order, g)
	}
	return g
}

// push makes c visible at t.
func (q *queue) push(c *cohort, t float64) {
	q.seq++
	c.vis, c.seq = t, q.seq
	g := q.group(c.acct)
	g.cs = append(g.cs, c)
	g.n += c.n
	q.nvis += c.n
	if g.idx < 0 {
		heap.Push(&q.ready, g)
	} else if g.head == len(g.cs)-1 {
		heap.Fix(&q.ready, g.idx)
	}
}

// peek is the cohort the next receive takes.
func (q *queue) peek() *cohort {
	g := q.ready[0]
	return g.cs[g.head]
}

// pop takes the next cohort, or fit messages of it when it has more.
func (q *queue) pop(fit int) *cohort {
	g := q.ready[0]
	c := g.cs[g.head]
	if c.n > fit {
		part := *c
		part.n = fit
		c.n -= fit
		g.n -= fit
		q.nvis -= fit
		return &part
	}
	g.cs[g.head] = nil
	g.head++
	g.n -= c.n
	q.nvis -= c.n
	if g.head == len(g.cs) {
		g.cs, g.head = g.cs[:0], 0
		heap.Pop(&q.ready)
	} else {
		if g.head > 1024 && g.head*2 > len(g.cs) {
			g.cs = append(g.cs[:0], g.cs[g.head:]...)
			g.head = 0
		}
		heap.Fix(&q.ready, 0)
	}
	return c
}

// classify sets each tenant's noisy flag from the second just served: its
// messages in flight (those received this second, for the batch's time,
// and those held by an attempt to a dead endpoint) and its share of the
// processing time. The background stands for ~9,800 small tenants, each
// far under any share: never noisy.
func (q *queue) classify(fair bool, tf float64) {
	total, procTotal := 0.0, 0.0
	for _, g := range q.order {
		g.inflight = g.taken*tf + g.slowHeld
		g.proc = g.proc*(1-fairDecay) + g.taken*tf + g.slowHeld
		total += g.inflight
		procTotal += g.proc
	}
	changed := false
	for _, g := range q.order {
		noisy := fair && !g.background &&
			((g.inflight > noisyShare*total && g.inflight >= noisyInFlight) || (procTotal > 0 && g.proc > noisyShare*procTotal))
		changed = changed || noisy != g.noisy || noisy
		g.noisy = noisy
		g.taken = 0
	}
	if changed {
		heap.Init(&q.ready)
	}
	q.noisy = 0
	for _, g := range q.order {
		if g.noisy {
			q.noisy++
		}
	}
}
