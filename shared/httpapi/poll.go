package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/store"
)

// A polling endpoint is read instead of pushed: its consumer pages through
// the account's events that its filter takes (oldest first, from the
// position it committed) and commits how far it got. Nothing is delivered
// to it: no delivery, queue message or attempt. Its token opens only its
// own two routes; the account's API key (or a portal token) opens them too.

// pollPrefix starts a polling endpoint's token:
// gpoll_<account id>_<64 hex digits>; only its SHA-256 is stored.
const pollPrefix = "gpoll_"

// pollSettle is how old an event must be before a poll returns it: an
// event's id (its time) is made before it is written, and the listing is
// eventually consistent, so the newest seconds are left for the next read
// rather than skipped by a consumer that committed past them.
const pollSettle = 5 * time.Second

type pollToken struct {
	token string
	hash  []byte
}

func newPollToken(accountID string) pollToken {
	var b [32]byte
	_, _ = rand.Read(b[:])
	t := pollPrefix + accountID + "_" + hex.EncodeToString(b[:])
	h := sha256.Sum256([]byte(t))
	return pollToken{token: t, hash: h[:]}
}

// pollAccount is the account a poll token names ("" when it is not one).
func pollAccount(token string) string {
	rest, ok := strings.CutPrefix(token, pollPrefix)
	i := strings.LastIndexByte(rest, '_')
	if !ok || i < 0 || len(rest)-i-1 != 64 || !domain.HasPrefix(rest[:i], "acct") {
		return ""
	}
	return rest[:i]
}

// pollRoutes are what a poll token may call.
var pollRoutes = map[string]bool{"GET /v1/endpoints/*/poll": true, "POST /v1/endpoints/*/poll/commit": true}

// authenticatePoll admits a poll token to its endpoint's routes; the token
// itself is checked against the endpoint (loadPollEndpoint).
func (a *API) authenticatePoll(req *request, rt route, token string) (response, bool) {
	account := pollAccount(token)
	if account == "" || !pollRoutes[rt.name()] {
		r := fail(http.StatusUnauthorized, "invalid_poll_token", "a poll token opens only its polling endpoint's poll and commit routes")
		r.headers = map[string]string{"WWW-Authenticate": `Bearer error="invalid_token"`}
		return r, true
	}
	req.account, req.pollToken = account, token
	return response{}, false
}

func checkPollingShape(hasURL, hasAWS, hasSettings bool) (response, bool) {
	if hasURL || hasAWS || hasSettings {
		return destinationFail("a polling endpoint has no url, aws block or settings: it is read, not delivered to"), true
	}
	return response{}, false
}

// loadPollEndpoint is the request's polling endpoint; a poll token must be
// its own (compared in constant time).
func (a *API) loadPollEndpoint(ctx context.Context, req *request) (domain.Endpoint, response, bool) {
	ep, r, failed := a.loadEndpoint(ctx, req)
	if failed {
		return ep, r, true
	}
	if req.pollToken != "" {
		h := sha256.Sum256([]byte(req.pollToken))
		if subtle.ConstantTimeCompare(h[:], ep.PollTokenHash) != 1 {
			return ep, fail(http.StatusUnauthorized, "invalid_poll_token", "this token is not this endpoint's"), true
		}
	}
	if ep.DestinationOf() != domain.DestinationPolling {
		return ep, fail(http.StatusConflict, "not_polling", "this endpoint is delivered to, not polled: register one with type polling"), true
	}
	return ep, response{}, false
}

// pollPage is one read of a polling endpoint: its events, and the cursor
// to read on from (and to commit once they are handled).
type pollPage struct {
	Data       []feedEvent `json:"data"`
	NextCursor string      `json:"next_cursor"`
	Done       bool        `json:"done"` // nothing more for now: wait before the next read
}

// poll: GET /v1/endpoints/{id}/poll?limit=&cursor=, the endpoint's events
// oldest first after cursor, or after its committed position, or since it
// was created; those its filter takes (system events only if it names them).
func (a *API) poll(ctx context.Context, req *request) response {
	ep, r, failed := a.loadPollEndpoint(ctx, req)
	if failed {
		return r
	}
	if ep.Disabled {
		return fail(http.StatusConflict, "endpoint_disabled", "enable the endpoint (PATCH disabled=false) to read it")
	}
	limit, after, r, failed := pageQuery(req, "evt")
	if failed {
		return r
	}
	if after == "" {
		after = ep.PollPosition
	}
	now := a.Now()
	f := feedQuery{since: max(ep.CreatedAt, domain.Millis(now.Add(-domain.DefaultRetention))), until: domain.Millis(now.Add(-pollSettle)),
		oldestFirst: true, limit: limit, after: after}
	page := feedPage{}
	if f.since <= f.until {
		if page, r, failed = a.readFeed(ctx, req.account, f, func(ref store.EventRef) bool { return ep.Subscribes(ref.Type) }); failed {
			return r
		}
	}
	if page.Data == nil {
		page.Data = []feedEvent{}
	}
	out := pollPage{Data: page.Data, NextCursor: page.NextCursor, Done: page.NextCursor == ""}
	if out.NextCursor == "" {
		out.NextCursor = encodeCursor(max(page.last, after))
	}
	return ok(http.StatusOK, out)
}

// commitPoll: POST /v1/endpoints/{id}/poll/commit {"cursor"}: the consumer
// handled everything up to cursor; the next read without a cursor starts
// after it. A commit behind the one stored changes nothing.
func (a *API) commitPoll(ctx context.Context, req *request) response {
	ep, r, failed := a.loadPollEndpoint(ctx, req)
	if failed {
		return r
	}
	var in struct {
		Cursor string `json:"cursor"`
	}
	if r, failed := decodeJSON(req.body, &in); failed {
		return r
	}
	position, valid := decodeCursor(in.Cursor, "evt")
	if !valid {
		return fail(http.StatusUnprocessableEntity, "invalid_cursor", "cursor must be a next_cursor of this endpoint's poll")
	}
	if ms, ok := domain.IDMillis(position); !ok || ms > domain.Millis(a.Now()) {
		return fail(http.StatusUnprocessableEntity, "invalid_cursor", "cursor must be a next_cursor of this endpoint's poll")
	}
	switch err := a.Store.CommitPollPosition(ctx, req.account, ep.ID, position); {
	case errors.Is(err, store.ErrNotFound):
		return notFound("endpoint")
	case err != nil:
		return a.internal(ctx, err)
	}
	return ok(http.StatusOK, map[string]string{"cursor": in.Cursor})
}
