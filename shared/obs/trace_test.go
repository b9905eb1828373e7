package obs

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

const header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=a87bd80c:0"

// lambdaCtx is a context as aws-lambda-go makes it for an invocation.
func lambdaCtx() context.Context {
	//lint:ignore SA1029 the runtime's own key: aws-lambda-go sets it as this plain string
	return context.WithValue(context.Background(), "x-amzn-trace-id", header) //nolint:staticcheck
}

func TestLogLineCarriesLambdaTraceID(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelInfo, "deliver").With("delivery_id", "dlv_1")
	log.InfoContext(lambdaCtx(), "attempt", "status", 200)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["trace_id"] != "1-5759e988-bd862e3fe1be46a994272793" || line["function"] != "deliver" || line["delivery_id"] != "dlv_1" {
		t.Errorf("line = %v", line)
	}
}

// TestLogLineWithoutContextCarriesInvocationTrace: a line logged without
// the context (log.Info) in a Lambda invocation still names its trace.
func TestLogLineWithoutContextCarriesInvocationTrace(t *testing.T) {
	t.Setenv("_X_AMZN_TRACE_ID", header)
	var buf bytes.Buffer
	NewLogger(&buf, slog.LevelInfo, "sweeper").Info("run")
	if !bytes.Contains(buf.Bytes(), []byte(`"trace_id":"1-5759e988-bd862e3fe1be46a994272793"`)) {
		t.Errorf("line %s", buf.String())
	}
}

func TestLogLineWithoutTraceHasNone(t *testing.T) {
	t.Setenv("_X_AMZN_TRACE_ID", "")
	var buf bytes.Buffer
	NewLogger(&buf, slog.LevelInfo, "api").InfoContext(context.Background(), "request")
	NewLogger(&buf, slog.LevelInfo, "api").Info("no context")
	if bytes.Contains(buf.Bytes(), []byte("trace_id")) {
		t.Errorf("untraced lines carry a trace id: %s", buf.String())
	}
}

func TestTraceHeaderPrefersCarried(t *testing.T) {
	carried := "Root=1-00000001-000000000000000000000001;Parent=0000000000000001;Sampled=1"
	ctx := WithTraceHeader(lambdaCtx(), carried)
	if TraceHeader(ctx) != carried || TraceID(ctx) != "1-00000001-000000000000000000000001" {
		t.Errorf("got %q", TraceHeader(ctx))
	}
	if TraceHeader(lambdaCtx()) != header || TraceRoot("Sampled=0") != "" || TraceHeader(context.Background()) != "" {
		t.Error("header fallbacks")
	}
}
