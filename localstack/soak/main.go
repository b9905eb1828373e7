// Command soak runs the whole system (make dev's runner: the api, deliver,
// sweeper and scheduler functions in one process, against the emulators)
// under continuous traffic from several accounts to endpoints that are
// healthy, slow, hanging, refusing, flapping, failing then recovering, gone
// (410) and throttling (429 with Retry-After), with faults injected at the
// functions' DynamoDB, SQS and clock ports by a seeded generator; then an
// invariant checker reads the table and the receivers, prints its figures
// and exits 1 when an invariant broke (docs/testing.md).
//
//	go run ./localstack/soak -duration 3m -rate 4 -faults 1 [-seed N]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/shared/config"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

const table = "soak"

type options struct {
	duration, sweepEvery, sweepGrace time.Duration
	rate, faults                     float64
	accounts, pollers, busy          int
	seed                             uint64
	retry, trace, systemLog          string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-system" {
		if err := runSystem(); err != nil {
			fmt.Fprintln(os.Stderr, "soak system:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.DurationVar(&o.duration, "duration", 3*time.Minute, "how long traffic runs (then the system drains)")
	flag.Float64Var(&o.rate, "rate", 4, "requests a second to the API (single events, batches of 5, fan-outs to every endpoint)")
	flag.Float64Var(&o.faults, "faults", 1, "the fault rates' scale: 0 none, 1 the defaults (faults.go), 2 twice as many")
	flag.IntVar(&o.accounts, "accounts", 4, "accounts, each with one endpoint of every kind")
	flag.IntVar(&o.pollers, "pollers", 5, "the delivery queue's concurrent invocations: 5, as Lambda starts on a queue with messages, before it scales out (the busy queue's backlog is -busy's)")
	flag.IntVar(&o.busy, "busy", 1, "other tenants' messages the delivery queue shows at every look (a busy deployment's always shows some); 0: only the soak's own")
	flag.Uint64Var(&o.seed, "seed", 0, "the seed of the faults and the traffic (0: a new one, printed)")
	flag.DurationVar(&o.sweepEvery, "sweep", 10*time.Second, "the sweeper's interval (the scheduler's too)")
	flag.DurationVar(&o.sweepGrace, "grace", 5*time.Second, "SWEEP_GRACE")
	flag.StringVar(&o.retry, "retry", "1s,2s,4s,8s,15s,30s,30s", "RETRY_SCHEDULE")
	flag.StringVar(&o.trace, "trace", "", "keep the system's trace (trace.go) in this file (default: a temporary one)")
	flag.StringVar(&o.systemLog, "log", "", "keep the system's log (its JSON lines: sweeps, attempts) in this file (default: a temporary one)")
	flag.Parse()
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano()%1e9) + 1
	}
	ok, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		fmt.Printf("soak: FAILED; replay with -seed %d\n", o.seed)
		os.Exit(1)
	}
	fmt.Println("soak: every invariant held")
}

