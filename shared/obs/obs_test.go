package obs

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
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
