package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/store"
)

// checker reads the table and the receiver after a run and holds them to
// the contract's invariants.
type checker struct {
	store *store.Store
	cfg   config.Config
	// allowance is one sweep: its interval and its grace (a delivery whose
	// message was lost is re-queued within them), the attempt it then
	// makes (the delivery timeout), and the error of the clock the times
	// were read from (clockError).
	allowance time.Duration
	kindOf    map[string]string
	pathOf    map[string]string // endpoint id -> the receiver's path
	trace     string            // the system's trace (trace.go), to explain late deliveries
	rv        *receiver
	final     map[string]bool // seen final while draining
}

// pending counts the deliveries not yet final (pending, or failed with the
// dead letter not yet sent).
func (c *checker) pending(ctx context.Context, ds []tracked) (int, error) {
	n := 0
	for _, d := range ds {
		if c.final[d.id] {
			continue
		}
		got, err := c.store.GetDelivery(ctx, d.id)
		if err != nil {
			return 0, fmt.Errorf("delivery %s: %w", d.id, err)
		}
		if got.Status == domain.StatusPending || got.DLQPending {
			n++
		} else {
			c.final[d.id] = true
		}
	}
	return n, nil
}

// read is every delivery with its attempt log, four at a time.
func (c *checker) read(ctx context.Context, ds []tracked) ([]domain.Delivery, [][]domain.Attempt, error) {
	out, logs, errs := make([]domain.Delivery, len(ds)), make([][]domain.Attempt, len(ds)), make([]error, len(ds))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, d := range ds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], logs[i], errs[i] = c.store.DeliveryWithAttempts(ctx, d.id)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("delivery %s: %w", ds[i].id, err)
		}
	}
	return out, logs, nil
}

// check prints the figures and reports whether every invariant held.
func (c *checker) check(ctx context.Context, ds []tracked, events int, faults map[string]int, restarts int64) (bool, error) {
	all, logs, err := c.read(ctx, ds)
	if err != nil {
		return false, err
	}
	traced, _, err := readTrace(c.trace)
	if err != nil {
		return false, err
	}
	ok, shown := true, 0
	broke := func(format string, args ...any) {
		ok = false
		if shown++; shown <= 20 { // the first few; the counts below say how many
			fmt.Printf("  BROKEN: "+format+"\n", args...)
		}
	}
	var (
		late, pending, overEight, expiredHealthy int
		lostSweeps                               int // final past one sweep, within one more for each send of theirs lost
		latest                                   time.Duration
		latestID                                 string
		perSeries                                = map[int]int{} // attempts in a series -> series
		lateOnes                                 []int
		outcomes                                 = map[string]map[string]int{}
	)
	for i, d := range all {
		kind := c.kindOf[d.EndpointID]
		if outcomes[kind] == nil {
			outcomes[kind] = map[string]int{}
		}
		series := map[int]int{}
		for _, a := range logs[i] {
			if a.Kind == domain.AttemptAuto || a.Kind == domain.AttemptInterrupted {
				series[a.Series]++
			}
		}
		for s, n := range series {
			perSeries[n]++
			if n > c.cfg.Retry.MaxAttempts() {
				overEight++
				broke("delivery %s (%s): %d attempts in series %d", d.ID, kind, n, s)
			}
		}
		if d.Attempts > c.cfg.Retry.MaxAttempts() {
			overEight++
			broke("delivery %s (%s): counts %d attempts", d.ID, kind, d.Attempts)
		}
		if d.Status == domain.StatusPending || d.DLQPending {
			pending++
			outcomes[kind]["pending"]++
			broke("delivery %s (%s) still %s at the end (attempts %d, next %s)", d.ID, kind, d.Status, d.Attempts, domain.Time(d.NextAttemptAt).Format(time.RFC3339))
			continue
		}
		outcome := string(d.Status)
		if d.FailReason != "" {
			outcome += ":" + string(d.FailReason)
		}
		outcomes[kind][outcome]++
		final := domain.Time(max(d.DeliveredAt, d.FailedAt))
		deadline := lifecycle.Deadline(d, c.cfg.Retry, c.cfg.DeliveryTimeout)
		past := final.Sub(deadline)
		if past > latest || latestID == "" {
			latest, latestID = past, d.ID
		}
		sweeps := max(1, lostNear(traced[d.ID], logs[i], deadline, c.allowance))
		switch allowed := time.Duration(sweeps) * c.allowance; {
		case past > allowed:
			late++
			lateOnes = append(lateOnes, i)
			broke("delivery %s (%s) final %s after its deadline (more than %d sweep(s), %s)", d.ID, kind, past.Round(time.Millisecond), sweeps, allowed)
		case past > c.allowance:
			lostSweeps++
		}
		if d.FailReason == domain.ReasonEventExpired && kind == "healthy" {
			expiredHealthy++
			broke("delivery %s to a healthy endpoint ended event_expired", d.ID)
		}
	}
	c.rv.mu.Lock()
	concurrent, dupes, requests := len(c.rv.concurrent), 0, c.rv.total
	for _, n := range c.rv.ok {
		dupes += max(n-1, 0)
	}
	for key, n := range c.rv.concurrent {
		broke("%d attempts of one delivery at once (%s)", n, key)
	}
	c.rv.mu.Unlock()

	fmt.Printf("soak: events accepted %d, deliveries %d, requests at the receivers %d, restarts of the killed process %d\n", events, len(all), requests, restarts)
	fmt.Printf("  faults injected: %s\n", joinCounts(faults))
	fmt.Printf("  final by deadline + one sweep (%s), one more for each of its messages lost near it: %d of %d (%d needed the more); the latest %s against its deadline (%s)\n",
		c.allowance, len(all)-late-pending, len(all), lostSweeps, signed(latest), latestID)
	fmt.Printf("  series by attempts: %s; over %d: %d\n", joinInts(perSeries), c.cfg.Retry.MaxAttempts(), overEight)
	fmt.Printf("  concurrent attempts of one delivery: %d; duplicates at the receivers (2xx more than once, reported): %d\n", concurrent, dupes)
	fmt.Printf("  event_expired to healthy endpoints: %d; still pending at the end: %d\n", expiredHealthy, pending)
	for _, kind := range append(append([]string{}, kinds...), "") {
		if o := outcomes[kind]; len(o) > 0 {
			name := kind
			if name == "" {
				name = "(unknown)"
			}
			fmt.Printf("  %-12s %s\n", name, joinCounts(o))
		}
	}
	if len(lateOnes) > 0 {
		c.explain(all, logs, lateOnes)
	}
	return ok, nil
}

