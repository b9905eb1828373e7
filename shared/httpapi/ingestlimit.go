package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gifq/webhooks/shared/ingest"
	"github.com/gifq/webhooks/shared/keylimit"
)

// KeyLimiter takes ingest tokens from an API key's bucket (keylimit.Limiter);
// Refused answers from memory alone, with no call.
type KeyLimiter interface {
	Take(ctx context.Context, keyID string, n int, l keylimit.Limit) error
	Refused(keyID string, n int, l keylimit.Limit) error
}

// LimitStore reads the ingest limit overrides of an account and of one key.
type LimitStore interface {
	IngestLimits(ctx context.Context, accountID, keyID string) (account, key keylimit.Limit, err error)
}

// KeyLimits is the per-API-key ingest limit: each key its own rate and
// burst, so one producer's flood is answered 429 and the others go on. A
// key's limit is its own override, else its account's, else Default, field
// by field; it is remembered for CacheTTL like the key itself.
type KeyLimits struct {
	Limiter  KeyLimiter
	Store    LimitStore
	Default  keylimit.Limit
	CacheTTL time.Duration
	Log      *slog.Logger
	Now      func() time.Time

	mu    sync.Mutex
	cache map[string]cachedLimit // key id -> its limit
}

type cachedLimit struct {
	limit keylimit.Limit
	until time.Time
}

// overLimit is a refusal with the limit that refused it, for the answer.
type overLimit struct {
	limit keylimit.Limit
	err   error
}

func (e *overLimit) Error() string { return e.err.Error() }
func (e *overLimit) Unwrap() error { return e.err }

// admit checks n events from req's key. A key known to be over its limit
// is refused at once (an *overLimit), before ingest reads anything;
// otherwise it returns the gate that takes the tokens in the table, for
// ingest.WithGate to run alongside the account read. Both are nil when
// there is nothing to limit (no limiter, or no API key: a portal token).
func (k *KeyLimits) admit(ctx context.Context, req *request, n int) (ingest.Gate, error) {
	if k == nil || k.Limiter == nil || req.keyID == "" {
		return nil, nil
	}
	l := k.limitFor(ctx, req.account, req.keyID)
	if err := k.Limiter.Refused(req.keyID, n, l); err != nil {
		return nil, &overLimit{limit: l, err: err}
	}
	return func(ctx context.Context) error {
		err := k.Limiter.Take(ctx, req.keyID, n, l)
		var over *keylimit.Limited
		switch {
		case errors.As(err, &over), errors.Is(err, keylimit.ErrExceedsBurst):
			return &overLimit{limit: l, err: err}
		case err != nil:
			// Fail open: a limiter we cannot reach must not stop ingest; the
			// stage throttle still caps the whole API.
			k.Log.WarnContext(ctx, "ingest limiter unavailable; event let through", "key_id", req.keyID, "error", err)
		}
		return nil
	}, nil
}

// limitFor resolves a key's limit, from memory when it can.
func (k *KeyLimits) limitFor(ctx context.Context, accountID, keyID string) keylimit.Limit {
	now := k.Now()
	k.mu.Lock()
	c, ok := k.cache[keyID]
	k.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.limit
	}
	acct, own, err := k.Store.IngestLimits(ctx, accountID, keyID)
	if err != nil {
		k.Log.WarnContext(ctx, "ingest limit overrides not read; the default applies", "key_id", keyID, "error", err)
		return k.Default
	}
	l := effectiveLimit(k.Default, acct, own)
	if k.CacheTTL > 0 {
		k.mu.Lock()
		if k.cache == nil || len(k.cache) >= keyCacheMax {
			k.cache = map[string]cachedLimit{}
		}
		k.cache[keyID] = cachedLimit{limit: l, until: now.Add(k.CacheTTL)}
		k.mu.Unlock()
	}
	return l
}

// effectiveLimit layers the overrides: a key's own fields over its
// account's over the deployment's; zero fields inherit.
func effectiveLimit(def keylimit.Limit, overrides ...keylimit.Limit) keylimit.Limit {
	l := def
	for _, o := range overrides {
		if o.Rate > 0 {
			l.Rate = o.Rate
		}
		if o.Burst > 0 {
			l.Burst = o.Burst
		}
	}
	return l
}

// limitAnswer is the answer to an ingest refused by the key's limit.
func limitAnswer(err error) (response, bool) {
	var ol *overLimit
	if !errors.As(err, &ol) {
		return response{}, false
	}
	rate := strconv.FormatFloat(ol.limit.Rate, 'f', -1, 64)
	var over *keylimit.Limited
	if errors.As(err, &over) {
		secs := keylimit.RetryAfterSeconds(over.RetryAfter)
		r := fail(http.StatusTooManyRequests, "rate_limited", fmt.Sprintf(
			"this API key is over its ingest limit of %s events per second (burst %d); retry after %d s", rate, ol.limit.Burst, secs))
		r.headers = map[string]string{"Retry-After": strconv.Itoa(secs)}
		return r, true
	}
	return fail(http.StatusUnprocessableEntity, "batch_exceeds_burst", fmt.Sprintf(
		"more events at once than this API key's burst of %d; send at most %d per request", ol.limit.Burst, ol.limit.Burst)), true
}
