package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/ratelimit"
)

func TestEffectiveLimitLayersOverridesFieldByField(t *testing.T) {
	def := ratelimit.Limit{Rate: 10, Burst: 50}
	cases := []struct {
		account, key, want ratelimit.Limit
	}{
		{ratelimit.Limit{}, ratelimit.Limit{}, def},
		{ratelimit.Limit{Rate: 2}, ratelimit.Limit{}, ratelimit.Limit{Rate: 2, Burst: 50}},
		{ratelimit.Limit{Rate: 2, Burst: 5}, ratelimit.Limit{Burst: 9}, ratelimit.Limit{Rate: 2, Burst: 9}},
		{ratelimit.Limit{}, ratelimit.Limit{Rate: 100, Burst: 1}, ratelimit.Limit{Rate: 100, Burst: 1}},
	}
	for _, c := range cases {
		if got := effectiveLimit(def, c.account, c.key); got != c.want {
			t.Errorf("account %+v key %+v: %+v, want %+v", c.account, c.key, got, c.want)
		}
	}
}

func TestLimitAnswer(t *testing.T) {
	l := ratelimit.Limit{Rate: 2.5, Burst: 10}
	r, ok := limitAnswer(&overLimit{limit: l, err: &ratelimit.Limited{RetryAfter: 1400 * time.Millisecond}})
	if !ok || r.status != 429 || r.headers["Retry-After"] != "2" || r.code() != "rate_limited" {
		t.Fatalf("over the limit: %d %v %q", r.status, r.headers, r.code())
	}
	b, _ := json.Marshal(r.body)
	if want := `{"error":{"code":"rate_limited","message":"this API key is over its ingest limit of 2.5 events per second (burst 10; test events, resends and recovers count too); retry after 2 s"}}`; string(b) != want {
		t.Fatalf("body %s", b)
	}
	r, ok = limitAnswer(&overLimit{limit: l, err: ratelimit.ErrExceedsBurst})
	if !ok || r.status != 422 || r.code() != "batch_exceeds_burst" || r.headers["Retry-After"] != "" {
		t.Fatalf("more than the burst at once: %d %v %q", r.status, r.headers, r.code())
	}
	if _, ok := limitAnswer(errors.New("something else")); ok {
		t.Fatal("another error answered as a limit")
	}
	if _, ok := limitAnswer(nil); ok {
		t.Fatal("no error answered as a limit")
	}
}

type fakeLimiter struct {
	take, refused error
	got           ratelimit.Limit
}

func (f *fakeLimiter) Take(_ context.Context, _ string, _ int, l ratelimit.Limit) error {
	f.got = l
	return f.take
}
func (f *fakeLimiter) TakeOn(ctx context.Context, _, keyID string, n int, l ratelimit.Limit) error {
	return f.Take(ctx, keyID, n, l)
}
func (f *fakeLimiter) Refused(string, int, ratelimit.Limit) error { return f.refused }

type fakeLimitStore struct {
	reads         int
	err           error
	account, keyL ratelimit.Limit
}

func (f *fakeLimitStore) IngestLimits(context.Context, string, string) (ratelimit.Limit, ratelimit.Limit, error) {
	f.reads++
	return f.account, f.keyL, f.err
}

// pass takes gate's tokens as ingest's booking would, and answers as
// ingest does.
func pass(ctx context.Context, k *KeyLimits, gate *ingest.Gate) error {
	return gate.Answer(ctx, k.Limiter.TakeOn(ctx, "acct_1", gate.Take.ID, gate.Take.N, gate.Take.Limit))
}

func TestAdmit(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	req := &request{account: "acct_1", keyID: "key_1", chargeKey: "key_1"}
	newLimits := func(l *fakeLimiter, st *fakeLimitStore) *KeyLimits {
		return &KeyLimits{Limiter: l, Store: st, Default: ratelimit.Limit{Rate: 10, Burst: 50}, CacheTTL: 30 * time.Second,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }}
	}

	// Refused from memory: answered before ingest, no gate.
	k := newLimits(&fakeLimiter{refused: &ratelimit.Limited{RetryAfter: time.Second}}, &fakeLimitStore{})
	if gate, err := k.admit(ctx, req, 1); gate != nil || !errors.As(err, new(*overLimit)) {
		t.Fatalf("a key known over its limit: gate %v, err %v", gate != nil, err)
	}
	// The table refuses: the gate says so.
	k = newLimits(&fakeLimiter{take: &ratelimit.Limited{RetryAfter: time.Second}}, &fakeLimitStore{})
	gate, err := k.admit(ctx, req, 1)
	if err != nil || gate == nil || !errors.As(pass(ctx, k, gate), new(*overLimit)) {
		t.Fatalf("the table refuses: %v", err)
	}
	// The limiter is down: fail open.
	k = newLimits(&fakeLimiter{take: errors.New("throttled")}, &fakeLimitStore{})
	if gate, _ := k.admit(ctx, req, 1); pass(ctx, k, gate) != nil {
		t.Fatal("an unreachable limiter must let the event through")
	}
	// Overrides are read once per key within the TTL, and layered.
	st := &fakeLimitStore{account: ratelimit.Limit{Rate: 2}, keyL: ratelimit.Limit{Burst: 4}}
	fl := &fakeLimiter{}
	k = newLimits(fl, st)
	for i := 0; i < 3; i++ {
		gate, _ := k.admit(ctx, req, 1)
		_ = pass(ctx, k, gate)
	}
	if st.reads != 1 || fl.got != (ratelimit.Limit{Rate: 2, Burst: 4}) {
		t.Fatalf("%d reads, limit %+v", st.reads, fl.got)
	}
	// Overrides unreadable: the default applies.
	k = newLimits(fl, &fakeLimitStore{err: errors.New("down")})
	gate, _ = k.admit(ctx, req, 1)
	if err := pass(ctx, k, gate); err != nil || fl.got != k.Default {
		t.Fatalf("limit %+v, want the default", fl.got)
	}
	// No API key (a portal token), or no limiter: nothing to limit.
	if gate, err := k.admit(ctx, &request{account: "acct_1"}, 1); gate != nil || err != nil {
		t.Fatal("a request without an API key was limited")
	}
	var none *KeyLimits
	if gate, err := none.admit(ctx, req, 1); gate != nil || err != nil {
		t.Fatal("no KeyLimits must limit nothing")
	}
}
