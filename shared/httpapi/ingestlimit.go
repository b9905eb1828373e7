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
	"github.com/gifq/webhooks/shared/ratelimit"
)

// KeyLimiter takes ingest tokens from an API key's bucket (ratelimit.Limiter):
// TakeOn from the bucket on its account's booking item (which ingest takes
// in its booking's write), Take from a portal session's own item; Refused
// answers from memory alone, with no call.
type KeyLimiter interface {
	Take(ctx context.Context, keyID string, n int, l ratelimit.Limit) error
	TakeOn(ctx context.Context, account, keyID string, n int, l ratelimit.Limit) error
	Refused(keyID string, n int, l ratelimit.Limit) error
}

// LimitStore reads the ingest limit overrides of an account and of one key.
type LimitStore interface {
	IngestLimits(ctx context.Context, accountID, keyID string) (account, key ratelimit.Limit, err error)
}

// KeyLimits is the per-API-key ingest limit: each key its own rate and
// burst, so one producer's flood is answered 429 and the others go on. A
// key's limit is its own override, else its account's, else Default, field
// by field; it is remembered for CacheTTL like the key itself.
type KeyLimits struct {
	Limiter KeyLimiter
	Store   LimitStore
	Default ratelimit.Limit
	// Session is each portal session's own limit on its requests, reads and
	// writes alike, in the same limiter under the session's id (zero: none).
	Session ratelimit.Limit
	// Management is each API key's limit on management writes (POST,
	// PATCH, DELETE of endpoints, event types, secrets, keys, sessions),
	// in the same limiter under "mgmt#<key id>" (zero: none). A portal
	// session's writes count in the key that minted it.
	Management ratelimit.Limit
	CacheTTL   time.Duration
	Log        *slog.Logger
	Now        func() time.Time

	mu    sync.Mutex
	cache map[string]cachedLimit // key id -> its limit
}

type cachedLimit struct {
	limit ratelimit.Limit
	until time.Time
}

// overLimit is a refusal with the limit that refused it, for the answer.
type overLimit struct {
	limit      ratelimit.Limit
	err        error
	session    bool // a portal session's limit, not an API key's
	management bool // the key's limit on management writes
	// viaSession: the key's limit, refusing a request of a portal session
	// that key minted.
	viaSession bool
}

func (e *overLimit) Error() string { return e.err.Error() }
func (e *overLimit) Unwrap() error { return e.err }

// admit checks n events from req's key (for a portal session, the key
// that minted it: a session spends its key's budget, so a key over its
// limit cannot go on through sessions it mints). A key known to be over
// its limit is refused at once (an *overLimit), before ingest reads
// anything; otherwise it returns the gate whose tokens ingest takes in the
// account's booking write. Both are nil when there is nothing to limit (no
// limiter, or no key to charge).
func (k *KeyLimits) admit(ctx context.Context, req *request, n int) (*ingest.Gate, error) {
	key := req.chargeKey
	if k == nil || k.Limiter == nil || key == "" {
		return nil, nil
	}
	l := k.limitFor(ctx, req.account, key)
	viaSession := req.session != ""
	if err := k.Limiter.Refused(key, n, l); err != nil {
		return nil, &overLimit{limit: l, err: err, viaSession: viaSession}
	}
	return &ingest.Gate{Take: ratelimit.KeyTake{ID: key, N: n, Limit: l}, Answer: func(ctx context.Context, err error) error {
		var over *ratelimit.Limited
		switch {
		case errors.As(err, &over), errors.Is(err, ratelimit.ErrExceedsBurst):
			return &overLimit{limit: l, err: err, viaSession: viaSession}
		case err != nil:
			// Fail open: a limiter we cannot reach must not stop ingest; the
			// stage throttle still caps the whole API.
			k.Log.WarnContext(ctx, "ingest limiter unavailable; event let through", "key_id", key, "error", err)
		}
		return nil
	}}, nil
}

// take takes n tokens from req's key at once, for a request that books no
// delivery slot: resends and recovers count against the same limit as
// events.
func (k *KeyLimits) take(ctx context.Context, req *request, n int) error {
	gate, err := k.admit(ctx, req, n)
	if err != nil || gate == nil {
		return err
	}
	return gate.Answer(ctx, k.Limiter.TakeOn(ctx, req.account, gate.Take.ID, n, gate.Take.Limit))
}

