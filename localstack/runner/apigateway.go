// Package runner runs the Lambda handlers on one machine the way AWS drives
// them: an HTTP server that turns requests into API Gateway proxy events, an
// SQS poller that invokes the deliver handler like the Lambda event source
// mapping, and a timer for the sweeper. Handlers are called through
// lambda.NewHandler(...).Invoke with JSON, the path the Lambda runtime uses
// (one such handler per invocation in flight: Concurrent).
package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gifq/webhooks/shared/domain"
)

// APIGateway serves HTTP by invoking a REST API proxy-integration handler.
type APIGateway struct {
	Handler lambda.Handler // invoked for requests at once: Concurrent, not lambda.NewHandler
	Stage   string
	// MaxBody is API Gateway's payload limit (10 MB); larger requests get 413
	// from the gateway itself, as in AWS.
	MaxBody int64
}

func (g *APIGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, g.MaxBody+1))
	if err != nil {
		http.Error(w, `{"message":"could not read the request"}`, http.StatusBadRequest)
		return
	}
	if int64(len(body)) > g.MaxBody {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, `{"message":"Request Too Long"}`)
		return
	}
	ev := events.APIGatewayProxyRequest{
		Resource:                        "/{proxy+}",
		Path:                            r.URL.Path,
		HTTPMethod:                      r.Method,
		Headers:                         map[string]string{},
		MultiValueHeaders:               map[string][]string{},
		QueryStringParameters:           map[string]string{},
		MultiValueQueryStringParameters: map[string][]string{},
		PathParameters:                  map[string]string{"proxy": strings.TrimPrefix(r.URL.Path, "/")},
		RequestContext: events.APIGatewayProxyRequestContext{
			RequestID: domain.NewID("req"), Stage: g.Stage, HTTPMethod: r.Method, Path: "/" + g.Stage + r.URL.Path,
			ResourcePath: "/{proxy+}", RequestTimeEpoch: time.Now().UnixMilli(),
			Identity: events.APIGatewayRequestIdentity{SourceIP: sourceIP(r), UserAgent: r.UserAgent()},
		},
	}
	for k, v := range r.Header {
		ev.Headers[k] = v[len(v)-1]
		ev.MultiValueHeaders[k] = v
	}
	for k, v := range r.URL.Query() {
		ev.QueryStringParameters[k] = v[len(v)-1]
		ev.MultiValueQueryStringParameters[k] = v
	}
	// API Gateway passes text as is and anything else base64-encoded.
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	payload, _ := json.Marshal(ev)
	ctx, cancel := context.WithTimeout(r.Context(), 29*time.Second) // API Gateway's integration timeout
	defer cancel()
	out, err := g.Handler.Invoke(ctx, payload)
	var resp events.APIGatewayProxyResponse
	if err == nil {
		err = json.Unmarshal(out, &resp)
	}
	if err != nil || resp.StatusCode == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `{"message":"Internal server error"}`)
		return
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	respBody := []byte(resp.Body)
	if resp.IsBase64Encoded {
		respBody, _ = base64.StdEncoding.DecodeString(resp.Body)
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(respBody)
}

func sourceIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
