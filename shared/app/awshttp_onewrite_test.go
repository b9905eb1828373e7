package app

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// countingConn counts the writes (system calls) made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func countWrites(writes *atomic.Int64) func(*http.Transport) {
	return func(tr *http.Transport) {
		var d net.Dialer
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{c, writes}, nil
		}
	}
}

// getItems makes n GetItem calls through the SDK with client.
func getItems(t *testing.T, client aws.HTTPClient, url string, n int) {
	t.Helper()
	db := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(url), HTTPClient: client,
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
	for i := 0; i < n; i++ {
		_, err := db.GetItem(context.Background(), &dynamodb.GetItemInput{
			TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Each DynamoDB call leaves in one write: headers and body together. The
// SDK's own client writes the headers and then the body, two system calls
// and two TCP segments per call (the control below; were the SDK to change
// that, the control fails and this client's wrapper can go).
func TestAWSCallIsWrittenInOneWrite(t *testing.T) {
	var keys atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Key map[string]map[string]string
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Key["pk"]["S"] != "k" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		keys.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()

	const calls = 20
	var ours, sdks atomic.Int64
	getItems(t, awsHTTPClient(countWrites(&ours)), srv.URL, calls)
	getItems(t, awshttp.NewBuildableClient().WithTransportOptions(countWrites(&sdks)), srv.URL, calls)

	if keys.Load() != 2*calls {
		t.Fatalf("the server read %d whole requests; want %d", keys.Load(), 2*calls)
	}
	if n := ours.Load(); n != calls {
		t.Errorf("%d calls took %d writes; want one each", calls, n)
	}
	if n := sdks.Load(); n != 2*calls {
		t.Errorf("control: the SDK's own client took %d writes for %d calls; expected two each", n, calls)
	}
}
