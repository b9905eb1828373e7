package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
	"github.com/gifq/webhooks/shared/sweep"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// function wires the sweeper function on the emulators, over table, with
// its metrics written to out.
func function(env *testenv.Env, table string, out io.Writer) sweep.Function {
	st := store.New(env.DB, table)
	q := queue.New(env.SQS, env.Queues.Delivery, env.Queues.DLQ)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	m := obs.NewMetrics(out, true, "GifqWebhooks", "test")
	return sweep.Function{
		Sweeper:   &sweep.Sweeper{Store: st, Queue: q, MaxAttempts: 8, Grace: time.Minute, Log: log, Metrics: m, Now: time.Now},
		Scheduler: &sweep.Scheduler{Store: st, Queue: q, Ahead: 2 * time.Minute, Log: log, Now: time.Now},
		Metrics:   m,
	}
}

// heartbeats returns the value of each metric named in the EMF lines of out.
func heartbeats(t *testing.T, out *bytes.Buffer) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		for _, name := range []string{obs.MetricSweeperRuns, obs.MetricSchedulerRuns} {
			if n, ok := v[name].(float64); ok {
				got[name] += n
			}
		}
	}
	return got
}

// Each mode emits its own heartbeat once per run that worked, and none for
// a run that failed: the heartbeat alarms (missing data breaching) in the
// stack rest on exactly this.
func TestHeartbeatPerModeOnlyForRunsThatWorked(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	var out bytes.Buffer
	f := function(env, env.Table, &out)
	for _, in := range []string{`{"version":"0","detail-type":"Scheduled Event"}`, `{"mode":"schedule"}`, `{"mode":"schedule"}`} {
		if _, err := f.Handle(ctx, json.RawMessage(in)); err != nil {
			t.Fatalf("run %s: %v", in, err)
		}
	}
	if got := heartbeats(t, &out); got[obs.MetricSweeperRuns] != 1 || got[obs.MetricSchedulerRuns] != 2 {
		t.Errorf("heartbeats %v, want %s 1 and %s 2", got, obs.MetricSweeperRuns, obs.MetricSchedulerRuns)
	}

	// A table that does not exist: every query fails, so no heartbeat.
	out.Reset()
	broken := function(env, env.Table+"-missing", &out)
	for _, in := range []string{`{}`, `{"mode":"schedule"}`} {
		if _, err := broken.Handle(ctx, json.RawMessage(in)); err == nil {
			t.Fatalf("run %s over a missing table: no error", in)
		}
	}
	if got := heartbeats(t, &out); len(got) != 0 {
		t.Errorf("failed runs sent heartbeats %v", got)
	}
}
