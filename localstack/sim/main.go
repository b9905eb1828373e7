// Command sim is a discrete-event simulation of the deployed delivery
// system over the reference day: API Gateway, the api function,
// the delivery queues (fast and slow lanes, SQS fair queues) and their
// Lambda event sources, the deliver function with the real decisions
// (lifecycle.Decide and Settle, BreakerAfterAttempt and BreakerOf, LaneOf,
// FreeSlots; ratelimit.Book; retry's schedule and classification),
// DynamoDB's partitions as the store keys them today, billed with
// shared/cost's per-step units, and the day's bill, for each option.
// docs/scale.md explains the model and its results.
//
//	go run ./localstack/sim [-scale 10] [-seed 1] [-only 'BC iso today'] [-markdown]
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

func main() {
	scale := flag.Float64("scale", 1, "multiply the day's load (accounts keep their share; their set rates follow)")
	seed := flag.Uint64("seed", 1, "random seed (the down endpoints, jitter)")
	only := flag.String("only", "", "run only these options: a comma-separated list of names, or a part of names")
	drain := flag.Float64("drain", 2*3600, "seconds simulated after the day, for retries to finish")
	md := flag.Bool("markdown", false, "print the table as Markdown (for docs/scale.md)")
	par := flag.Int("parallel", 2, "options run at once")
	trace := flag.Bool("trace", false, "print each run's state every half hour (with -only, one option)")
	prof := flag.String("cpuprofile", "", "write a CPU profile here")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			_ = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}

	var opts []Options
	for _, o := range Table() {
		if selected(o.Name, *only) {
			opts = append(opts, o)
		}
	}
	w := DefaultWorkload()
	results := make([]Metrics, len(opts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(*par, 1))
	for i, o := range opts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sim := NewSim(o, o.Workload(w, *drain), *scale*max(o.Scale, 1), *seed)
			if *trace {
				sim.trace = func(f string, a ...any) { fmt.Printf(o.Name+" "+f, a...) }
			}
			start := time.Now()
			results[i] = sim.Run(*drain)
			results[i].RunSeconds = time.Since(start).Seconds()
			results[i].DayM = w.DeliveriesPerDay * *scale * max(o.Scale, 1) / 1e6
		}()
	}
	wg.Wait()
	fmt.Printf("the reference day at scale %g (times a row's own): %.0f M deliveries, %d accounts (Zipf s=%g), %.0f%% of endpoints down %s-%s (dead1%%: 1%% of accounts all day), %.0fk events burst at %s, seed %d\n\n",
		*scale, w.DeliveriesPerDay**scale/1e6, w.Accounts, w.ZipfS, 100*w.DownFraction, clock(w.OutageAt), clock(w.OutageAt+w.OutageFor), w.BurstEvents/1e3, clock(w.BurstAt), *seed)
	if *md {
		markdown(os.Stdout, opts, results)
		fmt.Println()
		notes(os.Stdout, opts, results)
		return
	}
	report(os.Stdout, opts, results)
}

// Table is the options compared: the reference stack; then the four waiting
// designs with the same isolation settings; then that proposal (BC) with
// one setting at a time taken back; then today's shipped stack:
// as it is, with 1 % of the accounts' endpoints dead all day, and at ten
// times the load: as it is, sized for it, sized with a finer limiter
// interval (a code change), and that without the outage and the burst.
func Table() []Options {
	old := baseline()
	api := old
	api.Name, api.APIRate, api.APIBurst = "A api10k", old.AccountAPIRate, old.AccountAPIBurst
	isolated := func(name string, w Waiting) Options {
		o := api
		o.Name, o.Waiting = name, w
		o.MaxConcurrency, o.Breaker, o.PerKeyRate, o.PerKeyBurst, o.KeepLateSlots = 300, true, 100, 200, true
		return o
	}
	t := []Options{old, api,
		isolated("A iso", Hidden), isolated("B iso", Delayed), isolated("C iso", Due), isolated("BC iso", Mixed)}
	vary := func(name string, f func(*Options)) {
		o := isolated(name, Mixed)
		f(&o)
		t = append(t, o)
	}
	vary("BC iso -late", func(o *Options) { o.KeepLateSlots = false })
	vary("BC iso -brk", func(o *Options) { o.Breaker = false })
	vary("BC iso -key", func(o *Options) { o.PerKeyRate = 0 })
	vary("BC iso c50", func(o *Options) { o.MaxConcurrency = 50 })
	vary("BC iso c1000", func(o *Options) { o.MaxConcurrency = 1000 })
	vary("BC iso c150", func(o *Options) { o.MaxConcurrency = 150 })
	vary("BC iso c150 -late", func(o *Options) { o.MaxConcurrency, o.KeepLateSlots = 150, false })
	vary("BC iso b1", func(o *Options) { o.BatchSize = 1 })
	vary("BC iso q4", func(o *Options) { o.Queues, o.MaxConcurrency = 4, 75 })

	today := Today()
	dead := today
	dead.Name, dead.DeadAccounts = "BC iso dead1%", 0.01
	today10 := today
	today10.Name, today10.Scale = "BC iso 10x today", 10
	steady := Sized10x()
	steady.Name, steady.Steady = "BC iso 10x steady", true
	return append(t, today, dead, today10, Sized10x(), steady)
}

