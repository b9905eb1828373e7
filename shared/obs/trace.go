package obs

import (
	"context"
	"log/slog"
	"os"
	"strings"
)

// lambdaTraceKey is the context key under which aws-lambda-go puts the
// invocation's X-Ray trace header (Lambda-Runtime-Trace-Id): a plain string
// key, set by the runtime, so it is read here as it is written there.
const lambdaTraceKey = "x-amzn-trace-id"

type traceKey struct{}

// WithTraceHeader carries an X-Ray trace header (Root=...;Parent=...;
// Sampled=...) in ctx where the Lambda runtime did not put one: a message's
// AWSTraceHeader, or a test.
func WithTraceHeader(ctx context.Context, header string) context.Context {
	return context.WithValue(ctx, traceKey{}, header)
}

// TraceHeader is ctx's X-Ray trace header: one set by WithTraceHeader, else
// the Lambda invocation's, else "" (make dev, tests: no tracing, no noise).
func TraceHeader(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	if h, ok := ctx.Value(traceKey{}).(string); ok && h != "" {
		return h
	}
	h, _ := ctx.Value(lambdaTraceKey).(string)
	return h
}

// InvocationTraceHeader is the Lambda invocation's own trace header in ctx
// (its Lineage counts the invocation chain for recursion detection), "" outside one.
func InvocationTraceHeader(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	h, _ := ctx.Value(lambdaTraceKey).(string)
	return h
}

// TraceID is ctx's X-Ray trace id (1-5759e988-bd862e3fe1be46a994272793), or "".
func TraceID(ctx context.Context) string { return TraceRoot(TraceHeader(ctx)) }

// TraceRoot is a trace header's Root field, or "" when it has none.
func TraceRoot(header string) string {
	for _, f := range strings.Split(header, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(f), "="); ok && k == "Root" {
			return v
		}
	}
	return ""
}

// traceHandler adds trace_id to every record logged in a traced Lambda
// invocation: a line of the function and the same event's lines in
// other functions are found by one id, and X-Ray's trace opens from it.
type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	id := TraceID(ctx)
	if id == "" {
		// A line logged without the invocation's context: aws-lambda-go
		// also puts the invocation's header in _X_AMZN_TRACE_ID (one
		// invocation at a time per process); unset outside Lambda.
		id = TraceRoot(os.Getenv("_X_AMZN_TRACE_ID"))
	}
	if id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(as)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}
