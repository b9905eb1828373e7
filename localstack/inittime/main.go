// Command inittime measures the four Lambda functions' binaries: their size,
// and how long each takes from process start to ready (Lambda's "Init
// Duration": until the runtime asks for its first event), against the real
// DynamoDB and SQS emulators.
//
//	make inittime            # or: go run ./localstack/inittime -runs 10 -rie PATH
//
// It builds functions/* for this machine (linux/GOARCH, the same flags as
// `make build`), starts the emulators with a table and queues, and runs each
// binary several times two ways:
//
//   - under a minimal Lambda Runtime API served here: init is the time from
//     exec to the binary's first GET /runtime/invocation/next, and first
//     invoke the time until it posts the response to the sample event;
//   - under the AWS Lambda Runtime Interface Emulator (-rie, when given):
//     the time from exec of the emulator to the first successful invocation
//     through its HTTP endpoint, as a client sees a cold start locally.
//
// Sample events come from events/. Figures are medians with min and max.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gifq/webhooks/localstack/emulator"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

var functions = []struct{ name, event string }{
	{"api", "events/api-healthz.json"},
	{"deliver", "events/deliver-sqs.json"},
	{"sweeper", "events/sweeper.json"},
	{"redrive", "events/redrive.json"},
}

func main() {
	runs := flag.Int("runs", 10, "cold starts per function and method")
	rie := flag.String("rie", "", "path of aws-lambda-rie; empty: skip the emulator measurement")
	flag.Parse()
	if err := run(*runs, *rie); err != nil {
		fmt.Fprintln(os.Stderr, "inittime:", err)
		os.Exit(1)
	}
}

func run(runs int, rie string) error {
	ctx := context.Background()
	root, err := emulator.ModuleRoot()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "inittime-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	goarch := runtime.GOARCH
	fmt.Printf("binaries (linux/%s, -tags lambda.norpc -trimpath -ldflags='-s -w', %s):\n", goarch, goVersion())
	for _, fn := range functions {
		out := filepath.Join(dir, fn.name, "bootstrap")
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, "./functions/"+fn.name)
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", fn.name, err, b)
		}
		st, err := os.Stat(out)
		if err != nil {
			return err
		}
		fmt.Printf("  %-8s %9d bytes (%.1f MiB)\n", fn.name, st.Size(), float64(st.Size())/(1<<20))
	}

	emu, err := emulator.Start(ctx, emulator.Options{KMS: true}) // api and deliver need KMS_KEY_ID
	if err != nil {
		return err
	}
	defer emu.Stop()
	kmsKey, err := emulator.EnsureKey(ctx, emulator.KMSClient(emu.KMSURL), "alias/inittime")
	if err != nil {
		return err
	}
	db, q := emulator.Clients(emu.DynamoDBURL, emu.SQSURL)
	table := "inittime"
	if err := store.CreateTable(ctx, db, table, false); err != nil {
		return err
	}
	urls, err := queue.CreateQueues(ctx, q, table)
	if err != nil {
		return err
	}
	env := []string{
		"TABLE_NAME=" + table, "QUEUE_URL=" + urls.Delivery, "DLQ_URL=" + urls.DLQ,
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"AWS_ENDPOINT_URL_DYNAMODB=" + emu.DynamoDBURL, "AWS_ENDPOINT_URL_SQS=" + emu.SQSURL,
		"AWS_ENDPOINT_URL_KMS=" + emu.KMSURL, "KMS_KEY_ID=" + kmsKey,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "TZ=UTC",
	}

	fmt.Printf("\ninit (exec to first GET /runtime/invocation/next) and first invoke, %d cold starts each, median [min-max]:\n", runs)
	for _, fn := range functions {
		event, err := os.ReadFile(fn.event)
		if err != nil {
			return err
		}
		var inits, invokes []time.Duration
		for i := 0; i < runs; i++ {
			init, invoke, err := coldStart(filepath.Join(dir, fn.name, "bootstrap"), env, event)
			if err != nil {
				return fmt.Errorf("%s: %w", fn.name, err)
			}
			inits, invokes = append(inits, init), append(invokes, invoke)
		}
		fmt.Printf("  %-8s init %s   first invoke %s\n", fn.name, summary(inits), summary(invokes))
	}

	if rie == "" {
		return nil
	}
	fmt.Printf("\nunder aws-lambda-rie: exec to first successful invocation, %d cold starts each, median [min-max]:\n", runs)
	for _, fn := range functions {
		event, err := os.ReadFile(fn.event)
		if err != nil {
			return err
		}
		var total []time.Duration
		for i := 0; i < runs; i++ {
			d, err := rieColdStart(rie, filepath.Join(dir, fn.name, "bootstrap"), env, event)
			if err != nil {
				return fmt.Errorf("%s under the RIE: %w", fn.name, err)
			}
			total = append(total, d)
		}
		fmt.Printf("  %-8s %s\n", fn.name, summary(total))
	}
	return nil
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