// Sized10x is today's stack with what a day of 1 billion deliveries needs
// (docs/scale.md, "Results: today's design"): the settings and quota
// requests that keep every quota's peak under its limit in this model.
func Sized10x() Options {
	o := Today()
	o.Name, o.Scale = "BC iso 10x", 10
	// Producers post ~6,500 events/s at the peak: the stage throttle to
	// 8,000 rps (burst 2,000), under the account's 10,000.
	o.APIRate, o.APIBurst = 8_000, 2_000
	// ~2,000 concurrent batches at the peak: three fast-lane queues with a
	// mapping each at its most (1,000), the slow lane at 100, and a Lambda
	// concurrency quota of 4,000 asked for (the default is 1,000).
	o.Queues, o.MaxConcurrency, o.SlowConcurrency, o.AccountConcurrency = 3, 1_000, 100, 4_000
	// The paced lane at its most (1,000): the outage's held deliveries,
	// booked again at its end, would hold ~700 of it (estimated).
	o.PacedConcurrency = 1_000
	// The largest accounts' endpoints take ~120 deliveries/s each at the
	// peak, ~40 in flight at a mean answer of 0.3 s: a cap of 5 holds them
	// to ~16/s.
	o.EndpointCap = 50
	// ~37,000 sweep index writes a second at the peak: 64 shards.
	o.SweepShards = 64
	return o
}

// Workload is the day this row runs: dead accounts replace the outage; a
// steady day has neither outage nor burst.
func (o Options) Workload(w Workload, drain float64) Workload {
	if o.Steady {
		w.DownFraction, w.BurstEvents = 0, 0
	}
	if o.DeadAccounts > 0 {
		w.DownFraction, w.DeadAccounts = 0, o.DeadAccounts
		w.OutageAt, w.OutageFor = 0, day+drain
	}
	return w
}

func report(out *os.File, opts []Options, rs []Metrics) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "option\tday M\tbinds first\tat\ttightest quota\tuse\tpeak in flight\tpeak λ conc\thot WCU/s\thot RCU/s\tp50 s\tp99 s\tp99 small s\tDLQ\tdelivered M\tleft k\tlane moves M\tSQS M\tλ M\tWCU M\tRCU M\tAPI M\t$/day\t$/M deliv\trun s\t")
	for i, o := range opts {
		m := rs[i]
		first, at := firstBind(m)
		c := m.Bill()
		u, hotW, hotR := m.Tightest(), m.Peak(partitionWrites), m.Peak(partitionReads)
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%.0f%%\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.1f\t%.1f\t%.0f\t%.2f\t%.0f\t%.2f\t%.1f\t%.1f\t%.0f\t%.0f\t%.1f\t%.0f\t%.2f\t%.0f\t\n",
			o.Name, m.DayM, first, at, u.Quota, 100*u.Ratio(), m.PeakInFlight, m.PeakConcurrency, hotW.Peak, hotR.Peak, m.P50, m.P99, m.P99Small, m.DLQ, m.Delivered/1e6, m.Left/1e3,
			m.LaneMoves/1e6, m.SQSRequests/1e6, (m.Invocations+m.APIRequests)/1e6, m.WCU/1e6, m.RCU/1e6, m.APIRequests/1e6, c.Total(), c.Total()/(m.Delivered/1e6), m.RunSeconds)
	}
	tw.Flush()
	fmt.Fprintln(out)
	notes(out, opts, rs)
}

