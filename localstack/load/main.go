// Command load measures the running system (make dev) from the outside:
// it registers receivers, posts events at a steady rate, and reports
// sustained deliveries per second and ingest-to-first-attempt latency. In
// the same run it measures the ceiling: the same bodies POSTed by a plain Go
// client straight to the same kind of receiver.
//
//	make load                       # 200 warm-up events, then 300 over 10 accounts at 50/s
//	go run ./localstack/load -events 2000 -accounts 20 -rate 200 -account-rate 20
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/localstack/window"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/ratelimit"
	"github.com/gifq/webhooks/shared/store"
)

type options struct {
	api, dynamo, table        string
	events, accounts, workers int
	rate, accountRate         float64
	bodyBytes                 int
	warmup                    int
	row                       string // print one Markdown table row labelled so (make load-targets)
	profile                   string // the make dev pprof address: write a CPU profile of the run here
	profileOut                string
	profileSeconds            int
}

func main() {
	var o options
	dev := runningDev(os.Getenv)
	flag.StringVar(&o.api, "api", dev.API, "the API of make dev (default: the running make dev's, from its dev.json)")
	flag.StringVar(&o.dynamo, "dynamodb", dev.DynamoDB, "make dev's DynamoDB (to create the test accounts)")
	flag.StringVar(&o.table, "table", dev.Prefix, "make dev's table")
	flag.IntVar(&o.events, "events", 300, "events to post")
	flag.IntVar(&o.accounts, "accounts", 10, "accounts (one endpoint each); events are spread over them")
	flag.IntVar(&o.workers, "workers", 16, "concurrent producers")
	flag.Float64Var(&o.rate, "rate", 50, "events posted per second, all accounts together")
	flag.Float64Var(&o.accountRate, "account-rate", 0, "per-account delivery limit to set (0: leave the deployment's 5/s)")
	flag.IntVar(&o.bodyBytes, "body-bytes", 512, "approximate size of each event body")
	flag.IntVar(&o.warmup, "warmup", 200, "events sent through the whole path, unpaced and unmeasured, before the run (0: none; see warmUp)")
	flag.StringVar(&o.row, "row", "", "also print the figures as one Markdown table row with this label")
	flag.StringVar(&o.profile, "pprof", "", "make dev's GIFQ_PPROF_ADDR: take a CPU profile of the system while the events are posted")
	flag.StringVar(&o.profileOut, "pprof-out", "cpu.pprof", "where -pprof writes the profile")
	flag.IntVar(&o.profileSeconds, "pprof-seconds", 15, "length of the -pprof profile")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// dev is what load needs of a running make dev: the part of the dev.json it
// keeps in its data folder (DATA_DIR, default localstack/.data) that names
// its API, DynamoDB and table.
type dev struct {
	API      string `json:"api"`
	DynamoDB string `json:"dynamodb"`
	Prefix   string `json:"prefix"`
}

// runningDev reads the running make dev's dev.json, filling what it lacks
// with make dev's default addresses.
func runningDev(getenv func(string) string) dev {
	d := dev{API: "http://127.0.0.1:8080", DynamoDB: "127.0.0.1:8000", Prefix: "gifq-webhooks-dev"}
	dir := getenv("DATA_DIR")
	if dir == "" {
		if root, err := emulator.ModuleRoot(); err == nil {
			dir = filepath.Join(root, "localstack", ".data")
		}
	}
	var found dev
	if raw, err := os.ReadFile(filepath.Join(dir, "dev.json")); err == nil && json.Unmarshal(raw, &found) == nil {
		if found.API != "" {
			d.API = found.API
		}
		if found.DynamoDB != "" {
			d.DynamoDB = found.DynamoDB
		}
		if found.Prefix != "" {
			d.Prefix = found.Prefix
		}
	}
	d.DynamoDB = "http://" + d.DynamoDB
	return d
}

// sink is a receiver that notes when each event's first attempt arrived.
type sink struct {
	mu    sync.Mutex
	first map[string]time.Time
	total int
	url   string
}

func newSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{first: map[string]time.Time{}, url: "http://" + ln.Addr().String() + "/hook"}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/direct" { // the ceiling run: the same receiver, nothing noted
			w.WriteHeader(http.StatusNoContent)
			return
		}
		now := time.Now()
		id := r.Header.Get(webhook.HeaderEventID)
		s.mu.Lock()
		s.total++
		if _, ok := s.first[id]; !ok {
			s.first[id] = now
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	return s, nil
}

func (s *sink) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.first, s.total = map[string]time.Time{}, 0
}

func (s *sink) count() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.first), s.total
}