// admitSession takes one token from a portal session's own bucket: a
// leaked or scripted session cannot flood the API. Like the key limit it
// fails open when the limiter cannot be reached.
func (k *KeyLimits) admitSession(ctx context.Context, sessionID string) error {
	if k == nil || k.Limiter == nil || !k.Session.Valid() {
		return nil
	}
	if err := k.Limiter.Refused(sessionID, 1, k.Session); err != nil {
		return &overLimit{limit: k.Session, err: err, session: true}
	}
	err := k.Limiter.Take(ctx, sessionID, 1, k.Session)
	var over *ratelimit.Limited
	switch {
	case errors.As(err, &over):
		return &overLimit{limit: k.Session, err: err, session: true}
	case err != nil:
		k.Log.WarnContext(ctx, "portal session limiter unavailable; request let through", "session_id", sessionID, "error", err)
	}
	return nil
}

// admitManagement takes one token from the bucket of management writes of
// req's key (for a portal session, the key that minted it): each endpoint
// write can cost an sts:AssumeRole or a KMS call, and a script looping on
// PATCH must meet a 429 like one looping on POST /v1/events. It fails open
// like the others.
func (k *KeyLimits) admitManagement(ctx context.Context, req *request) error {
	if k == nil || k.Limiter == nil || !k.Management.Valid() || req.chargeKey == "" {
		return nil
	}
	bucket := "mgmt#" + req.chargeKey
	if err := k.Limiter.Refused(bucket, 1, k.Management); err != nil {
		return &overLimit{limit: k.Management, err: err, management: true}
	}
	err := k.Limiter.Take(ctx, bucket, 1, k.Management)
	var over *ratelimit.Limited
	switch {
	case errors.As(err, &over):
		return &overLimit{limit: k.Management, err: err, management: true}
	case err != nil:
		k.Log.WarnContext(ctx, "management limiter unavailable; write let through", "key_id", req.chargeKey, "error", err)
	}
	return nil
}

// limitFor resolves a key's limit, from memory when it can.
func (k *KeyLimits) limitFor(ctx context.Context, accountID, keyID string) ratelimit.Limit {
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
func effectiveLimit(def ratelimit.Limit, overrides ...ratelimit.Limit) ratelimit.Limit {
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
// gated admits n events against the key's ingest limit: ctx carrying the
// gate ingest takes its tokens from, or the answer when the key is over it.
func (a *API) gated(ctx context.Context, req *request, n int) (context.Context, response, bool) {
	gate, err := a.KeyLimits.admit(ctx, req, n)
	if r, limited := limitAnswer(err); limited {
		return ctx, r, false
	}
	return ingest.WithGate(ctx, gate), response{}, true
}

func limitAnswer(err error) (response, bool) {
	var ol *overLimit
	if !errors.As(err, &ol) {
		return response{}, false
	}
	rate := strconv.FormatFloat(ol.limit.Rate, 'f', -1, 64)
	var over *ratelimit.Limited
	if errors.As(err, &over) {
		secs := ratelimit.RetryAfterSeconds(over.RetryAfter)
		msg := fmt.Sprintf("this API key is over its ingest limit of %s events per second (burst %d; test events, resends and recovers count too); retry after %d s", rate, ol.limit.Burst, secs)
		switch {
		case ol.management:
			msg = fmt.Sprintf("this API key is over its limit of %s management writes per second (burst %d; changes to endpoints, event types, secrets, keys and portal sessions); retry after %d s", rate, ol.limit.Burst, secs)
		case ol.session:
			msg = fmt.Sprintf("this portal session is over its limit of %s requests per second (burst %d); retry after %d s", rate, ol.limit.Burst, secs)
		case ol.viaSession:
			msg = fmt.Sprintf("the API key that opened this portal session is over its ingest limit of %s events per second (burst %d; test events, resends and recovers made here count too); retry after %d s", rate, ol.limit.Burst, secs)
		}
		r := fail(http.StatusTooManyRequests, "rate_limited", msg)
		r.headers = map[string]string{"Retry-After": strconv.Itoa(secs)}
		return r, true
	}
	return fail(http.StatusUnprocessableEntity, "batch_exceeds_burst", fmt.Sprintf(
		"more events at once than this API key's burst of %d; send at most %d per request", ol.limit.Burst, ol.limit.Burst)), true
}
