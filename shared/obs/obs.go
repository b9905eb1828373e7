// Package obs is the system's structured logging (log/slog, JSON) and its
// CloudWatch metrics, written as Embedded Metric Format lines that
// CloudWatch Logs turns into metrics without any API call.
package obs

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"
)

// Metric names. The CDK stack's alarms and dashboard use the same names.
const (
	MetricEventsIngested      = "EventsIngested"
	MetricDeliveriesCreated   = "DeliveriesCreated"
	MetricAttempts            = "Attempts"
	MetricDelivered           = "Delivered"
	MetricAttemptsFailed      = "AttemptsFailed" // retryable failures (5xx, transport)
	MetricDeadLettered        = "DeadLettered"
	MetricRateLimitDeferrals  = "RateLimitDeferrals"
	MetricEndpointDeferrals   = "EndpointDeferrals"
	MetricAttemptDuration     = "AttemptDuration" // ms
	MetricTimeToDeliver       = "TimeToDeliver"   // ms from ingest to the 2xx
	MetricSweeperRequeued     = "SweeperRequeued"
	MetricSweeperDeadLettered = "SweeperDeadLettered"
	MetricRedriveMoved        = "RedriveMoved"
	MetricEnqueueFailures     = "EnqueueFailures" // ingest's SQS send failed; the sweeper will pick them up
	DimensionStage            = "Stage"
)

// NewLogger returns a JSON logger to w (stdout when nil) that names the function.
func NewLogger(w io.Writer, level slog.Level, function string) *slog.Logger {
	if w == nil {
		w = os.Stdout
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})).With("function", function)
}

// Metrics writes EMF lines.
type Metrics struct {
	w         io.Writer
	mu        *sync.Mutex
	namespace string
	stage     string
	enabled   bool
}

// NewMetrics returns a metrics writer; when disabled it writes nothing.
func NewMetrics(w io.Writer, enabled bool, namespace, stage string) *Metrics {
	if w == nil {
		w = os.Stdout
	}
	return &Metrics{w: w, mu: &sync.Mutex{}, namespace: namespace, stage: stage, enabled: enabled}
}

// Batch collects one invocation's metrics into a single EMF line.
type Batch struct {
	m      *Metrics
	mu     sync.Mutex
	counts map[string]float64
	values map[string][]float64
}

// Batch starts collecting.
func (m *Metrics) Batch() *Batch {
	return &Batch{m: m, counts: map[string]float64{}, values: map[string][]float64{}}
}

// Count adds n to a counter.
func (b *Batch) Count(name string, n float64) {
	b.mu.Lock()
	b.counts[name] += n
	b.mu.Unlock()
}

// Observe records one value in milliseconds.
func (b *Batch) Observe(name string, d time.Duration) {
	b.mu.Lock()
	b.values[name] = append(b.values[name], float64(d.Milliseconds()))
	b.mu.Unlock()
}

// Flush writes the EMF line (nothing when empty or disabled).
func (b *Batch) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.m.enabled || len(b.counts)+len(b.values) == 0 {
		return
	}
	type metric struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	line := map[string]any{DimensionStage: b.m.stage}
	var defs []metric
	for name, v := range b.counts {
		defs, line[name] = append(defs, metric{name, "Count"}), v
	}
	for name, v := range b.values {
		defs, line[name] = append(defs, metric{name, "Milliseconds"}), v
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	line["_aws"] = map[string]any{
		"Timestamp": time.Now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  b.m.namespace,
			"Dimensions": [][]string{{DimensionStage}},
			"Metrics":    defs,
		}},
	}
	out, _ := json.Marshal(line)
	b.m.mu.Lock()
	_, _ = b.m.w.Write(append(out, '\n'))
	b.m.mu.Unlock()
	b.counts, b.values = map[string]float64{}, map[string][]float64{}
}
