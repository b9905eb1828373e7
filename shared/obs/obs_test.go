package obs

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go/logging"
)

func TestEMFLine(t *testing.T) {
	var buf bytes.Buffer
	b := NewMetrics(&buf, true, "GifqWebhooks", "prod").Batch()
	b.Count(MetricAttempts, 1)
	b.Count(MetricAttempts, 2)
	b.Observe(MetricAttemptDuration, 120*time.Millisecond)
	b.Flush()
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if line[MetricAttempts] != 3.0 || line[DimensionStage] != "prod" {
		t.Fatalf("%s", buf.String())
	}
	aws := line["_aws"].(map[string]any)
	cwm := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if cwm["Namespace"] != "GifqWebhooks" || len(cwm["Metrics"].([]any)) != 2 {
		t.Fatalf("%s", buf.String())
	}
	buf.Reset()
	b.Flush()
	if buf.Len() != 0 {
		t.Fatal("an empty batch must write nothing")
	}
	off := NewMetrics(&buf, false, "x", "y").Batch()
	off.Count(MetricAttempts, 1)
	off.Flush()
	if buf.Len() != 0 {
		t.Fatal("disabled metrics wrote")
	}
}

// referenceLine is the EMF line as encoding/json writes it from a map (how
// Flush made it before it appended the line by hand).
func referenceLine(namespace, stage string, counts map[string]float64, values map[string][]float64) map[string]any {
	type metric struct{ Name, Unit string }
	line := map[string]any{DimensionStage: stage}
	var defs []metric
	for name, v := range counts {
		defs, line[name] = append(defs, metric{name, "Count"}), v
	}
	for name, v := range values {
		defs, line[name] = append(defs, metric{name, "Milliseconds"}), v
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	line["_aws"] = map[string]any{"CloudWatchMetrics": []any{map[string]any{
		"Namespace": namespace, "Dimensions": [][]string{{DimensionStage}}, "Metrics": defs}}}
	raw, _ := json.Marshal(line)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// The line is the same JSON as encoding/json's, with a current timestamp,
// for a deliver batch's metrics and for odd namespaces, stages and values.
func TestEMFLineIsTheJSONOfTheMetrics(t *testing.T) {
	for _, c := range []struct {
		namespace, stage string
		counts           map[string]float64
		values           map[string][]float64
	}{
		{"GifqWebhooks", "prod", map[string]float64{MetricAttempts: 10, MetricDelivered: 9, MetricAttemptsFailed: 1, MetricEndpointDeferrals: 0.5},
			map[string][]float64{MetricAttemptDuration: {12, 250, 0}, MetricTimeToDeliver: {1e7}}},
		{`Name "quoted" \ ünïcode`, "st<a>ge\n", map[string]float64{"Odd-Name.1": 1e22, MetricEventsIngested: 1234567}, nil},
		{"x", "y", nil, map[string][]float64{MetricAttemptDuration: {3}}},
	} {
		var buf bytes.Buffer
		b := NewMetrics(&buf, true, c.namespace, c.stage).Batch()
		for name, n := range c.counts {
			b.Count(name, n)
		}
		for name, vs := range c.values {
			for _, v := range vs {
				b.Observe(name, time.Duration(v)*time.Millisecond)
			}
		}
		before := time.Now().UnixMilli()
		b.Flush()
		var got map[string]any
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil || !bytes.HasSuffix(buf.Bytes(), []byte("}\n")) {
			t.Fatalf("not one JSON line: %v: %q", err, buf.String())
		}
		aws := got["_aws"].(map[string]any)
		if ts := aws["Timestamp"].(float64); ts < float64(before) || ts > float64(time.Now().UnixMilli()) {
			t.Fatalf("Timestamp %v is not now", ts)
		}
		delete(aws, "Timestamp")
		if want := referenceLine(c.namespace, c.stage, c.counts, c.values); !reflect.DeepEqual(got, want) {
			t.Fatalf("line\n%s\nwant the JSON of\n%v", buf.String(), want)
		}
	}
}

// A deliver batch's metrics cost a handful of allocations, not one per value
// and map entry; disabled metrics cost none.
func TestFlushAllocations(t *testing.T) {
	m := NewMetrics(io.Discard, true, "GifqWebhooks", "prod")
	batch := func(m *Metrics) {
		b := m.Batch()
		b.Count(MetricAttempts, 1)
		b.Count(MetricDelivered, 1)
		b.Observe(MetricAttemptDuration, 12*time.Millisecond)
		b.Observe(MetricTimeToDeliver, 40*time.Millisecond)
		b.Flush()
	}
	if n := testing.AllocsPerRun(100, func() { batch(m) }); n > 12 {
		t.Errorf("a batch of 4 metrics and its line: %.0f allocations, want at most 12", n)
	}
	off := NewMetrics(io.Discard, false, "GifqWebhooks", "prod")
	if n := testing.AllocsPerRun(100, func() { batch(off) }); n > 1 {
		t.Errorf("disabled metrics: %.0f allocations, want at most 1 (the batch)", n)
	}
}

func TestSDKLinesAreJSONAtTheirLevel(t *testing.T) {
	var out bytes.Buffer
	log := SDKLogger(NewLogger(&out, slog.LevelInfo, "deliver"))
	log.Logf(logging.Warn, "failed to close HTTP response body: %v", "response did not match expected checksum")
	log.Logf(logging.Debug, "request %d", 1) // below info: not written
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1 (the warning; the debug line is below info):\n%s", len(lines), out.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("not JSON: %s", lines[0])
	}
	want := map[string]any{"level": "WARN", "msg": "failed to close HTTP response body: response did not match expected checksum",
		"function": "deliver", "source": "aws-sdk"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, got[k], v, lines[0])
		}
	}
}
