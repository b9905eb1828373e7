// Command sim is a discrete-event simulation of the deployed delivery
// system over a day of issue 11's workload: API Gateway, the api function,
// the delivery queue and its Lambda event source, the deliver function
// with the real decisions (shared/lifecycle's Decide and Settle,
// shared/retry's schedule and classification), DynamoDB's hot partitions
// and the day's bill, for each waiting design and isolation option.
// docs/scale.md explains the model and its results.
//
//	go run ./localstack/sim [-scale 10] [-seed 1] [-only BC]
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
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
			sim := NewSim(o, w, *scale, *seed)
			if *trace {
				sim.trace = func(f string, a ...any) { fmt.Printf(o.Name+" "+f, a...) }
			}
			start := time.Now()
			results[i] = sim.Run(*drain)
			results[i].RunSeconds = time.Since(start).Seconds()
		}()
	}
	wg.Wait()
	fmt.Printf("issue 11's day at scale %g: %.0f M deliveries, %d accounts (Zipf s=%g), %.0f%% of endpoints down %s-%s, %.0fk events burst at %s, seed %d\n\n",
		*scale, w.DeliveriesPerDay**scale/1e6, w.Accounts, w.ZipfS, 100*w.DownFraction, clock(w.OutageAt), clock(w.OutageAt+w.OutageFor), w.BurstEvents/1e3, clock(w.BurstAt), *seed)
	if *md {
		markdown(os.Stdout, opts, results)
		return
	}
	report(os.Stdout, opts, results)
}

// Table is the options compared: today's stack; then the four waiting
// designs with the same isolation settings; then the proposal (BC) with one
// setting at a time taken back.
func Table() []Options {
	today := Defaults()
	api := today
	api.Name, api.APIRate, api.APIBurst = "A api10k", today.AccountAPIRate, today.AccountAPIBurst
	isolated := func(name string, w Waiting) Options {
		o := api
		o.Name, o.Waiting = name, w
		o.MaxConcurrency, o.Breaker, o.PerKeyRate, o.KeepLateSlots = 300, 5, 100, true
		return o
	}
	t := []Options{today, api,
		isolated("A iso", Hidden), isolated("B iso", Delayed), isolated("C iso", Due), isolated("BC iso", Mixed)}
	vary := func(name string, f func(*Options)) {
		o := isolated(name, Mixed)
		f(&o)
		t = append(t, o)
	}
	vary("BC iso -late", func(o *Options) { o.KeepLateSlots = false })
	vary("BC iso -brk", func(o *Options) { o.Breaker = 0 })
	vary("BC iso -key", func(o *Options) { o.PerKeyRate = 0 })
	vary("BC iso c50", func(o *Options) { o.MaxConcurrency = 50 })
	vary("BC iso c1000", func(o *Options) { o.MaxConcurrency = 1000 })
	vary("BC iso c150", func(o *Options) { o.MaxConcurrency = 150 })
	vary("BC iso c150 -late", func(o *Options) { o.MaxConcurrency, o.KeepLateSlots = 150, false })
	vary("BC iso b1", func(o *Options) { o.BatchSize = 1 })
	vary("BC iso q4", func(o *Options) { o.Queues, o.MaxConcurrency = 4, 75 })
	return t
}

func report(out *os.File, opts []Options, rs []Metrics) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "option\tbinds first\tat\tpeak in flight\tpeak λ conc\thot WCU/s\tp50 s\tp99 s\tDLQ\tdelivered M\tleft k\tSQS M\tλ M\tWCU M\tRCU M\tAPI M\t$/day\t$/M deliv\trun s\t")
	for i, o := range opts {
		m := rs[i]
		first, at := firstBind(m)
		c := m.Bill()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%.2f\t%.1f\t%.0f\t%.2f\t%.0f\t%.1f\t%.1f\t%.0f\t%.0f\t%.1f\t%.0f\t%.2f\t%.0f\t\n",
			o.Name, first, at, m.PeakInFlight, m.PeakConcurrency, m.HotWCU, m.P50, m.P99, m.DLQ, m.Delivered/1e6, m.Left/1e3,
			m.SQSRequests/1e6, (m.Invocations+m.APIRequests)/1e6, m.WCU/1e6, m.RCU/1e6, m.APIRequests/1e6, c.Total(), c.Total()/(m.Delivered/1e6), m.RunSeconds)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nEvery limit reached, in order (hottest partition named):")
	for i, o := range opts {
		m := rs[i]
		var parts []string
		for _, b := range m.Binds {
			parts = append(parts, clock(b.At)+" "+b.What)
		}
		c := m.Bill()
		fmt.Fprintf(out, "- %s: hottest %s %.0f WCU/s at %s; 429s %.0fk; cost API $%.0f, Lambda $%.0f, SQS $%.0f, DynamoDB $%.0f\n  %s\n",
			o.Name, m.HotWCUName, m.HotWCU, clock(m.HotWCUAt), m.Throttled429/1e3, c.API, c.Lambda, c.SQS, c.DynamoDB, strings.Join(parts, "; "))
	}
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
	fmt.Fprintln(out, "| option | binds first | at | peak in flight | peak Lambda conc. | hottest partition WCU/s | p50 s | p99 s | DLQ | delivered M | SQS M calls | Lambda M inv. | WCU M | RCU M | $/day | $/M deliveries |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for i, o := range opts {
		m := rs[i]
		first, at := firstBind(m)
		c := m.Bill()
		fmt.Fprintf(out, "| %s | %s | %s | %.0f | %.0f | %.0f | %.2f | %.1f | %.0f | %.2f | %.1f | %.1f | %.0f | %.0f | %.0f | %.2f |\n",
			o.Name, first, at, m.PeakInFlight, m.PeakConcurrency, m.HotWCU, m.P50, m.P99, m.DLQ, m.Delivered/1e6,
			m.SQSRequests/1e6, (m.Invocations+m.APIRequests)/1e6, m.WCU/1e6, m.RCU/1e6, c.Total(), c.Total()/(m.Delivered/1e6))
	}
}