func body(i, size int) []byte {
	b := fmt.Sprintf(`{"event":"payout.fulfilled","payout_type":"gift_cards","subject_type":"order","recipient_uuid":"r-%08d","updated_at":"2026-11-30T05:00:00Z","pad":"`, i)
	for len(b) < size-2 {
		b += "x"
	}
	return []byte(b + `"}`)
}

func run(o options) error {
	ctx := context.Background()
	db, _ := emulator.Clients(o.dynamo, "http://127.0.0.1:1")
	st := store.New(db, o.table)
	rcv, err := newSink()
	if err != nil {
		return err
	}
	keys := make([]string, o.accounts)
	for i := range keys {
		a, err := st.CreateAccount(ctx, fmt.Sprintf("load-%d", i), o.accountRate)
		if err != nil {
			return fmt.Errorf("create account (is make dev running?): %w", err)
		}
		// The run measures the system's ceiling, not a producer's limit.
		if err := st.SetAccountIngestLimit(ctx, a.ID, ratelimit.Limit{Rate: 1e6, Burst: 1e6}); err != nil {
			return err
		}
		if _, keys[i], err = st.CreateAPIKey(ctx, a.ID); err != nil {
			return err
		}
		if code := post(o.api+"/v1/endpoints", keys[i], []byte(`{"url":"`+rcv.url+`"}`), nil); code != 201 {
			return fmt.Errorf("create endpoint: HTTP %d", code)
		}
	}

	if err := warmUp(ctx, o, st, rcv); err != nil {
		return err
	}

	// The system under test, and its CPU time from /proc around the run.
	cpuBefore, cpuErr := sampleTree(apiPort(o.api))
	profiled := profileDuring(o)
	posted := make([]time.Time, o.events)
	ids := make([]string, o.events)
	start := time.Now()
	produce(o, func(i int) {
		var out struct{ ID string }
		posted[i] = time.Now()
		if code := post(o.api+"/v1/events", keys[i%o.accounts], body(i, o.bodyBytes), &out); code != 202 {
			fmt.Fprintf(os.Stderr, "event %d: HTTP %d\n", i, code)
		}
		ids[i] = out.ID
	})
	postDone := time.Since(start)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if n, _ := rcv.count(); n >= o.events || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	delivered, requests := rcv.count()
	cpuAfter, err := sampleTree(apiPort(o.api))
	if err := profiled(); err != nil {
		fmt.Fprintln(os.Stderr, "load: profile:", err)
	}
	if cpuErr == nil {
		cpuErr = err
	}
	var lat []time.Duration
	var arrivals []time.Time
	rcv.mu.Lock()
	var last time.Time
	for i, id := range ids {
		if t, ok := rcv.first[id]; ok {
			arrivals = append(arrivals, t)
			lat = append(lat, t.Sub(posted[i]))
			if t.After(last) {
				last = t
			}
		}
	}
	rcv.mu.Unlock()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })

	// The ceiling: the same bodies from the same producers, straight to the same receiver.
	direct := strings.TrimSuffix(rcv.url, "/hook") + "/direct"
	cstart := time.Now()
	o2 := o
	o2.rate = 0 // as fast as it goes
	produce(o2, func(i int) { post(direct, "", body(i, o.bodyBytes), nil) })
	ceiling := float64(o.events) / time.Since(cstart).Seconds()

	fmt.Printf("events posted      %d over %d accounts in %s (%.0f/s asked)\n", o.events, o.accounts, postDone.Round(time.Millisecond), o.rate)
	fmt.Printf("delivered          %d (%d requests) in %s\n", delivered, requests, last.Sub(start).Round(time.Millisecond))
	fmt.Printf("sustained          %.1f deliveries/s\n", float64(delivered)/last.Sub(start).Seconds())
	fmt.Printf("ingest->1st attempt p50 %s  p90 %s  p99 %s  max %s\n", pct(lat, 50), pct(lat, 90), pct(lat, 99), pct(lat, 100))
	if cpuErr != nil {
		fmt.Printf("CPU per delivery   not measured: %v\n", cpuErr)
	} else if delivered > 0 {
		used := cpuAfter.sub(cpuBefore)
		per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(delivered) }
		fmt.Printf("CPU per delivery   %.2f ms: ours %.2f ms, emulators %.2f ms (%s; from /proc, the make dev tree)\n",
			per(used.ours+used.emulators), per(used.ours), per(used.emulators), used.split(per))
	}
	if o.row != "" && delivered > 0 && cpuErr == nil {
		used := cpuAfter.sub(cpuBefore)
		per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(delivered) }
		fmt.Printf("| %s | %d/%d | %.1f | %s / %s | %.2f (%.2f + %.2f) |\n", o.row, delivered, o.events,
			float64(delivered)/last.Sub(start).Seconds(), pct(lat, 50), pct(lat, 99),
			per(used.ours+used.emulators), per(used.ours), per(used.emulators))
	}
	if h := latencyHint(o, pct(lat, 99)); h != "" {
		fmt.Println(h)
	}
	fmt.Printf("busiest second     %d deliveries (per-account limit x %d accounts)\n", window.Busiest(arrivals, time.Second), o.accounts)
	fmt.Printf("ceiling            %.0f POSTs/s from a plain Go client with %d workers\n", ceiling, o.workers)
	fmt.Printf("system/ceiling     %.3f (at the asked rate; raise -rate to find the system's limit)\n", float64(delivered)/last.Sub(start).Seconds()/ceiling)
	return nil
}

