package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// lambdaRequestLimit is the most Lambda takes in a synchronous invoke's
// request ("Request must be smaller than 6291456 bytes").
const lambdaRequestLimit = 6 << 20

// batchOf is a batch of n events whose "pad" string holds each.
func batchOf(n int, pad string) []byte {
	ev := `{"body":{"event":"a","pad":"` + pad + `"}}`
	return []byte(`{"events":[` + strings.TrimSuffix(strings.Repeat(ev+",", n), ",") + `]}`)
}

// proxyEvent is the event API Gateway sends the function for a body: the
// REST API's proxy event (an HTTP API's payload 1.0 is the same shape),
// with the headers a producer's request carries, each twice as API
// Gateway writes them (headers and multiValueHeaders).
func proxyEvent(t *testing.T, body []byte) []byte {
	t.Helper()
	h := map[string]string{
		"Authorization": "Bearer gifq_" + strings.Repeat("k", 40), "Content-Type": "application/json",
		"Host": "abcdefghij.execute-api.eu-west-1.amazonaws.com", "User-Agent": strings.Repeat("u", 200),
		"X-Amzn-Trace-Id": "Root=1-" + strings.Repeat("0", 32), "X-Forwarded-For": "203.0.113.7, 198.51.100.1",
		"X-Forwarded-Port": "443", "X-Forwarded-Proto": "https", "Idempotency-Key": strings.Repeat("i", 255),
	}
	mh := map[string][]string{}
	for k, v := range h {
		mh[k] = []string{v}
	}
	b, err := json.Marshal(events.APIGatewayProxyRequest{
		Resource: "/{proxy+}", Path: "/v1/events/batch", HTTPMethod: "POST", Headers: h, MultiValueHeaders: mh,
		PathParameters: map[string]string{"proxy": "v1/events/batch"},
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID: "123456789012", ResourceID: "abc123", Stage: "prod", RequestID: strings.Repeat("r", 36),
			Identity:     events.APIGatewayRequestIdentity{SourceIP: "203.0.113.7", UserAgent: h["User-Agent"]},
			ResourcePath: "/{proxy+}", HTTPMethod: "POST", APIID: "abcdefghij", Protocol: "HTTP/1.1",
			DomainName: h["Host"], RequestTime: "06/Dec/2026:04:00:00 +0000", RequestTimeEpoch: 1796529600000,
		},
		Body: string(body),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A batch at the bound, of the bytes that escape worst (control
// characters, \u00XX each), still fits Lambda's request inside API
// Gateway's event: every batch within the bound reaches the function on
// AWS, and one byte more is the function's 413, never a 5xx from a
// request Lambda refused. With the old 5 MiB bound a quote-heavy batch
// did not fit (the event is built here, as API Gateway builds it).
func TestWorstBatchFitsLambdasRequest(t *testing.T) {
	for _, fill := range []byte{0x01, '"', '\\'} {
		worst := []byte(strings.Repeat(string(fill), maxBatchBody))
		if n := len(proxyEvent(t, worst)); n >= lambdaRequestLimit {
			t.Errorf("a %d-byte batch of %q makes a %d-byte event: Lambda refuses it before the function runs", len(worst), fill, n)
		}
	}
	quotes := batchOf(100, strings.Repeat(`\"`, 4950)) // 100 events of ~10 KB, all escaped quotes
	if len(quotes) > maxBatchBody {
		t.Fatalf("the quote-heavy batch is %d bytes", len(quotes))
	}
	if _, tooLarge := batchTooLarge(quotes); tooLarge {
		t.Errorf("a %d-byte quote-heavy batch was refused", len(quotes))
	}
	a := &API{}
	r := a.postEventBatch(context.Background(), &request{body: []byte(strings.Repeat(" ", maxBatchBody+1))})
	if r.status != 413 || r.code() != "body_too_large" {
		t.Fatalf("a batch one byte over: %d %s, want 413 body_too_large", r.status, r.code())
	}
	if msg := r.body.(errorBody).Error.Message; !strings.Contains(msg, "999999 bytes") || !strings.Contains(msg, "send fewer events") {
		t.Errorf("message %q does not say the bound or what to do", msg)
	}
}
