package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/destination/webhook"
)

// The endpoint kinds every account has, one endpoint each.
var kinds = []string{"healthy", "slow", "hanging", "refusing", "flapping", "fail_then_ok", "gone", "throttling"}

const (
	slowFor     = 1500 * time.Millisecond // under the soak's 3 s delivery timeout
	flapPeriod  = 20 * time.Second        // up, then down, as long
	failFirst   = 2                       // fail_then_ok: 503 to the first attempts of each delivery
	retryAfterS = "2"                     // throttling's Retry-After
)

// receiver is every account's endpoints: the path /<account>/<kind> says
// how to answer. It notes what the checker needs: the requests, the 2xx
// answers and the concurrent requests of each delivery (event and path).
type receiver struct {
	mu         sync.Mutex
	started    time.Time
	requests   map[string]int
	ok         map[string]int
	inFlight   map[string]int
	concurrent map[string]int // deliveries that had two requests open at once: the most at once
	total      int
	log        map[string][]request // each delivery's requests (event and path)
}

// request is one request a receiver took: when it came, when it was
// answered, and how (0: the sender gave up first).
type request struct {
	at, end time.Time
	code    int
}

func newReceiver() *receiver {
	return &receiver{started: time.Now(), requests: map[string]int{}, ok: map[string]int{}, inFlight: map[string]int{}, concurrent: map[string]int{}, log: map[string][]request{}}
}

// refusingURL is a loopback address that refuses connections: a port that
// was free a moment ago.
func refusingURL() string {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/refusing"
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	kind := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	key := r.Header.Get(webhook.HeaderEventID) + "|" + r.URL.Path
	at := time.Now()
	rv.mu.Lock()
	rv.total++
	rv.requests[key]++
	n := rv.requests[key]
	rv.inFlight[key]++
	if c := rv.inFlight[key]; c > 1 && c > rv.concurrent[key] {
		rv.concurrent[key] = c
	}
	rv.mu.Unlock()
	code := rv.answer(kind, n, w, r)
	rv.mu.Lock()
	rv.inFlight[key]--
	rv.log[key] = append(rv.log[key], request{at, time.Now(), code})
	if code/100 == 2 {
		rv.ok[key]++
	}
	rv.mu.Unlock()
}

// answer answers as kind does to the n-th request of a delivery.
func (rv *receiver) answer(kind string, n int, w http.ResponseWriter, r *http.Request) int {
	code := http.StatusOK
	switch kind {
	case "slow":
		select {
		case <-time.After(slowFor):
		case <-r.Context().Done():
			return 0
		}
	case "hanging":
		<-r.Context().Done() // until the sender gives up
		return 0
	case "flapping":
		if int(time.Since(rv.started)/flapPeriod)%2 == 1 {
			code = http.StatusServiceUnavailable
		}
	case "fail_then_ok":
		if n <= failFirst {
			code = http.StatusBadGateway
		}
	case "gone":
		code = http.StatusGone
	case "throttling":
		if n%2 == 1 {
			w.Header().Set("Retry-After", retryAfterS)
			code = http.StatusTooManyRequests
		}
	}
	w.WriteHeader(code)
	return code
}
