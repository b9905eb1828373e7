package main

import "container/heap"

// Engine is a discrete-event clock: events run in time order, and events at
// the same time in the order they were scheduled, so a run is the same for
// the same seed. Times are seconds since the start of the simulated day.
type Engine struct {
	now    float64
	seq    uint64
	events eventHeap
}

type event struct {
	at  float64
	seq uint64
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Now is the current simulated time.
func (e *Engine) Now() float64 { return e.now }

// At schedules fn at time at; a time in the past runs at the current time.
func (e *Engine) At(at float64, fn func()) {
	if at < e.now {
		at = e.now
	}
	e.seq++
	heap.Push(&e.events, event{at: at, seq: e.seq, fn: fn})
}

// Pending is the number of events not yet run.
func (e *Engine) Pending() int { return len(e.events) }

// RunUntil runs every event due at or before end, in order, and leaves the
// clock at end.
func (e *Engine) RunUntil(end float64) {
	for len(e.events) > 0 && e.events[0].at <= end {
		ev := heap.Pop(&e.events).(event)
		e.now = ev.at
		ev.fn()
	}
	e.now = end
}
