// Package listen is `gifq listen`: it reads a polling endpoint's events and
// POSTs each to a URL on the developer's own machine, signed with that
// endpoint's secret exactly as a real delivery is (the same sender, the same
// headers), so the receiver's own verification code runs against it.
package listen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/netguard"
)

// Listener forwards one polling endpoint's events to a local URL.
type Listener struct {
	API      string // the API's base URL, e.g. http://127.0.0.1:8080
	Token    string // an API key, a portal token or the endpoint's poll token
	Endpoint string // the polling endpoint's id
	Secret   string // its signing secret (whsec_...)
	Forward  string // where to POST: an http(s) URL on localhost
	Out      io.Writer
	// Idle backoff: after a read that found nothing, wait MinWait, doubling
	// up to MaxWait; any event resets it. Zero: 1 s and 15 s.
	MinWait, MaxWait time.Duration
	Client           *http.Client // for the API; nil: a client with a 30 s timeout
}

// ErrNotLocal: the forward URL is not on this machine.
var ErrNotLocal = errors.New("the forward URL must be http(s) on localhost, 127.0.0.1 or ::1")

// CheckForward accepts only a URL on this machine: the listener signs with a
// real secret and must not become a way to send it elsewhere.
func CheckForward(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ErrNotLocal
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return ErrNotLocal
	}
	return nil
}

type page struct {
	Data []struct {
		ID    string          `json:"id"`
		Event string          `json:"event"`
		Body  json.RawMessage `json:"body"`
	} `json:"data"`
	NextCursor string `json:"next_cursor"`
	Done       bool   `json:"done"`
}

// Run forwards events until ctx ends (Ctrl-C), then returns nil. Each page
// read is committed once its events were forwarded, whatever the local
// answers, so a restart goes on from there. An API error ends the run.
func (l *Listener) Run(ctx context.Context) error {
	if err := CheckForward(l.Forward); err != nil {
		return err
	}
	if l.Client == nil {
		l.Client = &http.Client{Timeout: 30 * time.Second}
	}
	minWait, maxWait := l.MinWait, l.MaxWait
	if minWait <= 0 {
		minWait = time.Second
	}
	if maxWait < minWait {
		maxWait = max(15*time.Second, minWait)
	}
	s := webhook.New(webhook.Options{Policy: netguard.Policy{AllowPrivate: true, Schemes: []string{"http", "https"}}, Timeout: 10 * time.Second})
	fmt.Fprintf(l.Out, "forwarding the events of %s to %s (Ctrl-C to stop)\n", l.Endpoint, l.Forward)
	wait, cursor := minWait, ""
	for {
		p, err := l.read(ctx, cursor)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		for _, ev := range p.Data {
			if ctx.Err() != nil || !l.forward(ctx, s, ev.ID, ev.Event, ev.Body) {
				return nil // a page cut short is not committed: the next run forwards it again
			}
		}
		if p.NextCursor != "" && p.NextCursor != cursor {
			// Committed even when ctx ended after the page's last forward
			// (Ctrl-C as it answered): a restart goes on after it.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			err := l.commit(cctx, p.NextCursor)
			cancel()
			if err != nil && ctx.Err() == nil {
				return err
			}
			cursor = p.NextCursor
		}
		if ctx.Err() != nil {
			return nil
		}
		if len(p.Data) > 0 || !p.Done {
			wait = minWait
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, maxWait)
	}
}

// forward POSTs one event as a delivery attempt would, and prints it; false
// when ctx ended before the local receiver answered.
func (l *Listener) forward(ctx context.Context, s *webhook.Sender, id, typ string, body []byte) bool {
	r := s.Send(ctx, webhook.Request{URL: l.Forward, Body: body, Secrets: []string{l.Secret}, EventType: typ, EventID: id,
		DeliveryID: domain.NewID("dlv"), AttemptID: domain.NewID("att"), AttemptNum: 1})
	answer := fmt.Sprint(r.Status)
	if r.Status == 0 {
		answer = r.Class + ": " + r.Error
	}
	fmt.Fprintf(l.Out, "%s  %s %s -> %s (%d ms) %s\n", time.Now().Format("15:04:05"), typ, id, answer,
		r.Duration.Milliseconds(), strings.TrimSpace(oneLine(r.Response, 80)))
	return r.Status != 0 || ctx.Err() == nil
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

func (l *Listener) read(ctx context.Context, cursor string) (page, error) {
	path := "/v1/endpoints/" + url.PathEscape(l.Endpoint) + "/poll?limit=100"
	if cursor != "" {
		path += "&cursor=" + url.QueryEscape(cursor)
	}
	var p page
	return p, l.call(ctx, http.MethodGet, path, nil, &p)
}

func (l *Listener) commit(ctx context.Context, cursor string) error {
	b, _ := json.Marshal(map[string]string{"cursor": cursor})
	return l.call(ctx, http.MethodPost, "/v1/endpoints/"+url.PathEscape(l.Endpoint)+"/poll/commit", b, nil)
}

func (l *Listener) call(ctx context.Context, method, path string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(l.API, "/")+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := l.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, oneLine(string(raw), 300))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}
