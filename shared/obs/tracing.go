package obs

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go/middleware"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Tracing: spans are made with OpenTelemetry's SDK and sent, as X-Ray
// subsegments, to the X-Ray daemon that Lambda runs beside a function with
// Active tracing (AWS_XRAY_DAEMON_ADDRESS): no layer, no collector, nothing
// at cold start but a UDP socket. Each span's parent is the invocation's
// segment (the Lambda trace header in the context), so the AWS calls and
// the webhook POST show inside the function's own trace; the queue carries
// the header on to the deliver invocation (queue.Outgoing.Trace). Without a
// daemon (make dev, tests) StartTracing does nothing and every span is a
// no-op: no error, no output. docs/decisions.md says why not the X-Ray SDK
// or ADOT's layer.

var (
	tracingOn atomic.Bool
	tracerMu  sync.Mutex
	tracer    trace.Tracer = noop.NewTracerProvider().Tracer("")
)

// StartTracing sends spans to the daemon at AWS_XRAY_DAEMON_ADDRESS (set by
// Lambda with Active tracing); without it, it does nothing. stop ends it.
func StartTracing() (stop func()) {
	addr := daemonAddress(os.Getenv("AWS_XRAY_DAEMON_ADDRESS"))
	if addr == "" {
		return func() {}
	}
	stop, err := StartTracingTo(addr)
	if err != nil {
		return func() {} // a daemon that cannot be dialled: no tracing, the function still runs
	}
	return stop
}

// daemonAddress is the UDP address of AWS_XRAY_DAEMON_ADDRESS, which is
// host:port or "tcp:host:port udp:host:port".
func daemonAddress(v string) string {
	for _, f := range strings.Fields(v) {
		if a, ok := strings.CutPrefix(f, "udp:"); ok {
			return a
		}
	}
	if strings.Contains(v, ":") && !strings.Contains(v, " ") && !strings.HasPrefix(v, "tcp:") {
		return v
	}
	return ""
}

// StartTracingTo sends spans to the X-Ray daemon at addr (UDP).
func StartTracingTo(addr string) (stop func(), err error) {
	conn, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	// Synchronous export: Lambda freezes the process once the handler
	// returns, so a batching exporter's spans could wait for the next
	// invocation or be lost. One UDP write per span is microseconds.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(&daemonExporter{conn: conn})),
		sdktrace.WithIDGenerator(xrayIDs{}),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())), // the invocation's Sampled decides
	)
	tracerMu.Lock()
	tracer = tp.Tracer("github.com/gifq/webhooks")
	tracerMu.Unlock()
	tracingOn.Store(true)
	return func() {
		tracingOn.Store(false)
		tracerMu.Lock()
		tracer = noop.NewTracerProvider().Tracer("")
		tracerMu.Unlock()
		_ = tp.Shutdown(context.Background())
	}, nil
}

// TracingOn says whether spans are sent.
func TracingOn() bool { return tracingOn.Load() }

// noSpan is the span StartSpan returns when it makes none: every method a
// no-op.
var noSpan = trace.SpanFromContext(context.Background())

// StartSpan starts a client span under ctx's span, or under the Lambda
// invocation's segment (the trace header in ctx). With tracing off, outside
// a traced invocation, or in a trace X-Ray did not sample (Sampled=0, most
// of them) it returns ctx and a no-op span, without allocating: an
// unsampled span is never recorded nor sent, and OpenTelemetry's SDK would
// still build one (a span id drawn from crypto/rand, its context, its
// options) for each AWS call and POST of every message
// (docs/performance.md "Our CPU per delivery").
func StartSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !tracingOn.Load() {
		return ctx, trace.SpanFromContext(ctx)
	}
	parent, ok := parentOf(ctx)
	if !ok {
		return ctx, trace.SpanFromContext(ctx) // not in a traced invocation
	}
	if !parent.IsSampled() {
		return ctx, noSpan
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	tracerMu.Lock()
	t := tracer
	tracerMu.Unlock()
	return t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// parentOf is the parent of a span started under ctx: ctx's span, else the
// invocation's segment (the trace header in ctx); false outside a trace.
func parentOf(ctx context.Context) (trace.SpanContext, bool) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc, true
	}
	return spanContextOf(TraceHeader(ctx))
}

