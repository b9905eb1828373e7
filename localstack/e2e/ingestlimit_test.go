package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/localstack/testenv"
	"github.com/gifq/webhooks/shared/ratelimit"
)

// An answer to one POST /v1/events, as a producer sees it.
type postResult struct {
	status     int
	retryAfter string
	code       string
}

func (h *harness) post(t *testing.T, key string, i int) postResult {
	req, _ := http.NewRequest("POST", h.api+"/v1/events",
		strings.NewReader(fmt.Sprintf(`{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_%d"}}`, i)))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return postResult{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return postResult{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), code: e.Error.Code}
}

// tally counts answers by status and checks every 429 is well formed.
type tally struct {
	mu       sync.Mutex
	byStatus map[int]int
	maxRetry int
}

func (c *tally) add(t *testing.T, r postResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byStatus == nil {
		c.byStatus = map[int]int{}
	}
	c.byStatus[r.status]++
	if r.status == http.StatusTooManyRequests {
		secs, err := strconv.Atoi(r.retryAfter)
		if err != nil || secs < 1 || r.code != "rate_limited" {
			t.Errorf("a 429 with Retry-After %q and code %q, want whole seconds >= 1 and rate_limited", r.retryAfter, r.code)
		}
		c.maxRetry = max(c.maxRetry, secs)
	}
}

// A flood from one API key is answered 429 with
// Retry-After, while another account's key and another key of the same
// account have every event accepted. The flooding key's rate is so slow
// that no token refills during the test: the counts are exact whatever the
// machine's speed.
func TestIngestFloodFromOneKeyLeavesOtherKeysAlone(t *testing.T) {
	h := start(t, opts{})
	acctA, flooder := h.account(t)
	_, otherAccount := h.account(t)
	_, sameAccount, err := h.store.CreateAPIKey(ctx, acctA)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := h.store.ListAPIKeys(ctx, acctA)
	if err != nil {
		t.Fatal(err)
	}
	floodKeyID := ""
	for _, k := range keys {
		if strings.HasPrefix(flooder, k.Prefix) {
			floodKeyID = k.ID
		}
	}
	const burst, flood, others = 5, 60, 15
	if err := h.store.SetKeyIngestLimit(ctx, acctA, floodKeyID, ratelimit.Limit{Rate: 0.001, Burst: burst}); err != nil {
		t.Fatal(err)
	}

	var f, o, s tally
	inParallel(flood+2*others, 8, func(i int) {
		switch {
		case i%5 == 1 && i/5 < others:
			o.add(t, h.post(t, otherAccount, i))
		case i%5 == 2 && i/5 < others:
			s.add(t, h.post(t, sameAccount, i))
		default:
			f.add(t, h.post(t, flooder, i))
		}
	})
	t.Logf("flooding key: %v (largest Retry-After %d s); other account's key: %v; same account's other key: %v",
		f.byStatus, f.maxRetry, o.byStatus, s.byStatus)
	if f.byStatus[202] != burst || f.byStatus[429] != flood-burst || len(f.byStatus) != 2 {
		t.Errorf("the flooding key got %v, want %d accepted (its burst) and %d answered 429", f.byStatus, burst, flood-burst)
	}
	if o.byStatus[202] != others || len(o.byStatus) != 1 {
		t.Errorf("another account's key got %v, want all %d accepted", o.byStatus, others)
	}
	if s.byStatus[202] != others || len(s.byStatus) != 1 {
		t.Errorf("the same account's other key got %v, want all %d accepted", s.byStatus, others)
	}
}