func run(o options) (bool, error) {
	ctx := context.Background()
	fmt.Printf("soak: seed %d, %s of traffic at %.1f requests/s, %d accounts x %d endpoints, faults x%.1f, sweep every %s (grace %s), RETRY_SCHEDULE=%s, %d pollers, busy %d\n",
		o.seed, o.duration, o.rate, o.accounts, len(kinds), o.faults, o.sweepEvery, o.sweepGrace, o.retry, o.pollers, o.busy)
	dir, err := os.MkdirTemp("", "gifq-soak-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	emuLog, _ := os.Create(filepath.Join(dir, "emulators.log"))
	emu, err := emulator.Start(ctx, emulator.Options{Log: emuLog})
	if err != nil {
		return false, err
	}
	defer emu.Stop()
	db, sq := emulator.Clients(emu.DynamoDBURL, emu.SQSURL)
	if err := store.CreateTable(ctx, db, table, false); err != nil {
		return false, err
	}
	urls, err := queue.CreateQueues(ctx, sq, table)
	if err != nil {
		return false, err
	}
	settings := map[string]string{
		"TABLE_NAME": table, "QUEUE_URL": urls.Delivery, "SLOW_QUEUE_URL": urls.Slow, "PACED_QUEUE_URL": urls.Paced, "DLQ_URL": urls.DLQ,
		"ALLOW_PRIVATE_ENDPOINTS": "true", "ALLOWED_SCHEMES": "http,https", "METRICS": "off", "LOG_LEVEL": "warn", "STAGE": "local",
		"RETRY_SCHEDULE": o.retry, "SWEEP_GRACE": o.sweepGrace.String(), "DELIVERY_TIMEOUT": "3s", "RATE_LIMIT_PER_SECOND": "50",
		"INGEST_RATE_PER_SECOND": "100000", "INGEST_BURST": "1000000", "API_KEY_CACHE_TTL": "0s",
	}
	cfg, err := config.Parse(func(k string) string { return settings[k] })
	if err != nil {
		return false, err
	}

	rv := newReceiver()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false, err
	}
	srv := &http.Server{Handler: rv}
	go srv.Serve(ln)
	defer srv.Close()

	apiLn, _ := net.Listen("tcp", "127.0.0.1:0")
	apiAddr := apiLn.Addr().String()
	apiLn.Close()
	env := os.Environ()
	for k, v := range settings {
		env = append(env, k+"="+v)
	}
	faultLog, traceLog := filepath.Join(dir, "faults"), filepath.Join(dir, "trace")
	if o.trace != "" {
		traceLog = o.trace
	}
	env = append(env, envDynamo+"="+emu.DynamoDBURL, envSQS+"="+emu.SQSURL, envAPIAddr+"="+apiAddr, envFaults+"="+fmt.Sprint(o.faults),
		envFaultLog+"="+faultLog, envTrace+"="+traceLog, envSweepEvery+"="+o.sweepEvery.String(), envScheduleEvery+"="+o.sweepEvery.String(), envPollers+"="+strconv.Itoa(o.pollers), envBusy+"="+strconv.Itoa(o.busy))
	sysLogPath := filepath.Join(dir, "system.log")
	if o.systemLog != "" {
		sysLogPath = o.systemLog
	}
	sysLog, _ := os.Create(sysLogPath)
	sys := &system{env: env, seed: o.seed, log: sysLog}
	sys.start()
	defer sys.stop()

	st := store.New(db, table)
	api := &client{base: "http://" + apiAddr}
	t := &traffic{api: api, rng: rand.New(rand.NewPCG(o.seed, 1)), kindOf: map[string]string{}, pathOf: map[string]string{}}
	for a := range o.accounts {
		acct, err := st.CreateAccount(ctx, fmt.Sprintf("soak-%d", a), 0)
		if err != nil {
			return false, err
		}
		_, key, err := st.CreateAPIKey(ctx, acct.ID)
		if err != nil {
			return false, err
		}
		t.keys = append(t.keys, key)
		kindByURL := map[string]string{}
		for _, kind := range kinds {
			url := fmt.Sprintf("http://%s/%d/%s", ln.Addr(), a, kind)
			if kind == "refusing" {
				url = refusingURL()
			}
			kindByURL[url] = kind
			if err := api.endpoint(key, url, kind); err != nil {
				return false, err
			}
		}
		// By what the table holds: a registration retried after a killed
		// process may have made two endpoints of one kind.
		eps, err := api.endpoints(key)
		if err != nil {
			return false, err
		}
		for _, ep := range eps {
			t.kindOf[ep.ID], t.pathOf[ep.ID] = kindByURL[ep.URL], ep.URL[len("http://"+ln.Addr().String()):]
		}
	}
	began := time.Now()
	t.run(o.rate, o.duration)
	fmt.Printf("soak: traffic done in %s: %d events accepted (%d API requests retried), the system restarted %d times; draining\n",
		time.Since(began).Round(time.Second), len(t.accepted), t.retried.Load(), sys.restarts.Load())

	// Drain: until nothing is pending, or well past the last deadline.
	c := &checker{store: st, cfg: cfg, allowance: o.sweepEvery + o.sweepGrace + cfg.DeliveryTimeout + clockError(o.faults), kindOf: t.kindOf, pathOf: t.pathOf, rv: rv, final: map[string]bool{}, trace: traceLog}
	last := time.Now()
	limit := last.Add(time.Duration(float64(cfg.Retry.Total())*(1+cfg.Retry.Jitter)) + 8*cfg.DeliveryTimeout + 2*c.allowance + 30*time.Second)
	for {
		pending, err := c.pending(ctx, t.deliveries())
		if err != nil {
			return false, err
		}
		if pending == 0 || time.Now().After(limit) {
			break
		}
		time.Sleep(5 * time.Second)
	}
	sys.stop()
	fmt.Printf("soak: drained in %s\n", time.Since(last).Round(time.Second))
	counts, err := countFaults(faultLog)
	if err != nil {
		return false, err
	}
	return c.check(ctx, t.deliveries(), len(t.accepted), counts, sys.restarts.Load())
}

