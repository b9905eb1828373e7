package main

import (
	"testing"
	"time"
)

// The checker's reading of a late delivery's trace: how long its messages
// waited past their due time, and what made it late.
func TestLateCauseFromTheTrace(t *testing.T) {
	t0 := time.UnixMilli(1_000_000)
	at := func(s float64) int64 { return t0.Add(time.Duration(s * float64(time.Second))).UnixMilli() }
	deadline := t0.Add(100 * time.Second)
	held := []traceLine{
		{At: at(0), What: "send", Lane: "slow", Detail: "deliver gen=1 hops=0 deferred=0 delay=0s batch"},
		{At: at(0.5), What: "receive", Lane: "slow", Detail: "deliver gen=1 hops=0 deferred=0 count=1"},
		{At: at(1), What: "send", Lane: "slow", Detail: "deliver gen=1 hops=1 deferred=1 delay=99s batch"},
		{At: at(103), What: "receive", Lane: "slow", Detail: "deliver gen=1 hops=1 deferred=1 count=1"},
		{At: at(103.1), What: "send", Lane: "fast", Detail: "deliver gen=1 hops=2 deferred=2 delay=5s batch"},
	}
	if lag, lane := queueLag(held); lag != 3*time.Second || lane != "slow" {
		t.Fatalf("queue lag %s on %q, want 3s on the slow lane", lag, lane)
	}
	if cause, why := lateCause(held, deadline); cause != "waits past the deadline" {
		t.Fatalf("cause %q (%s)", cause, why)
	}
	lostRequeue := append(held[:2:2], traceLine{At: at(120), What: faultLostSend, Lane: "fast", Detail: "deliver gen=2 hops=0 deferred=0 delay=0s batch"})
	if cause, why := lateCause(lostRequeue, deadline); cause != "a lost re-queue" {
		t.Fatalf("cause %q (%s)", cause, why)
	}
}