// runtimeAPI is the part of the Lambda Runtime API a Go function uses: one
// event to hand out, and the times of the first /next and of the response.
type runtimeAPI struct {
	event []byte
	mu    sync.Mutex
	next  time.Time     // first GET .../invocation/next
	done  chan error    // the invocation's outcome
	sent  bool          // the event was handed out
	final time.Time     // the response arrived
	hold  chan struct{} // a second /next waits here until the process is killed
}

func (r *runtimeAPI) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	switch {
	case req.Method == http.MethodGet && req.URL.Path == "/2018-06-01/runtime/invocation/next":
		r.mu.Lock()
		if r.next.IsZero() {
			r.next = now
		}
		first := !r.sent
		r.sent = true
		r.mu.Unlock()
		if !first {
			select { // no second event: wait to be killed
			case <-r.hold:
			case <-req.Context().Done():
			}
			return
		}
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", "inittime-1")
		h.Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(30*time.Second).UnixMilli()))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:inittime")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
		_, _ = w.Write(r.event)
	case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/response"):
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.final = now
		r.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		r.done <- nil
	case req.Method == http.MethodPost && (strings.HasSuffix(req.URL.Path, "/error") || strings.HasSuffix(req.URL.Path, "/init/error")):
		b, _ := io.ReadAll(req.Body)
		w.WriteHeader(http.StatusAccepted)
		r.done <- fmt.Errorf("function error: %s", b)
	default:
		http.NotFound(w, req)
	}
}

// coldStart runs one fresh process of bin against a Runtime API served here.
func coldStart(bin string, env []string, event []byte) (init, invoke time.Duration, err error) {
	api := &runtimeAPI{event: event, done: make(chan error, 2), hold: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	defer close(api.hold)

	cmd := exec.Command(bin)
	cmd.Env = append(slices.Clone(env), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String())
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case err := <-api.done:
		if err != nil {
			return 0, 0, fmt.Errorf("%w\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		return 0, 0, fmt.Errorf("no response within 30s\n%s", logs.String())
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	return api.next.Sub(start), api.final.Sub(start), nil
}

// rieColdStart starts the Runtime Interface Emulator with bin and returns
// the time until the first invocation through it succeeds. The emulator
// starts the function on the first request.
func rieColdStart(rie, bin string, env []string, event []byte) (time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, bin)
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	url := "http://" + addr + "/2015-03-31/functions/function/invocations"
	client := &http.Client{Timeout: 30 * time.Second}
	deadline := start.Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := client.Post(url, "application/json", bytes.NewReader(event))
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) { // not listening yet
				time.Sleep(200 * time.Microsecond)
				continue
			}
			return 0, err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		// Function errors come back as 200 with an error body.
		if resp.StatusCode != http.StatusOK || bytes.Contains(body, []byte(`"errorType"`)) {
			return 0, fmt.Errorf("status %d: %s\n%s", resp.StatusCode, body, logs.String())
		}
		return took, nil
	}
	return 0, fmt.Errorf("the emulator did not answer within 30s\n%s", logs.String())
}

func summary(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("%6s ms [%s-%s]", ms(s[len(s)/2]), ms(s[0]), ms(s[len(s)-1]))
}