// notes lists, per row, every limit reached in order and each quota's peak
// use against its limit.
func notes(out *os.File, opts []Options, rs []Metrics) {
	fmt.Fprintln(out, "Every limit reached, in order, and each quota's peak use:")
	for i, o := range opts {
		m := rs[i]
		var parts []string
		for _, b := range m.Binds {
			parts = append(parts, clock(b.At)+" "+b.What)
		}
		c, hotW, hotR := m.Bill(), m.Peak(partitionWrites), m.Peak(partitionReads)
		fmt.Fprintf(out, "- %s: hottest writes %s %.0f WCU/s at %s, reads %s %.0f RCU/s at %s; 429s %.0fk; breakers opened %.0f; cost API $%.0f, Lambda $%.0f, SQS $%.0f, DynamoDB $%.0f\n  limits reached: %s\n  peak use: %s\n",
			o.Name, hotW.What, hotW.Peak, clock(hotW.At), hotR.What, hotR.Peak, clock(hotR.At), m.Throttled429/1e3, m.BreakersOpened,
			c.API, c.Lambda, c.SQS, c.DynamoDB, strings.Join(parts, "; "), uses(m))
	}
}

// uses lists each quota's peak use against its limit, tightest first.
func uses(m Metrics) string {
	us := append([]Use(nil), m.Uses...)
	sort.SliceStable(us, func(i, j int) bool { return us[i].Ratio() > us[j].Ratio() })
	var parts []string
	for _, u := range us {
		parts = append(parts, fmt.Sprintf("%s %.0f/%.0f (%.0f%%, %s)", u.Name(), u.Peak, u.Limit, 100*u.Ratio(), clock(u.At)))
	}
	return strings.Join(parts, "; ")
}

func short(what string) string {
	if i := strings.Index(what, " ("); i > 0 {
		return what[:i]
	}
	return what
}

// selected reports whether an option named name is in the -only list: its
// exact name, or, when no entry is an exact name, a part of it.
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	exact := false
	for _, e := range strings.Split(only, ",") {
		for _, o := range Table() {
			exact = exact || o.Name == e
		}
		if e == name {
			return true
		}
	}
	return !exact && strings.Contains(name, only)
}

// firstBind names the quota that bound first in a run and when ("none").
func firstBind(m Metrics) (what, at string) {
	if len(m.Binds) == 0 {
		return "none", ""
	}
	return short(m.Binds[0].What), clock(m.Binds[0].At)
}

// markdown prints the results table as docs/scale.md shows it.
func markdown(out *os.File, opts []Options, rs []Metrics) {
	fmt.Fprintln(out, "| option | deliveries a day | binds first | at | tightest quota (peak use) | peak in flight | peak Lambda conc. | hottest WCU/s | hottest RCU/s | p50 s | p99 s | p99 small accounts s | DLQ | delivered M | lane moves M | SQS M calls | WCU M | RCU M | $/day | $/M deliveries |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for i, o := range opts {
		m := rs[i]
		first, at := firstBind(m)
		c := m.Bill()
		u, hotW, hotR := m.Tightest(), m.Peak(partitionWrites), m.Peak(partitionReads)
		fmt.Fprintf(out, "| %s | %.0f M | %s | %s | %s (%.0f %%) | %.0f | %.0f | %.0f | %.0f | %.2f | %.1f | %.1f | %.0f | %.2f | %.2f | %.1f | %.0f | %.0f | %.0f | %.2f |\n",
			o.Name, m.DayM, first, at, u.Name(), 100*u.Ratio(), m.PeakInFlight, m.PeakConcurrency, hotW.Peak, hotR.Peak, m.P50, m.P99, m.P99Small, m.DLQ, m.Delivered/1e6,
			m.LaneMoves/1e6, m.SQSRequests/1e6, m.WCU/1e6, m.RCU/1e6, c.Total(), c.Total()/(m.Delivered/1e6))
	}
}
