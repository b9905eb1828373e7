package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/listen"
)

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// gifq listen forwards a posted event, read from its polling endpoint, to a
// local receiver that verifies it with the endpoint's secret; it prints the
// forward and the local answer, and stops cleanly when its context ends.
func TestListenForwardsSignedEvents(t *testing.T) {
	h := start(t, opts{})
	_, key := h.account(t)
	var ep struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
		Token  string `json:"poll_token"`
	}
	if code := h.call(t, key, "POST", "/v1/endpoints", `{"type":"polling"}`, &ep); code != 201 {
		t.Fatalf("register: %d", code)
	}
	local := h.receiver(t, always(202))
	local.setSecret(ep.Secret)
	out := &syncWriter{}
	l := &listen.Listener{API: h.api, Token: ep.Token, Endpoint: ep.ID, Secret: ep.Secret, Forward: local.URL, Out: out,
		MinWait: 200 * time.Millisecond, MaxWait: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	ev := h.publish(t, key, payout)
	// Stopped once it printed the local answer (Ctrl-C then): the page it
	// forwarded is committed all the same.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "-> 202") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listener did not stop")
	}
	got := local.requests()
	if len(got) != 1 {
		t.Fatalf("the local receiver got %d requests", len(got))
	}
	if got[0].verified != nil || string(got[0].body) != payout || got[0].header.Get("X-Gifq-Event-Id") != ev.ID ||
		got[0].header.Get("X-Gifq-Event") != "payout.fulfilled" || got[0].header.Get("Webhook-Signature") == "" {
		t.Errorf("forwarded: verified %v, headers %v, body %s", got[0].verified, got[0].header, got[0].body)
	}
	if s := out.String(); !strings.Contains(s, ev.ID) || !strings.Contains(s, "-> 202") {
		t.Errorf("printed: %s", s)
	}
	// What it forwarded was committed: a second run starts after it.
	var p pollOut
	if code := h.call(t, key, "GET", "/v1/endpoints/"+ep.ID+"/poll", nil, &p); code != 200 || len(p.Data) != 0 {
		t.Errorf("after the run, the endpoint still has %d events (%d)", len(p.Data), code)
	}
}
