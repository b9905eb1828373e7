// Package obs is the system's structured logging (log/slog, JSON) and its
// CloudWatch metrics, written as Embedded Metric Format lines that
// CloudWatch Logs turns into metrics without any API call.
package obs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/aws/smithy-go/logging"
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
	MetricSlowLaneMoves       = "SlowLaneMoves"
	MetricOrderedHolds        = "OrderedHolds"         // a keyed delivery put back behind its key's previous one (ordered endpoints)
	MetricSlotHandoffs        = "EndpointSlotHandoffs" // an endpoint's in-flight slot passed to a waiting message in the same instance
	MetricAttemptDuration     = "AttemptDuration"      // ms
	MetricTimeToDeliver       = "TimeToDeliver"        // ms from ingest to the 2xx
	MetricSweeperRequeued     = "SweeperRequeued"
	MetricSweeperDeadLettered = "SweeperDeadLettered"
	// MetricSweeperOldestOverdue is how long (ms) the oldest delivery a
	// sweep found had been due, each run (0: none); its alarm is
	// OldestOverdueDelivery.
	MetricSweeperOldestOverdue = "SweeperOldestOverdue"
	MetricRedriveMoved         = "RedriveMoved"
	// MetricRedriveNotRestarted counts redriven DLQ messages that restarted
	// nothing: their delivery is gone (expired, deleted) or moved on.
	MetricRedriveNotRestarted = "RedriveNotRestarted"
	MetricEnqueueFailures     = "EnqueueFailures" // ingest's SQS send failed; the sweeper will pick them up
	MetricOpEventsFailed      = "OpEventsFailed"  // operational events not accepted by the bus (package opevents)

	// Heartbeats: 1 for each sweep or scheduler run that finished without an
	// error. Their alarms treat missing data as breaching, so a run that
	// stopped happening (rule disabled, function broken, permissions) pages.
	MetricSweeperRuns   = "SweeperRuns"
	MetricSchedulerRuns = "SchedulerRuns"
)

// DimensionStage is the one dimension of every metric.
const DimensionStage = "Stage"

// NewLogger returns a JSON logger to w (stdout when nil) that names the
// function, and the trace of every line logged with a traced context
// (trace.go: the Lambda invocation's X-Ray trace id).
func NewLogger(w io.Writer, level slog.Level, function string) *slog.Logger {
	if w == nil {
		w = os.Stdout
	}
	return slog.New(traceHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})}).With("function", function)
}

// SDKLogger is the AWS SDK's logger writing through log, so that its
// warnings (a response body it could not close, a setting it ignores) are JSON
// lines like the function's own, at warn level, not plain text beside them.
// The SDK's debug lines are debug here; nothing it logs by default carries
// a request's body or credentials (its ClientLogMode is left unset).
func SDKLogger(log *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(c logging.Classification, format string, v ...any) {
		level := slog.LevelWarn
		if c == logging.Debug {
			level = slog.LevelDebug
		}
		log.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
	})
}

// Metrics writes EMF lines.
type Metrics struct {
	w         io.Writer
	mu        *sync.Mutex
	namespace string
	stage     string
	enabled   bool
	// The JSON of the line's fixed parts, made once.
	head, tail []byte
}

// NewMetrics returns a metrics writer; when disabled it writes nothing.
func NewMetrics(w io.Writer, enabled bool, namespace, stage string) *Metrics {
	if w == nil {
		w = os.Stdout
	}
	m := &Metrics{w: w, mu: &sync.Mutex{}, namespace: namespace, stage: stage, enabled: enabled}
	m.head = append(append(append([]byte(`{`), jsonString(DimensionStage)...), ':'), jsonString(stage)...)
	m.tail = append(append([]byte(`,"CloudWatchMetrics":[{"Namespace":`), jsonString(namespace)...),
		`,"Dimensions":[[`+string(jsonString(DimensionStage))+`]],"Metrics":[`...)
	return m
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// Batch collects one invocation's metrics into a single EMF line.
type Batch struct {
	m      *Metrics
	mu     sync.Mutex
	counts map[string]float64
	values map[string][]float64
}

// Batch starts collecting. A disabled Metrics' batch collects nothing.
func (m *Metrics) Batch() *Batch {
	if !m.enabled {
		return &Batch{m: m}
	}
	return &Batch{m: m, counts: map[string]float64{}, values: map[string][]float64{}}
}

// Count adds n to a counter.
func (b *Batch) Count(name string, n float64) {
	if !b.m.enabled {
		return
	}
	b.mu.Lock()
	b.counts[name] += n
	b.mu.Unlock()
}

// Observe records one value in milliseconds.
func (b *Batch) Observe(name string, d time.Duration) {
	if !b.m.enabled {
		return
	}
	b.mu.Lock()
	b.values[name] = append(b.values[name], float64(d.Milliseconds()))
	b.mu.Unlock()
}

// Flush writes the EMF line (nothing when empty or disabled): the stage
// dimension, each metric's value (a count, or the list of values observed),
// and the _aws metadata naming them, in name order. The line is appended by
// hand into one buffer: a map of interfaces through encoding/json cost ~70
// allocations per line, one line per deliver batch and per accepted event.
func (b *Batch) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.m.enabled || len(b.counts)+len(b.values) == 0 {
		return
	}
	names := make([]string, 0, len(b.counts)+len(b.values))
	for name := range b.counts {
		names = append(names, name)
	}
	for name := range b.values {
		if _, dup := b.counts[name]; !dup {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := make([]byte, 0, 256+64*len(names))
	out = append(out, b.m.head...)
	for _, name := range names {
		out = append(appendName(append(out, ','), name), ':')
		if v, ok := b.values[name]; ok {
			out = append(out, '[')
			for i, x := range v {
				if i > 0 {
					out = append(out, ',')
				}
				out = appendNumber(out, x)
			}
			out = append(out, ']')
		} else {
			out = appendNumber(out, b.counts[name])
		}
	}
	out = append(out, `,"_aws":{"Timestamp":`...)
	out = strconv.AppendInt(out, time.Now().UnixMilli(), 10)
	out = append(out, b.m.tail...)
	for i, name := range names {
		if i > 0 {
			out = append(out, ',')
		}
		unit := "Count"
		if _, ok := b.values[name]; ok {
			unit = "Milliseconds"
		}
		out = append(append(append(appendName(append(out, `{"Name":`...), name), `,"Unit":"`...), unit...), `"}`...)
	}
	out = append(out, "]}]}}\n"...)
	b.m.mu.Lock()
	_, _ = b.m.w.Write(out)
	b.m.mu.Unlock()
	clear(b.counts)
	clear(b.values)
}

// appendName appends a metric name as a JSON string: the names are ASCII
// letters, written as they are; anything else goes through encoding/json.
func appendName(b []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return append(b, jsonString(name)...)
		}
	}
	return append(append(append(b, '"'), name...), '"')
}

// appendNumber writes a float as encoding/json does (no NaN or infinity
// reaches here: counts and milliseconds).
func appendNumber(b []byte, f float64) []byte {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