// explainAtMost is how many late deliveries the checker explains in full.
const explainAtMost = 40

// explain prints the timeline of each late delivery (the first
// explainAtMost): the trace's sends, receives, visibility changes and
// faults, the attempt log, the receiver's requests and the clock's jumps;
// then, for all of them, the largest wait of a message past its due time
// (the queue's backlog) and what the last attempt started after.
func (c *checker) explain(all []domain.Delivery, logs [][]domain.Attempt, late []int) {
	byDelivery, jumps, err := readTrace(c.trace)
	if err != nil {
		fmt.Printf("  (no trace: %v)\n", err)
		return
	}
	fmt.Printf("  late deliveries explained (times from ingest; the table's times are the functions' clock, the rest real):\n")
	causes := map[string]int{}
	defer func() { fmt.Printf("  late deliveries by cause: %s\n", joinCounts(causes)) }()
	for n, i := range late {
		d := all[i]
		deadline := lifecycle.Deadline(d, c.cfg.Retry, c.cfg.DeliveryTimeout)
		final := domain.Time(max(d.DeliveredAt, d.FailedAt))
		start := domain.Time(d.CreatedAt)
		lines := byDelivery[d.ID]
		lag, lagAt := queueLag(lines)
		var lastStart time.Time
		for _, a := range logs[i] {
			if t := domain.Time(a.StartedAt); t.After(lastStart) {
				lastStart = t
			}
		}
		started := "no attempt"
		if !lastStart.IsZero() {
			started = "its last attempt started " + signed(lastStart.Sub(deadline))
		}
		cause, why := lateCause(lines, deadline)
		causes[cause]++
		fmt.Printf("    %s (%s) %s %s, %d attempts, %d throttles: final %s past its deadline, %s; %s; the longest a message waited past its due time %s (%s lane)\n",
			d.ID, c.kindOf[d.EndpointID], d.Status, d.FailReason, d.Attempts, d.Throttles, final.Sub(deadline).Round(time.Millisecond),
			started, why, lag.Round(time.Millisecond), lagAt)
		if n >= explainAtMost {
			continue
		}
		var evs []event
		evs = append(evs, event{start, "created (ingest)"}, event{final, "final: " + string(d.Status) + " " + string(d.FailReason)})
		if d.SeriesAt != 0 && d.SeriesAt != d.CreatedAt {
			evs = append(evs, event{domain.Time(d.SeriesAt), "series start"})
		}
		for _, l := range lines {
			evs = append(evs, event{time.UnixMilli(l.At), fmt.Sprintf("%s [%s] %s (clock %+dms)", l.What, l.Lane, l.Detail, l.Offset)})
		}
		for _, a := range logs[i] {
			at := domain.Time(a.StartedAt)
			evs = append(evs, event{at, fmt.Sprintf("attempt %s #%d series %d starts", a.Kind, a.Number, a.Series)},
				event{at.Add(time.Duration(a.DurationMs) * time.Millisecond), fmt.Sprintf("attempt #%d ends: %s %d %s", a.Number, a.Outcome, a.StatusCode, a.ErrorClass)})
		}
		c.rv.mu.Lock()
		for _, r := range c.rv.log[c.eventOf(d)] {
			evs = append(evs, event{r.at, "receiver: request in"}, event{r.end, fmt.Sprintf("receiver: answered %d", r.code)})
		}
		c.rv.mu.Unlock()
		for _, j := range jumps {
			if at := time.UnixMilli(j.At); at.After(start.Add(-5*time.Second)) && at.Before(final.Add(5*time.Second)) {
				evs = append(evs, event{at, "clock jumps to " + j.Detail})
			}
		}
		fmt.Print(timeline(start, deadline, c.allowance, evs))
	}
}

