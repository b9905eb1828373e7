package httpapi

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/keylimit"
)

func TestEffectiveLimitLayersOverridesFieldByField(t *testing.T) {
	def := keylimit.Limit{Rate: 10, Burst: 50}
	cases := []struct {
		account, key, want keylimit.Limit
	}{
		{keylimit.Limit{}, keylimit.Limit{}, def},
		{keylimit.Limit{Rate: 2}, keylimit.Limit{}, keylimit.Limit{Rate: 2, Burst: 50}},
		{keylimit.Limit{Rate: 2, Burst: 5}, keylimit.Limit{Burst: 9}, keylimit.Limit{Rate: 2, Burst: 9}},
		{keylimit.Limit{}, keylimit.Limit{Rate: 100, Burst: 1}, keylimit.Limit{Rate: 100, Burst: 1}},
	}
	for _, c := range cases {
		if got := effectiveLimit(def, c.account, c.key); got != c.want {
			t.Errorf("account %+v key %+v: %+v, want %+v", c.account, c.key, got, c.want)
		}
	}
}

func TestLimitAnswer(t *testing.T) {
	l := keylimit.Limit{Rate: 2.5, Burst: 10}
	r, ok := limitAnswer(&overLimit{limit: l, err: &keylimit.Limited{RetryAfter: 1400 * time.Millisecond}})
	if !ok || r.status != 429 || r.headers["Retry-After"] != "2" || r.code() != "rate_limited" {
		t.Fatalf("over the limit: %d %v %q", r.status, r.headers, r.code())
	}
	b, _ := json.Marshal(r.body)
	if want := `{"error":{"code":"rate_limited","message":"this API key is over its ingest limit of 2.5 events per second (burst 10); retry after 2 s"}}`; string(b) != want {
		t.Fatalf("body %s", b)
	}
	r, ok = limitAnswer(&overLimit{limit: l, err: keylimit.ErrExceedsBurst})
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
