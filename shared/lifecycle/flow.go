package lifecycle

import (
	"fmt"
	"strings"
)

// Arrived is where a message's flow starts: before its first effect.
const Arrived Do = -1

// Flow is one pair of effects the step makes in a row.
type Flow struct {
	From, To Do
	When     string // what came of From
}

// StepFlow is every pair of effects lifecycle.Step makes in a row, with
// what leads from one to the other: the step's diagram in
// docs/lifecycle.md. A test walks the step through every result of every
// effect and holds this table to what it saw.
var StepFlow = []Flow{
	{Arrived, DoLoad, "a message"},
	{Arrived, DoPutBack, "far ahead of the slot it carries"},
	{Arrived, DoRestart, "a redriven DLQ message"},
	{DoLoad, DoQuarantine, "its ids match another delivery"},
	{DoLoad, DoFinish, "gone, superseded or done"},
	{DoLoad, DoDeadLetter, "failed, its DLQ message never sent"},
	{DoLoad, DoFail, "exhausted, endpoint gone or disabled, event expired, held by the endpoint past the deadline"},
	{DoLoad, DoPutBack, "not due, leased, paused, breaker open, cap full, failing: to the slow lane"},
	{DoLoad, DoProbe, "breaker half-open"},
	{DoLoad, DoReserve, "due, no usable slot"},
	{DoLoad, DoClaim, "due, its slot now"},
	{DoLoad, DoSleep, "failed: read again shortly"},
	{DoLoad, DoRetry, "system error"},
	{DoProbe, DoReserve, "the probe is ours"},
	{DoProbe, DoClaim, "the probe is ours, its slot now"},
	{DoProbe, DoPutBack, "another worker probes"},
	{DoProbe, DoRetry, "system error"},
	{DoReserve, DoReserve, "the endpoint's own rate too"},
	{DoReserve, DoPutBack, "the slot is far: carry it"},
	{DoReserve, DoSleep, "the slot is near"},
	{DoReserve, DoClaim, "the slot is now"},
	{DoReserve, DoRetry, "the limiter failed: the gate closes"},
	{DoSleep, DoLoad, "read again"},
	{DoSleep, DoClaim, "claim a little ahead of the slot"},
	{DoSleep, DoSend, "at the slot"},
	{DoSleep, DoRecord, "write the outcome again"},
	{DoSleep, DoReread, "read the delivery again"},
	{DoSleep, DoYield, "give the claim back again"},
	{DoSleep, DoFail, "fail again"},
	{DoSleep, DoRetry, "the invocation ends"},
	{DoClaim, DoSend, "taken, at its slot"},
	{DoClaim, DoSleep, "taken, ahead of its slot"},
	{DoClaim, DoYield, "taken, but the endpoint changed or its second is ending"},
	{DoClaim, DoPutBack, "cap full, conflict, endpoint changed"},
	{DoClaim, DoFinish, "a resend already made"},
	{DoClaim, DoFail, "cap full past the deadline"},
	{DoClaim, DoRetry, "system error"},
	{DoYield, DoPutBack, "given back, or given up"},
	{DoYield, DoSleep, "failed: try again"},
	{DoSend, DoRecord, "answered"},
	{DoRecord, DoFinish, "delivered, manual, or the claim lost"},
	{DoRecord, DoPutBack, "retry at its time"},
	{DoRecord, DoDeadLetter, "failed for good"},
	{DoRecord, DoSleep, "failed: try again"},
	{DoRecord, DoRetry, "failed past its tries"},
	{DoReread, DoRecord, "not applied, still ours"},
	{DoReread, DoFinish, "applied after all, or the claim lost"},
	{DoReread, DoPutBack, "applied: retry at its time"},
	{DoReread, DoDeadLetter, "applied: failed for good"},
	{DoFail, DoDeadLetter, "failed"},
	{DoFail, DoFinish, "changed meanwhile, its wait parked"},
	{DoFail, DoPutBack, "changed meanwhile: look again"},
	{DoFail, DoSleep, "refused: again shortly"},
	{DoFail, DoRetry, "system error"},
	{DoPutBack, DoFinish, "it will come back"},
	{DoPutBack, DoLoad, "would outlive its item: read it"},
	{DoPutBack, DoFail, "would outlive its item: expired"},
	{DoPutBack, DoRetry, "system error"},
	{DoDeadLetter, DoFinish, "sent"},
	{DoDeadLetter, DoRetry, "system error"},
	{DoRestart, DoFinish, "restarted"},
	{DoRestart, DoRetry, "system error"},
	{DoQuarantine, DoFinish, "kept for a human"},
	{DoQuarantine, DoRetry, "system error"},
}

// StepMermaid draws StepFlow as a Mermaid flowchart.
func StepMermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, f := range StepFlow {
		fmt.Fprintf(&b, "    %s -->|%s| %s\n", f.From, f.When, f.To)
	}
	return b.String()
}
