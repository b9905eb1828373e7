package obs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/obs"
)

const (
	lambdaHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;Lineage=a87bd80c:0"
	root         = "1-5759e988-bd862e3fe1be46a994272793"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// daemon is a UDP listener standing where Lambda's X-Ray daemon listens;
// docs returns the subsegments it got.
func daemon(t *testing.T) (addr string, docs func(n int) []obs.Subsegment) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().String(), func(n int) []obs.Subsegment {
		var out []obs.Subsegment
		buf := make([]byte, 64<<10)
		for len(out) < n {
			pc.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, _, err := pc.ReadFrom(buf)
			if err != nil {
				t.Fatalf("after %d of %d documents: %v", len(out), n, err)
			}
			head, doc, ok := bytes.Cut(buf[:k], []byte("\n"))
			if !ok || string(head) != `{"format":"json","version":1}` {
				t.Fatalf("datagram %q: not the daemon protocol", buf[:k])
			}
			var s obs.Subsegment
			if err := json.Unmarshal(doc, &s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
}

// lambdaCtx is a context as aws-lambda-go makes it for an invocation.
func lambdaCtx() context.Context {
	//lint:ignore SA1029 the runtime's own key: aws-lambda-go sets it as this plain string
	return context.WithValue(context.Background(), "x-amzn-trace-id", lambdaHeader) //nolint:staticcheck
}

// TestAWSCallsAndWebhookPOSTAreSubsegments: with tracing on, a DynamoDB and
// an SQS call (against the emulators) and a webhook POST each reach the
// daemon as a subsegment of the invocation's segment, in its trace.
func TestAWSCallsAndWebhookPOSTAreSubsegments(t *testing.T) {
	env := testenv.New(t)
	addr, docs := daemon(t)
	stop, err := obs.StartTracingTo(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := lambdaCtx()
	traced := func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, obs.AWSTracing) }
	if _, err := env.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &env.Table}, traced); err != nil {
		t.Fatal(err)
	}
	if _, err := env.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &env.Queues.Delivery},
		func(o *sqs.Options) { o.APIOptions = append(o.APIOptions, obs.AWSTracing) }); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" || r.Header.Get("X-Amzn-Trace-Id") != "" {
			t.Errorf("the receiver got our trace headers: %v", r.Header)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/hooks?token=secret", strings.NewReader("{}"))
	resp, err := (&http.Client{Transport: obs.TracedTransport(http.DefaultTransport)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	got := docs(3)
	for _, d := range got {
		if d.Type != "subsegment" || d.TraceID != root || d.ParentID != "53995c3f42cd8ad8" || len(d.ID) != 16 || d.EndTime < d.StartTime {
			t.Errorf("not a subsegment of the invocation: %+v", d)
		}
	}
	if d := got[0]; d.Name != "DynamoDB" || d.Namespace != "aws" || d.AWS["operation"] != "DescribeTable" || d.Fault {
		t.Errorf("DynamoDB call: %+v", d)
	}
	if d := got[1]; d.Name != "SQS" || d.AWS["operation"] != "GetQueueAttributes" {
		t.Errorf("SQS call: %+v", d)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if d := got[2]; d.Namespace != "remote" || !strings.HasPrefix(host, d.Name) || d.HTTP.Request["method"] != "POST" ||
		d.HTTP.Request["url"] != srv.URL+"/hooks" || d.HTTP.Response["status"] != 503 || !d.Fault {
		t.Errorf("webhook POST: %+v (the URL's query must not be recorded)", d)
	}
}

// TestTracingOffIsSilent: without a daemon (make dev) the instrumented
// calls work and send nothing; an untraced context starts no span either.
func TestTracingOffIsSilent(t *testing.T) {
	if obs.TracingOn() {
		t.Fatal("tracing on without StartTracing")
	}
	t.Setenv("AWS_XRAY_DAEMON_ADDRESS", "")
	obs.StartTracing()() // no address: nothing starts
	if _, span := obs.StartSpan(lambdaCtx(), "x"); span.SpanContext().IsValid() {
		t.Errorf("a span without tracing: %v", span.SpanContext())
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(lambdaCtx(), http.MethodPost, srv.URL, nil)
	if resp, err := (&http.Client{Transport: obs.TracedTransport(http.DefaultTransport)}).Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("%v %v", resp, err)
	}
	// On, but a context outside any invocation: no span, no document.
	addr, _ := daemon(t)
	stop, err := obs.StartTracingTo(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if _, span := obs.StartSpan(context.Background(), "x"); span.SpanContext().IsValid() {
		t.Error("a span outside an invocation")
	}
}

// unsampled starts tracing to a UDP socket of the test's (the daemon) and
// returns it with the context of an invocation X-Ray did not sample.
func unsampled(t *testing.T) (net.PacketConn, context.Context) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	stop, err := obs.StartTracingTo(pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return pc, obs.WithTraceHeader(context.Background(), strings.Replace(lambdaHeader, "Sampled=1", "Sampled=0", 1))
}

// TestUnsampledInvocationSendsNothing: Sampled=0 (X-Ray's sampling said no)
// records no subsegment.
func TestUnsampledInvocationSendsNothing(t *testing.T) {
	pc, ctx := unsampled(t)
	_, span := obs.StartSpan(ctx, "x")
	span.End()
	pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, _, err := pc.ReadFrom(make([]byte, 1024)); err == nil {
		t.Errorf("an unsampled span was sent (%d bytes)", n)
	}
}

// TestCarriedTraceParentsTheSpans: under obs.WithTraceHeader(ctx, msg.Trace)
// (what the worker does per message) a span joins the event's trace, not
// the invocation's.
func TestCarriedTraceParentsTheSpans(t *testing.T) {
	addr, docs := daemon(t)
	stop, err := obs.StartTracingTo(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	event := "Root=1-5759e988-000000000000000000000002;Parent=0000000000000002;Sampled=1"
	_, span := obs.StartSpan(obs.WithTraceHeader(lambdaCtx(), event), "attempt")
	span.End()
	if d := docs(1)[0]; d.TraceID != "1-5759e988-000000000000000000000002" || d.ParentID != "0000000000000002" {
		t.Errorf("span %+v, want it in the event's trace", d)
	}
}

// TestUnsampledTraceBuildsNoSpan: in a trace X-Ray did not sample, a span
// is not even built (OpenTelemetry's SDK would make a non-recording one,
// with a span id from crypto/rand, per AWS call and POST): StartSpan hands
// back ctx as it was and a no-op span, and allocates nothing; the AWS
// calls' and the POST's spans are not started at all (their attributes not
// built). A sampled trace still gets its span.
func TestUnsampledTraceBuildsNoSpan(t *testing.T) {
	_, ctx := unsampled(t)
	got, span := obs.StartSpan(ctx, "x")
	if got != ctx || span.IsRecording() || span.SpanContext().IsValid() {
		t.Errorf("unsampled: a new context (%v) or a span (recording %v, %v)", got != ctx, span.IsRecording(), span.SpanContext())
	}
	if n := testing.AllocsPerRun(100, func() {
		_, s := obs.StartSpan(ctx, "x")
		s.End()
	}); n != 0 {
		t.Errorf("unsampled StartSpan: %v allocations, want 0", n)
	}
	resp := &http.Response{StatusCode: 200}
	post := obs.TracedTransport(roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil }))
	req := httptest.NewRequest(http.MethodPost, "https://receiver.example/hook?token=x", nil).WithContext(ctx)
	if n := testing.AllocsPerRun(100, func() { _, _ = post.RoundTrip(req) }); n != 0 {
		t.Errorf("unsampled POST: %v allocations in the traced transport, want 0", n)
	}
	_, span = obs.StartSpan(obs.WithTraceHeader(context.Background(), lambdaHeader), "x")
	defer span.End()
	if !span.IsRecording() {
		t.Error("sampled: no recording span")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
