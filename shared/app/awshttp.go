package app

import (
	"net/http"

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

// AWSHTTPClient is the HTTP client of the DynamoDB and SQS clients: the SDK's
// own, with enough idle connections kept per host for the calls in flight.
func AWSHTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = 2 * awsIdleConnsPerHost
		tr.MaxIdleConnsPerHost = awsIdleConnsPerHost
	})
}