// warmUp sends o.warmup events through the whole path and waits for their
// first attempts before the run is measured. A fresh make dev's first
// events are slower than the rest (connections to the emulators still to
// open, the SQS emulator's JavaScript still to compile, the heap still to
// grow), so the producers' posts bunch, and an account posted to at its
// rate limit (make load's default: 10 accounts at 50/s is the contract's 5/s
// each) drains such a bunch only at that limit: a first run against a fresh
// make dev reads a p99 of a second or more. The warm-up account's limit is
// lifted.
func warmUp(ctx context.Context, o options, st *store.Store, rcv *sink) error {
	if o.warmup <= 0 {
		return nil
	}
	a, err := st.CreateAccount(ctx, "load-warmup", 1e6)
	if err != nil {
		return fmt.Errorf("create warm-up account (is make dev running?): %w", err)
	}
	if err := st.SetAccountIngestLimit(ctx, a.ID, ratelimit.Limit{Rate: 1e6, Burst: 1e6}); err != nil {
		return err
	}
	_, key, err := st.CreateAPIKey(ctx, a.ID)
	if err != nil {
		return err
	}
	if code := post(o.api+"/v1/endpoints", key, []byte(`{"url":"`+rcv.url+`"}`), nil); code != 201 {
		return fmt.Errorf("create warm-up endpoint: HTTP %d", code)
	}
	w := o
	w.events, w.rate = o.warmup, 0
	start := time.Now()
	produce(w, func(i int) { post(o.api+"/v1/events", key, body(i, o.bodyBytes), nil) })
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n, _ := rcv.count(); n >= o.warmup {
			break
		}
	}
	n, _ := rcv.count()
	rcv.reset()
	fmt.Printf("warm-up            %d events through the whole path in %s, not measured (-warmup 0: none)\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}

// latencyHint explains a p99 of a second or so when each account was posted
// to at (or near) its delivery limit: its deliveries leave in their rate
// slots' whole seconds, and a bunch of posts drains only at the limit. It
// is "" otherwise.
func latencyHint(o options, p99 time.Duration) string {
	limit := o.accountRate
	if limit <= 0 {
		limit = config.Defaults().RatePerSecond // the deployment's, unless make dev was given RATE_LIMIT_PER_SECOND
	}
	perAccount := o.rate / float64(max(o.accounts, 1))
	if o.rate > 0 && perAccount < 0.9*limit || p99 < time.Second/2 {
		return ""
	}
	posted := "unpaced"
	if o.rate > 0 {
		posted = fmt.Sprintf("at %.3g/s", perAccount)
	}
	return fmt.Sprintf("hint               p99 near or over half a second: each account was posted to %s against its limit of %.3g/s,\n"+
		"                   so its deliveries leave in their rate slots' whole seconds (docs/lifecycle.md, \"Rate slots\"):\n"+
		"                   a slow moment (a cold make dev, a busy machine) bunches posts into a backlog that drains at the limit.\n"+
		"                   -account-rate %g (or fewer -rate / more -accounts) measures the pipeline instead.",
		posted, limit, 2*limit)
}

// apiPort is the TCP port of the API's URL (80 when it names none).
func apiPort(api string) int {
	u, err := url.Parse(api)
	if err != nil {
		return 0
	}
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	return 80
}

// produce calls f(i) for every event from o.workers goroutines, paced at o.rate (0: unpaced).
func produce(o options, f func(int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < o.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	start := time.Now()
	for i := 0; i < o.events; i++ {
		if o.rate > 0 {
			if d := time.Until(start.Add(time.Duration(float64(i) / o.rate * float64(time.Second)))); d > 0 {
				time.Sleep(d)
			}
		}
		next <- i
	}
	close(next)
	wg.Wait()
}

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func post(url, key string, b []byte, out any) int {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return resp.StatusCode
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := (len(d)*p + 99) / 100
	return d[min(max(i-1, 0), len(d)-1)].Round(100 * time.Microsecond)
}
