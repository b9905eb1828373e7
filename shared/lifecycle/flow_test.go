package lifecycle_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
)

// walk drives the step the way the executor does, each effect's result
// drawn at random (every result an effect can have, system errors
// included), and reports every pair of effects seen in a row.
func walk(runs int) map[lifecycle.Flow]bool {
	seen := map[lifecycle.Flow]bool{}
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func(n int) int { return rnd.IntN(n) }
	for range runs {
		full := known()
		switch pick(11) { // the snapshot the load will find
		case 0:
			full.Endpoint.Leases = fullLeases(5)
		case 1:
			full.Endpoint.BreakerOpenUntil, full.Endpoint.BreakerFails = ms(-time.Second), 5 // half-open
		case 2:
			full.Endpoint.Settings.RatePerSecond = 1
		case 3:
			full.Delivery.NextAttemptAt = ms(time.Duration(pick(3)) * time.Hour)
		case 4:
			full.Delivery.Status, full.Delivery.DLQPending = domain.StatusFailed, true
		case 5:
			full.Delivery.Attempts = 7
		case 6:
			full.Delivery.Status = domain.StatusDelivered
		case 7:
			full.Delivery.AccountID = "acct_other" // the message lies about its delivery
		case 8:
			full.Endpoint.FailingSince = ms(-time.Minute) // on the slow lane
		case 9:
			full.Delivery.SeriesAt = ms(-3 * time.Hour) // past its deadline
		}
		pol := policy
		pol.Lanes = pick(2) == 0
		k := lifecycle.Known{Msg: full.Msg, Now: now, Seed: rnd.Uint64()}
		switch pick(6) {
		case 0:
			k.Msg.Kind, k.Msg.Slot = lifecycle.KindResend, lifecycle.Slot{At: now}
		case 1:
			k.Msg.Kind = lifecycle.KindDeadLetter
		case 2:
			k.Msg.Slot = lifecycle.Slot{At: now.Add(time.Minute)}
		case 3:
			k.Msg.Slot = lifecycle.Slot{At: now} // booked by ingest for the first attempt
		case 4:
			k.Msg.Lane = lifecycle.LaneSlow
		}
		prev := lifecycle.Arrived
		for range 40 {
			k.Now = now.Add(time.Duration(pick(3)) * time.Millisecond)
			e := lifecycle.Step(k, pol)
			seen[lifecycle.Flow{From: prev, To: e.Do}] = true
			if e.Do == lifecycle.DoFinish || e.Do == lifecycle.DoRetry {
				break
			}
			prev = e.Do
			k.Err = nil
			switch e.Do { // counted whatever comes of them, as the executor does
			case lifecycle.DoRecord:
				k.RecordTries++
			case lifecycle.DoYield:
				k.YieldTries++
			case lifecycle.DoLoad:
				k.LoadTries++
			case lifecycle.DoFail:
				k.FailTries++
			}
			odds := 10
			if e.Do == lifecycle.DoRecord || e.Do == lifecycle.DoYield {
				odds = 2 // enough failures in a row to give up
			}
			if e.Do != lifecycle.DoSend && pick(odds) == 0 { // a send has no system error: its failures are its answer
				k.Err, k.ErrOn = errors.New("unavailable"), e.Do
				continue
			}
			switch e.Do {
			case lifecycle.DoLoad:
				k.Loaded, k.Delivery, k.Endpoint, k.Event = true, full.Delivery, full.Endpoint, full.Event
			case lifecycle.DoProbe:
				k.ProbeTaken = pick(2) == 0
				k.ProbeLost = !k.ProbeTaken
			case lifecycle.DoReserve:
				s := lifecycle.Slot{At: now.Add(time.Duration(pick(3)) * time.Second)}
				if e.Line == lifecycle.LineAccount {
					k.Rate = s
				} else {
					k.EndpointRate = s
				}
			case lifecycle.DoSleep:
				k.Slept = e.Until
			case lifecycle.DoClaim:
				k.Claim = []lifecycle.ClaimResult{lifecycle.ClaimTaken, lifecycle.ClaimFull, lifecycle.ClaimConflict, lifecycle.ClaimChanged, lifecycle.ClaimDuplicate}[pick(5)]
				if k.Claim == lifecycle.ClaimDuplicate && k.Msg.Kind != lifecycle.KindResend {
					k.Claim = lifecycle.ClaimConflict // only a resend's claim finds its attempt made
				}
				k.ClaimHeld = k.Claim == lifecycle.ClaimChanged && pick(2) == 0
				k.Claimed, k.LeaseUntil = *full.Delivery, now.Add(time.Minute)
				k.Claimed.Attempts++
			case lifecycle.DoYield:
				k.Yielded = true
			case lifecycle.DoSend:
				k.Answer = &lifecycle.Answer{Outcome: httpOutcome([]int{200, 500, 410, 0}[pick(4)], "", 0), Started: now, At: now}
			case lifecycle.DoRecord:
				k.Recorded = pick(4) != 0
				k.RecordLost = !k.Recorded
			case lifecycle.DoReread:
				k.RereadAt, k.Reread = k.RecordTries, lifecycle.RecordResult(pick(3))
			case lifecycle.DoFail:
				f := *full.Delivery
				k.Failed, k.FailLost = &f, pick(4) == 0
				if k.FailLost {
					k.Failed = nil
				}
			case lifecycle.DoDeadLetter:
				k.DeadLetter = lifecycle.DeadLetterResult(1 + pick(3))
			case lifecycle.DoRestart:
				k.Restarted = true
			case lifecycle.DoPutBack:
				k.PutBack = []lifecycle.PutBackResult{lifecycle.PutBackDone, lifecycle.PutBackSuperseded, lifecycle.PutBackOutlives}[pick(3)]
			case lifecycle.DoQuarantine:
				k.Quarantined = true
			}
		}
	}
	return seen
}

// The flow table (lifecycle.StepFlow) is what the step does: every pair of
// effects it was seen to make in a row is in the table, and every row of the
// table was seen. docs/lifecycle.md draws it.
func TestStepFlowIsWhatTheStepDoes(t *testing.T) {
	seen := walk(20000)
	declared := map[lifecycle.Flow]bool{}
	for _, f := range lifecycle.StepFlow {
		declared[lifecycle.Flow{From: f.From, To: f.To}] = true
	}
	var missing, unseen []string
	for f := range seen {
		if !declared[f] {
			missing = append(missing, f.From.String()+" -> "+f.To.String())
		}
	}
	for f := range declared {
		if !seen[f] {
			unseen = append(unseen, f.From.String()+" -> "+f.To.String())
		}
	}
	sort.Strings(missing)
	sort.Strings(unseen)
	if len(missing) > 0 || len(unseen) > 0 {
		t.Errorf("the step made effects in a row that lifecycle.StepFlow lacks:\n%s\nand StepFlow has rows never seen:\n%s",
			strings.Join(missing, "\n"), strings.Join(unseen, "\n"))
	}
	doc, err := os.ReadFile("../../docs/lifecycle.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```mermaid\n"+lifecycle.StepMermaid()+"```") {
		t.Errorf("docs/lifecycle.md's step diagram differs; it should have this mermaid block:\n%s", lifecycle.StepMermaid())
	}
}
