package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/queue"
)

// A trace is what the system process did with each delivery's messages,
// one JSON line per event, appended as it happens (a killed process has
// written its lines): every message sent (its lane, its delay, lost or
// not), received (its receive count), every fault injected on it, every
// clock jump. The checker joins it with the attempt log and the
// receiver's requests to explain a delivery final past its allowance.
type traceLine struct {
	At       int64  `json:"t"`           // real time, unix ms
	Offset   int64  `json:"o,omitempty"` // the functions' clock minus the real one, ms
	Delivery string `json:"d,omitempty"` // the delivery's id ("" for a clock jump)
	What     string `json:"k"`           // send, receive, change_visibility, a fault kind
	Lane     string `json:"q,omitempty"` // fast, slow, paced, dlq
	Detail   string `json:"x,omitempty"` // delay, receive count, gen, hops...
}

type tracer struct {
	mu    sync.Mutex
	f     *os.File
	lanes map[string]string // queue URL -> lane
	clk   timeSource
	held  sync.Map // receipt handle -> delivery id
}

// receipt remembers which delivery a receipt handle is of.
func (t *tracer) receipt(handle, body string) {
	if m, err := queue.Decode(body); err == nil {
		t.held.Store(handle, m.DeliveryID)
	}
}

// handle notes a call on a received message by its receipt handle.
func (t *tracer) handle(handle, what, url, detail string) {
	if t == nil {
		return
	}
	if d, ok := t.held.Load(handle); ok {
		t.note(d.(string), what, url, detail)
	}
}

// timeSource is the trace's clock: the time a line is written at (the
// soak's real time, the simulation's simulated time) and the functions'
// clock's offset from it.
type timeSource interface {
	at() time.Time
	off() time.Duration
}

func newTracer(path string, lanes map[string]string, clk timeSource) (*tracer, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, faultsFileMode)
	if err != nil {
		return nil, err
	}
	return &tracer{f: f, lanes: lanes, clk: clk}, nil
}

// note appends one line (nil tracer: nothing).
func (t *tracer) note(delivery, what, url, detail string) {
	if t == nil {
		return
	}
	l := traceLine{At: t.clk.at().UnixMilli(), Offset: t.clk.off().Milliseconds(), Delivery: delivery, What: what, Lane: t.lanes[url], Detail: detail}
	b, _ := json.Marshal(l)
	t.mu.Lock()
	_, _ = t.f.Write(append(b, '\n'))
	t.mu.Unlock()
}

// body notes a message by its body: its delivery, gen and hops.
func (t *tracer) body(body, what, url, detail string) {
	if t == nil {
		return
	}
	m, err := queue.Decode(body)
	if err != nil {
		return
	}
	t.note(m.DeliveryID, what, url, strings.TrimSpace(fmt.Sprintf("%s gen=%d hops=%d deferred=%d %s", m.Kind, m.Gen, m.Hops, m.Deferred, detail)))
}

// readTrace is the trace's lines by delivery, and the clock jumps.
func readTrace(path string) (map[string][]traceLine, []traceLine, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	byDelivery, jumps := map[string][]traceLine{}, []traceLine(nil)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var l traceLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // a line a killed process cut short
		}
		if l.What == faultClock {
			jumps = append(jumps, l)
		} else if l.Delivery != "" {
			byDelivery[l.Delivery] = append(byDelivery[l.Delivery], l)
		}
	}
	return byDelivery, jumps, sc.Err()
}

// event is one line of a delivery's timeline.
type event struct {
	at   time.Time
	what string
}

// timeline prints events sorted, each relative to start, marking the
// deadline and the allowance's end.
func timeline(start, deadline time.Time, allowance time.Duration, evs []event) string {
	evs = append(evs, event{deadline, "---- deadline"}, event{deadline.Add(allowance), "---- deadline + one sweep"})
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "      %8.3fs  %s\n", e.at.Sub(start).Seconds(), e.what)
	}
	return b.String()
}
