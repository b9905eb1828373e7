package e2e

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

var (
	buildOnce sync.Once
	devBin    string
	buildErr  error
)

// devBinary builds the make dev program once per test run.
func devBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gifq-dev-bin")
		if err != nil {
			buildErr = err
			return
		}
		devBin = filepath.Join(dir, "dev")
		out, err := exec.Command("go", "build", "-o", devBin, "github.com/gifq/webhooks/localstack/dev").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return devBin
}

// devProc is the make dev program as a separate process on the test's
// emulators, table and queues, so it can be killed for real.
type devProc struct {
	t    *testing.T
	bin  string
	env  []string
	cmd  *exec.Cmd
	api  string
	logs *os.File
}

func startDevProc(t *testing.T, env *testenv.Env, settings ...string) *devProc {
	t.Helper()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	logs, err := os.CreateTemp("", "gifq-dev-*.log")
	if err != nil {
		t.Fatal(err)
	}
	p := &devProc{t: t, bin: devBinary(t), api: "http://" + addr, logs: logs, env: append(os.Environ(),
		"AWS_ENDPOINT_URL_DYNAMODB="+env.DynamoURL, "AWS_ENDPOINT_URL_SQS="+env.SQSURL,
		"RESOURCE_PREFIX="+env.Table, "API_ADDR="+addr, "RECEIVER_ADDR=127.0.0.1:0", "DATA_DIR="+t.TempDir(),
		"LOG_LEVEL=warn")}
	for k, v := range unlimitedIngest { // these tests post backlogs from one key
		p.env = append(p.env, k+"="+v)
	}
	p.env = append(p.env, settings...)
	p.start()
	t.Cleanup(func() { p.kill(); logs.Close(); os.Remove(logs.Name()) })
	return p
}

func (p *devProc) start() {
	p.t.Helper()
	p.cmd = exec.Command(p.bin)
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = p.env, p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.api + "/healthz")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the dev process did not come up: %v (log: %s)", err, p.logs.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown code runs, in-flight batches are cut off.
func (p *devProc) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		_ = p.cmd.Wait()
		p.cmd = nil
	}
}

// The local process is killed with SIGKILL three times in the middle of
// delivering a backlog and restarted each time: every event is still
// delivered, none is lost or stuck, and no delivery goes past its attempts.
func TestKilledProcessLosesNothing(t *testing.T) {
	t.Parallel()
	localOnly(t)
	env := testenv.New(t)
	// A killed process's endpoint slots stay held until their leases end
	// (2 x the timeout + 5 s: 7 s here), and the cap's waits end at the
	// deadline: the schedule's last wait keeps the deadline (about 50 s) far
	// past three kills' leases, as AWS's 78 minutes are past its 25 s ones.
	// With seven waits of 1 s (a 16 s deadline) a delivery behind three
	// kills' leases failed endpoint_unavailable to this healthy receiver.
	p := startDevProc(t, env, "RETRY_SCHEDULE=1s,1s,1s,1s,1s,1s,30s", "SWEEP_INTERVAL=1s", "SWEEP_GRACE=2s",
		"DELIVERY_TIMEOUT=1s", "RATE_LIMIT_PER_SECOND=25")
	h := &harness{api: p.api, store: store.New(env.DB, env.Table), sqs: env.SQS, queueURL: env.Queues.Delivery,
		dlqURL: env.Queues.DLQ, recvHost: "127.0.0.1", env: env}
	_, key := h.account(t)
	rv, _ := h.registerReceiver(t, key, func(int, http.ResponseWriter, *http.Request) (int, string) {
		time.Sleep(50 * time.Millisecond) // keep attempts open so kills land mid-attempt
		return 200, ""
	})
	const n = 150
	events := h.publishMany(t, key, n) // a backlog of 6 s at 25/s
	for kill := 0; kill < 3; kill++ {
		time.Sleep(time.Duration(500+rand.IntN(1500)) * time.Millisecond)
		t.Logf("SIGKILL %d with %d requests received", kill+1, len(rv.requests()))
		p.kill()
		p.start()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pending := 0
		for _, ev := range events {
			d, err := h.store.GetDelivery(ctx, ev.Deliveries[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case d.Status == domain.StatusPending:
				pending++
			case d.Status != domain.StatusDelivered:
				t.Fatalf("delivery %s ended %s (%s)", d.ID, d.Status, d.FailReason)
			case d.Attempts > 8:
				t.Fatalf("delivery %s used %d attempts", d.ID, d.Attempts)
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(p.logs.Name())
			t.Fatalf("%d deliveries still pending after the kills; the process's log:\n%s", pending, logs[max(0, len(logs)-20000):])
		}
		time.Sleep(250 * time.Millisecond)
	}
	seen := map[string]int{}
	for _, r := range rv.requests() {
		seen[r.header.Get(webhook.HeaderEventID)]++
	}
	dups := 0
	for _, ev := range events {
		if seen[ev.ID] == 0 {
			t.Errorf("event %s was never received", ev.ID)
		}
		dups += seen[ev.ID] - 1
	}
	t.Logf("%d events, %d requests, %d duplicates at the receiver (at least once)", n, len(rv.requests()), dups)
	if dl := h.dlq(t); len(dl) != 0 {
		t.Fatalf("DLQ: %v", dl)
	}
}