// system is the functions' process; one a fault killed is started again.
type system struct {
	env      []string
	seed     uint64
	log      *os.File
	mu       sync.Mutex
	cmd      *exec.Cmd
	stopped  bool
	restarts atomic.Int64
	done     chan struct{}
}

func (s *system) start() {
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		for n := uint64(0); ; n++ {
			s.mu.Lock()
			if s.stopped {
				s.mu.Unlock()
				return
			}
			// Each incarnation draws its faults from the seed and its number.
			s.cmd = exec.Command(os.Args[0], "-system")
			s.cmd.Env = append(s.env, envSeed+"="+strconv.FormatUint(s.seed*1000+n, 10))
			s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
			err := s.cmd.Start()
			s.mu.Unlock()
			if err != nil {
				fmt.Fprintln(os.Stderr, "soak: start the system:", err)
				return
			}
			_ = s.cmd.Wait()
			if !s.isStopped() {
				s.restarts.Add(1)
			}
		}
	}()
}

func (s *system) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *system) stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
	}
	s.mu.Unlock()
	<-s.done
}

func countFaults(path string) (map[string]int, error) {
	raw, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	counts := map[string]int{}
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if len(line) > 0 {
			counts[string(line)]++
		}
	}
	return counts, nil
}

// client is the API as a producer calls it.
type client struct{ base string }

func (c *client) do(key, method, path string, body any, out any) (int, error) {
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(ans, out); err != nil {
			return resp.StatusCode, err
		}
	}
	return resp.StatusCode, nil
}

// endpoint registers url for the soak's event types of kind.
func (c *client) endpoint(key, url, kind string) error {
	body := map[string]any{"url": url, "event_types": []string{"soak." + kind, "soak.fanout"}}
	for tries := 0; ; tries++ {
		code, err := c.do(key, "POST", "/v1/endpoints", body, nil)
		if code == 201 {
			return nil
		}
		if tries == 100 {
			return fmt.Errorf("register an endpoint: %d %v", code, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type endpointOut struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

func (c *client) endpoints(key string) ([]endpointOut, error) {
	var out struct {
		Data []endpointOut `json:"data"`
	}
	for tries := 0; ; tries++ {
		code, err := c.do(key, "GET", "/v1/endpoints", nil, &out)
		if code == 200 {
			return out.Data, nil
		}
		if tries == 100 {
			return nil, fmt.Errorf("list endpoints: %d %v", code, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// doRaw posts an event's body as it is, with its Idempotency-Key.
func (c *client) doRaw(key, path, body, idem string, out any) (int, error) {
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idem)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	ans, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 202 {
		return 202, json.Unmarshal(ans, out)
	}
	return resp.StatusCode, nil
}