// eventOf is the receiver's key of d's requests.
func (c *checker) eventOf(d domain.Delivery) string {
	return d.EventID + "|" + c.pathOf[d.EndpointID]
}

// queueLag is the longest a message of the trace waited past its due time
// (sent at t with delay s: due at t+s) before its first receive, and on
// which lane.
func queueLag(lines []traceLine) (time.Duration, string) {
	var lag time.Duration
	var at string
	due := map[string]time.Time{} // lane and message (gen, hops) -> due
	for _, l := range lines {
		key := l.Lane + " " + messageOf(l.Detail)
		switch l.What {
		case "send":
			if _, ok := due[key]; !ok {
				due[key] = time.UnixMilli(l.At).Add(time.Duration(delayOf(l.Detail)) * time.Second)
			}
		case "receive":
			if t, ok := due[key]; ok && strings.Contains(l.Detail, "count=1") {
				if w := time.UnixMilli(l.At).Sub(t); w > lag {
					lag, at = w, l.Lane
				}
			}
		}
	}
	return lag, at
}

// lostNear counts a delivery's messages lost from an allowance before its
// deadline on: its sends lost (answered OK, never queued) and its attempts
// whose process was killed (logged interrupted by the next claim). Nothing
// tells such a message from one waiting in the queue, or an attempt from
// one still in flight, sooner than a sweep (its grace and interval), so
// each costs the delivery one, the sweeper's own re-queue too. One lost
// costs the one sweep the allowance has; two in a row, two.
func lostNear(lines []traceLine, attempts []domain.Attempt, deadline time.Time, allowance time.Duration) int {
	from, n := deadline.Add(-allowance), 0
	for _, l := range lines {
		if l.What == faultLostSend && time.UnixMilli(l.At).After(from) {
			n++
		}
	}
	for _, a := range attempts {
		if a.Kind == domain.AttemptInterrupted && domain.Time(a.StartedAt).After(from) {
			n++
		}
	}
	return n
}

// lateCause names what made a delivery late, from its trace: sends lost
// (the sweeper's re-queues among them: each lost one costs a sweep), or
// put-backs after its deadline (waits without an attempt: the breaker's,
// the in-flight cap's, a Retry-After's), else the queue.
func lateCause(lines []traceLine, deadline time.Time) (cause, why string) {
	var lost, lostRequeues, putBacks int
	for _, l := range lines {
		msg := messageOf(l.Detail)
		switch {
		case l.What == faultLostSend && strings.HasSuffix(msg, "hops=0") && !strings.HasPrefix(msg, "gen=1 "):
			lostRequeues++
			lost++
		case l.What == faultLostSend:
			lost++
		case l.What == "send" && l.Lane != "dlq" && !strings.HasSuffix(msg, "hops=0") && time.UnixMilli(l.At).After(deadline):
			putBacks++
		}
	}
	why = fmt.Sprintf("%d sends lost (%d of them the sweeper's re-queues), put back %d times after its deadline", lost, lostRequeues, putBacks)
	switch {
	case lostRequeues > 0:
		return "a lost re-queue", why
	case putBacks > 0:
		return "waits past the deadline", why
	case lost > 0:
		return "a lost send", why
	}
	return "other", why
}

// messageOf is a trace detail's message: "gen=N hops=M".
func messageOf(detail string) string {
	i := strings.Index(detail, "gen=")
	if i < 0 {
		return ""
	}
	f := strings.Fields(detail[i:])
	if len(f) < 2 {
		return ""
	}
	return f[0] + " " + f[1]
}

// delayOf is a send's delay in seconds.
func delayOf(detail string) int {
	var s int
	if i := strings.Index(detail, "delay="); i >= 0 {
		fmt.Sscanf(detail[i+len("delay="):], "%ds", &s)
	}
	return s
}

// clockError is how far apart two times read from the faulty clock can be
// beyond their true distance: it jumps within ±maxJump.
func clockError(faults float64) time.Duration {
	if faults <= 0 {
		return 0
	}
	return 2 * maxJump
}

func signed(d time.Duration) string {
	if d < 0 {
		return (-d).Round(time.Millisecond).String() + " before"
	}
	return d.Round(time.Millisecond).String() + " after"
}

func joinCounts(m map[string]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func joinInts(m map[int]int) string {
	var keys []int
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d:%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
