package app

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// awsIdleConnsPerHost is how many idle connections to one AWS endpoint
// (DynamoDB, SQS) the clients keep. The SDK's default keeps 10, fewer than
// the calls a process makes at once (a deliver batch of 10 messages makes
// up to 10 concurrent DynamoDB calls; make dev runs every function and
// several batches in one process), so every call beyond the tenth closed its
// connection after use and the next call dialled a new one: a TCP handshake
// and a fresh connection in the emulator, per call.
const awsIdleConnsPerHost = 128

// maxOneWriteBody is the largest request body sent in the same write as its
// headers. DynamoDB and SQS requests are a few hundred bytes to a few KiB;
// the largest (a BatchWriteItem of 25 events' deliveries, a 256 KiB event)
// stay well under it.
const maxOneWriteBody = 1 << 20

// AWSHTTPClient is the HTTP client of the DynamoDB and SQS clients: the SDK's
// own, with enough idle connections kept per host for the calls in flight,
// and each request written to its connection in one piece.
func AWSHTTPClient() aws.HTTPClient {
	return awsHTTPClient(nil)
}

func awsHTTPClient(tune func(*http.Transport)) aws.HTTPClient {
	return OneWrite{awsTransport(tune)}
}

// AWSTransport is the SDK's own client with the idle connections kept. The
// SDK's config loader adds AWS_CA_BUNDLE's certificates only to a client of
// this type, so onlambda.FromEnv hands it this and wraps what it gets back
// in OneWrite.
func AWSTransport() *awshttp.BuildableClient { return awsTransport(nil) }

// awsTransport is AWSTransport; tune, when not nil, changes the transport
// further (the tests count its writes).
func awsTransport(tune func(*http.Transport)) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = 2 * awsIdleConnsPerHost
		tr.MaxIdleConnsPerHost = awsIdleConnsPerHost
		if tune != nil {
			tune(tr)
		}
	})
}

// OneWrite hands net/http each request's body as a bytes.Reader. The SDK
// wraps its (in-memory) body in a reader net/http does not know, so net/http
// flushed the headers in a write of their own before copying the body: two
// system calls and two TCP segments per call, each waking the emulator (or,
// in AWS, two TLS records). With a body net/http knows to be in memory, the
// headers and the body leave in one write.
type OneWrite struct{ Next aws.HTTPClient }

func (c OneWrite) Do(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 || req.ContentLength > maxOneWriteBody {
		return c.Next.Do(req)
	}
	body := make([]byte, req.ContentLength)
	_, err := io.ReadFull(req.Body, body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	r := *req // a shallow copy: the caller's request is left as it was
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return c.Next.Do(&r)
}