// recorded says whether a span started under ctx is recorded and sent:
// tracing on, in a sampled trace. The AWS calls and the POST ask it before
// they build their span's attributes.
func recorded(ctx context.Context) bool {
	if !tracingOn.Load() {
		return false
	}
	sc, ok := parentOf(ctx)
	return ok && sc.IsSampled()
}

// spanContextOf reads an X-Ray trace header (Root=1-5759e988-bd862e3fe1be46a994272793;
// Parent=53995c3f42cd8ad8;Sampled=1) as the remote parent of our spans.
func spanContextOf(header string) (trace.SpanContext, bool) {
	var root, parent, sampled string
	for rest := header; rest != ""; {
		var f string
		f, rest, _ = strings.Cut(rest, ";")
		k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
		switch k {
		case "Root":
			root = v
		case "Parent":
			parent = v
		case "Sampled":
			sampled = v
		}
	}
	rest, ok := strings.CutPrefix(root, "1-")
	if !ok || len(rest) != 33 || rest[8] != '-' {
		return trace.SpanContext{}, false
	}
	tid, err := trace.TraceIDFromHex(rest[:8] + rest[9:])
	if err != nil {
		return trace.SpanContext{}, false
	}
	sid, err := trace.SpanIDFromHex(parent)
	if err != nil {
		return trace.SpanContext{}, false
	}
	var flags trace.TraceFlags
	if sampled == "1" {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true}), true
}

// xrayRoot is an OpenTelemetry trace id in X-Ray's form.
func xrayRoot(id trace.TraceID) string {
	h := hex.EncodeToString(id[:])
	return "1-" + h[:8] + "-" + h[8:]
}

// AWSTracing adds a span around every AWS SDK call, retries included
// (aws.Config.APIOptions): the service, operation, region and request id.
func AWSTracing(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("GifqTrace", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if !recorded(ctx) {
			return next.HandleInitialize(ctx, in)
		}
		service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
		ctx, span := StartSpan(ctx, service, attribute.String("aws.service", service), attribute.String("aws.operation", op),
			attribute.String("aws.region", awsmiddleware.GetRegion(ctx)))
		out, md, err := next.HandleInitialize(ctx, in)
		if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
			span.SetAttributes(attribute.String("aws.request_id", id))
		}
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			span.SetAttributes(attribute.Int("http.status_code", re.HTTPStatusCode()))
		}
		if err != nil {
			span.SetStatus(codes.Error, "")
		}
		span.End()
		return out, md, err
	}), middleware.After)
}

// TracedTransport makes a span of every request rt sends (the webhook POST):
// the endpoint's host, method, URL without its query (which may hold a
// customer's token) and the status.
func TracedTransport(rt http.RoundTripper) http.RoundTripper { return tracedTransport{rt} }

type tracedTransport struct{ http.RoundTripper }

