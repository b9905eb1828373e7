package app

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// A process making 32 calls at once, round after round, to one endpoint
// keeps its connections: it never opens more than one per call in flight.
// (The SDK's default client keeps 10 idle per host, so each round closed 22
// connections and dialled 22 new ones.)
func TestAWSHTTPClientReusesConnectionsForConcurrentCalls(t *testing.T) {
	var opened atomic.Int64
	var inFlight sync.WaitGroup
	var release atomic.Pointer[chan struct{}]
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		inFlight.Done()
		<-*release.Load() // hold every call of the round open at once
		w.WriteHeader(http.StatusOK)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	const concurrent, rounds = 32, 5
	client := AWSHTTPClient()
	for round := 0; round < rounds; round++ {
		inFlight.Add(concurrent)
		gate := make(chan struct{})
		release.Store(&gate)
		var done sync.WaitGroup
		for i := 0; i < concurrent; i++ {
			done.Add(1)
			go func() {
				defer done.Done()
				resp, err := client.Do(must(http.NewRequest(http.MethodPost, srv.URL, nil)))
				if err != nil {
					t.Error(err)
					inFlight.Done()
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		inFlight.Wait()
		close(gate)
		done.Wait()
	}
	if n := opened.Load(); n > concurrent {
		t.Fatalf("%d rounds of %d concurrent calls opened %d connections; want at most %d", rounds, concurrent, n, concurrent)
	}
}

func must(r *http.Request, err error) *http.Request {
	if err != nil {
		panic(err)
	}
	return r
}