// An account's limit applies to each of its keys that has none of its own;
// a key's own limit wins over its account's.
func TestIngestLimitPerAccountAndPerKey(t *testing.T) {
	h := start(t, opts{})
	acct, inherits := h.account(t)
	own, ownSecret, err := h.store.CreateAPIKey(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.SetAccountIngestLimit(ctx, acct, ratelimit.Limit{Rate: 0.001, Burst: 3}); err != nil {
		t.Fatal(err)
	}
	if err := h.store.SetKeyIngestLimit(ctx, acct, own.ID, ratelimit.Limit{Burst: 6}); err != nil {
		t.Fatal(err)
	}
	var a, b tally
	for i := 0; i < 10; i++ {
		a.add(t, h.post(t, inherits, i))
		b.add(t, h.post(t, ownSecret, i))
	}
	if a.byStatus[202] != 3 || a.byStatus[429] != 7 {
		t.Errorf("a key under its account's burst of 3 got %v", a.byStatus)
	}
	if b.byStatus[202] != 6 || b.byStatus[429] != 4 {
		t.Errorf("a key with its own burst of 6 (its account's rate) got %v", b.byStatus)
	}
}

// The reviewer's case: with a key's events limited to 202 202
// 429, its test events and resends were all accepted, each booking a slot
// of the account's rate. Now they share the key's bucket: past it, 429
// with Retry-After, for them and for recovers.
func TestTestEventsAndResendsShareTheKeyLimit(t *testing.T) {
	t.Parallel()
	h := start(t, opts{})
	acct, key := h.account(t)
	if err := h.store.SetAccountIngestLimit(ctx, acct, ratelimit.Limit{Rate: 0.001, Burst: 2}); err != nil {
		t.Fatal(err)
	}
	_, ep := h.registerReceiver(t, key, always(200))
	ev := h.publish(t, key, payout)
	dlv := ev.Deliveries[0].ID
	var e errOut
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/test-event", nil, nil); code != 202 {
		t.Fatalf("the second call of the burst: %d", code)
	}
	for _, path := range []string{"/v1/endpoints/" + ep.ID + "/test-event", "/v1/deliveries/" + dlv + "/resend", "/v1/events"} {
		body := any(nil)
		if path == "/v1/events" {
			body = payout
		}
		if code := h.call(t, key, "POST", path, body, &e); code != 429 || e.Error.Code != "rate_limited" {
			t.Errorf("POST %s past the key's limit: %d %+v", path, code, e)
		}
	}
	if code := h.call(t, key, "POST", "/v1/endpoints/"+ep.ID+"/recover", `{"since":"2026-01-01T00:00:00Z"}`, &e); code != 429 {
		t.Errorf("recover past the key's limit: %d %+v", code, e)
	}
}

// TestIngestFloodFigures is the scripted run behind the figures in
// docs/deploy.md, at the deployment's default limit (10 events/s, burst 50):
// one key floods from 16 producers for 10 s while two other keys (another
// account's, and the same account's) post about 5 events a second each. It
// asserts nothing about timing and runs only on request:
// GIFQ_FIGURES=1 go test -run TestIngestFloodFigures -v ./localstack/e2e/
func TestIngestFloodFigures(t *testing.T) {
	if os.Getenv("GIFQ_FIGURES") == "" {
		t.Skip("a scripted run for docs/deploy.md; set GIFQ_FIGURES=1")
	}
	localOnly(t)
	calls := testenv.NewCalls()
	h := start(t, opts{calls: calls, env: map[string]string{"INGEST_RATE_PER_SECOND": "10", "INGEST_BURST": "50"}})
	acctA, flooder := h.account(t)
	_, otherAccount := h.account(t)
	_, sameAccount, err := h.store.CreateAPIKey(ctx, acctA)
	if err != nil {
		t.Fatal(err)
	}
	// The two quiet keys, paced at about 5/s each, for d; their latencies.
	quiet := func(d time.Duration, o, s *tally) []time.Duration {
		var lat []time.Duration
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, k := range []struct {
			key string
			t   *tally
		}{{otherAccount, o}, {sameAccount, s}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i, end := 0, time.Now().Add(d); time.Now().Before(end); i++ {
					time.Sleep(200 * time.Millisecond)
					began := time.Now()
					k.t.add(t, h.post(t, k.key, i))
					mu.Lock()
					lat = append(lat, time.Since(began))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return lat
	}
	pct := func(lat []time.Duration, p int) time.Duration { return lat[(len(lat)-1)*p/100].Round(time.Millisecond) }
	var o0, s0 tally
	alone := quiet(5*time.Second, &o0, &s0)

	const floodFor = 10 * time.Second
	var f, o, s tally
	var flooded []time.Duration
	calls.Reset()
	began := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); flooded = quiet(floodFor, &o, &s) }()
	inParallel(16, 16, func(w int) {
		for i := 0; time.Since(began) < floodFor; i++ {
			f.add(t, h.post(t, flooder, w*1e6+i))
		}
	})
	elapsed := time.Since(began)
	wg.Wait()
	total := f.byStatus[202] + f.byStatus[429]
	t.Logf("flood from one key, 16 producers, %.1f s: %d requests, %d accepted, %d answered 429 (burst 50 + 10/s x %.1f s = %.0f)",
		elapsed.Seconds(), total, f.byStatus[202], f.byStatus[429], elapsed.Seconds(), 50+10*elapsed.Seconds())
	t.Logf("other account's key: alone %v, during the flood %v; same account's other key: alone %v, during the flood %v",
		o0.byStatus, o.byStatus, s0.byStatus, s.byStatus)
	t.Logf("the quiet keys' ingest latency alone p50 %s p99 %s; during the flood p50 %s p99 %s",
		pct(alone, 50), pct(alone, 99), pct(flooded, 50), pct(flooded, 99))
	t.Logf("DynamoDB calls during the flood: %s", calls)
}