func (t tracedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !recorded(r.Context()) {
		return t.RoundTripper.RoundTrip(r)
	}
	ctx, span := StartSpan(r.Context(), r.URL.Hostname(), attribute.String("http.method", r.Method), attribute.String("http.url", withoutSecrets(r.URL)))
	defer span.End()
	resp, err := t.RoundTripper.RoundTrip(r.WithContext(ctx))
	if err != nil {
		span.SetStatus(codes.Error, "transport error")
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.status_code", resp.StatusCode))
	return resp, nil
}

// xrayIDs makes trace ids X-Ray accepts: the first 4 bytes are the epoch
// second. (Our spans have the invocation's trace; this is for the rest.)
type xrayIDs struct{}

func (xrayIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	var tid trace.TraceID
	var sid trace.SpanID
	now := uint32(time.Now().Unix())
	tid[0], tid[1], tid[2], tid[3] = byte(now>>24), byte(now>>16), byte(now>>8), byte(now)
	randomFill(tid[4:])
	randomFill(sid[:])
	return tid, sid
}

func (xrayIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	var sid trace.SpanID
	randomFill(sid[:])
	return sid
}

// daemonExporter sends each span to the X-Ray daemon as a subsegment
// document (the daemon's UDP protocol: a JSON header line, then the doc).
type daemonExporter struct {
	mu   sync.Mutex
	conn net.Conn
}

var daemonHeader = []byte(`{"format":"json","version":1}` + "\n")

func (e *daemonExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range spans {
		doc, err := json.Marshal(subsegmentOf(s))
		if err != nil {
			continue
		}
		// A lost datagram loses one span; an error here would only be
		// printed by OpenTelemetry's handler on every call while the
		// daemon is away.
		_, _ = e.conn.Write(append(append([]byte{}, daemonHeader...), doc...))
	}
	return nil
}

func (e *daemonExporter) Shutdown(context.Context) error { return e.conn.Close() }

// Subsegment is an X-Ray subsegment document, sent on its own.
type Subsegment struct {
	Type      string            `json:"type"` // "subsegment"
	ID        string            `json:"id"`
	TraceID   string            `json:"trace_id"`
	ParentID  string            `json:"parent_id"`
	Name      string            `json:"name"`
	StartTime float64           `json:"start_time"`
	EndTime   float64           `json:"end_time"`
	Namespace string            `json:"namespace,omitempty"` // "aws" or "remote"
	Error     bool              `json:"error,omitempty"`     // 4xx
	Fault     bool              `json:"fault,omitempty"`     // 5xx, transport error
	AWS       map[string]string `json:"aws,omitempty"`
	HTTP      *SubsegmentHTTP   `json:"http,omitempty"`
}

// SubsegmentHTTP is a subsegment's http part.
type SubsegmentHTTP struct {
	Request  map[string]string `json:"request,omitempty"`
	Response map[string]int    `json:"response,omitempty"`
}

func subsegmentOf(s sdktrace.ReadOnlySpan) Subsegment {
	sc := s.SpanContext()
	doc := Subsegment{Type: "subsegment", ID: sc.SpanID().String(), TraceID: xrayRoot(sc.TraceID()),
		ParentID: s.Parent().SpanID().String(), Name: s.Name(),
		StartTime: seconds(s.StartTime()), EndTime: seconds(s.EndTime())}
	attrs := map[string]attribute.Value{}
	for _, a := range s.Attributes() {
		attrs[string(a.Key)] = a.Value
	}
	status := int(attrs["http.status_code"].AsInt64())
	if svc, ok := attrs["aws.service"]; ok {
		doc.Namespace = "aws"
		doc.AWS = map[string]string{"operation": attrs["aws.operation"].AsString(), "region": attrs["aws.region"].AsString()}
		if id, ok := attrs["aws.request_id"]; ok {
			doc.AWS["request_id"] = id.AsString()
		}
		doc.Name = svc.AsString()
	}
	if m, ok := attrs["http.method"]; ok {
		doc.Namespace = "remote"
		doc.HTTP = &SubsegmentHTTP{Request: map[string]string{"method": m.AsString(), "url": attrs["http.url"].AsString()}}
	}
	if status != 0 {
		if doc.HTTP == nil {
			doc.HTTP = &SubsegmentHTTP{}
		}
		doc.HTTP.Response = map[string]int{"status": status}
	}
	doc.Error = status >= 400 && status < 500
	doc.Fault = status >= 500 || (status == 0 && s.Status().Code == codes.Error)
	return doc
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func randomFill(b []byte) { _, _ = cryptorand.Read(b) }

// SafeURL is an endpoint's URL as logs, traces and operational events may
// show it: scheme, host and path, never its query, fragment or user info
// (customers put tokens there). Not a URL: "".
func SafeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return withoutSecrets(u)
}

func withoutSecrets(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
