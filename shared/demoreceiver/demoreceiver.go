// Package demoreceiver is the optional demo receiver of a deployed stack
// (context demoReceiver=true): a Lambda function URL that verifies each
// webhook's Standard Webhooks signature and logs what it received, so a team
// sees a first delivery minutes after `cdk deploy` without a server of its
// own. It verifies v1a (ed25519) signatures with the account's public keys,
// read from the API's JWKS route: register the endpoint as
// <ReceiverUrl>?account=<account id> with signature_scheme v1a (or both),
// and the receiver needs no secret. An endpoint's v1 (HMAC) secret can be
// given too, as WEBHOOK_SECRETS, for endpoints on v1.
package demoreceiver

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/signing"
)

// jwksTTL is how long fetched keys are kept (the API's Cache-Control).
const jwksTTL = 5 * time.Minute

// Receiver handles the function URL's requests.
type Receiver struct {
	APIURL  string   // the stack's ApiUrl (ends in /<stage>/)
	Secrets []string // v1 secrets (whsec_...), optional
	HTTP    *http.Client
	Log     *slog.Logger
	Now     func() time.Time

	mu   sync.Mutex
	keys map[string]cachedKeys // by account
}

type cachedKeys struct {
	keys []ed25519.PublicKey
	at   time.Time
}

// Verdict is what the receiver made of one request.
type Verdict struct {
	Status int    // 204 verified, 401 rejected, 405 not a POST
	Scheme string // "v1a", "v1" or "v1, v1a": what verified it
	Reason string // why it was rejected
}

// Handle verifies and logs one request.
func (r *Receiver) Handle(ctx context.Context, in events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	body := []byte(in.Body)
	if in.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(in.Body)
		if err != nil {
			return respond(http.StatusBadRequest, "body is not base64"), nil
		}
		body = b
	}
	account := in.QueryStringParameters["account"]
	v := r.verify(ctx, in.RequestContext.HTTP.Method, header(in.Headers), account, body)
	attrs := []any{"status", v.Status, "webhook_id", in.Headers["webhook-id"], "event_type", in.Headers["x-gifq-event"],
		"event_id", in.Headers["x-gifq-event-id"], "attempt", in.Headers["x-gifq-attempt"], "account_id", account}
	if v.Status == http.StatusNoContent {
		// The body is the demo's own webhook payload, shown so the team sees
		// what arrived; the signature headers are not logged.
		r.Log.InfoContext(ctx, "webhook received, signature verified ("+v.Scheme+")", append(attrs, "body", string(body))...)
		return respond(v.Status, ""), nil
	}
	r.Log.WarnContext(ctx, "webhook rejected: "+v.Reason, attrs...)
	return respond(v.Status, v.Reason), nil
}

func respond(status int, text string) events.LambdaFunctionURLResponse {
	return events.LambdaFunctionURLResponse{StatusCode: status, Body: text, Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8"}}
}

// header reads the function URL's headers (lower-case names).
func header(h map[string]string) func(string) string {
	return func(name string) string { return h[strings.ToLower(name)] }
}

// verify decides one request: a POST whose Standard Webhooks signature
// verifies under the account's published keys (v1a) or a configured secret
// (v1). The rejection says why, which signing's own error does not.
func (r *Receiver) verify(ctx context.Context, method string, h func(string) string, account string, body []byte) Verdict {
	if method != http.MethodPost {
		return Verdict{Status: http.StatusMethodNotAllowed, Reason: "webhooks are POSTed; this was " + method}
	}
	id, ts, sig := h(signing.HeaderWebhookID), h(signing.HeaderWebhookTimestamp), h(signing.HeaderWebhookSignature)
	if id == "" || ts == "" || sig == "" {
		return Verdict{Status: http.StatusUnauthorized, Reason: "no webhook-id, webhook-timestamp and webhook-signature headers: not a Standard Webhooks delivery"}
	}
	var ok []string
	var why []string
	switch {
	case account == "" && len(r.Secrets) == 0:
		return Verdict{Status: http.StatusUnauthorized, Reason: "the receiver holds no key: register the endpoint as <ReceiverUrl>?account=<your account id> with signature_scheme v1a, or set WEBHOOK_SECRETS to the endpoint's secret"}
	case account != "":
		keys, err := r.accountKeys(ctx, account)
		switch {
		case err != nil:
			why = append(why, "could not read the account's keys: "+err.Error())
		default:
			if err := signing.VerifyStandardV1a(body, id, ts, sig, keys, signing.Options{Now: r.Now}); err != nil {
				why = append(why, "v1a: "+explain(err, "account "+account+"'s published keys (is the endpoint's signature_scheme v1a or both, and the account the endpoint's?)"))
			} else {
				ok = append(ok, "v1a")
			}
		}
	}
	if len(r.Secrets) > 0 {
		if err := signing.VerifyStandard(body, id, ts, sig, r.Secrets, signing.Options{Now: r.Now}); err != nil {
			why = append(why, "v1: "+explain(err, "WEBHOOK_SECRETS (the endpoint's current secret?)"))
		} else {
			ok = append(ok, "v1")
		}
	}
	if len(ok) > 0 {
		return Verdict{Status: http.StatusNoContent, Scheme: strings.Join(ok, ", ")}
	}
	return Verdict{Status: http.StatusUnauthorized, Reason: strings.Join(why, "; ")}
}

// explain words a verification error for someone setting up the demo.
func explain(err error, held string) string {
	switch {
	case errors.Is(err, signing.ErrNoPublicKey):
		return "the account publishes no signing key yet: give an endpoint signature_scheme v1a, which makes one"
	case errors.Is(err, signing.ErrTooOld):
		return "webhook-timestamp is outside the tolerance (a replay, or a clock off by minutes)"
	}
	return err.Error() + ": no signature verifies under " + held
}

// accountKeys are the account's published ed25519 keys, from the API's JWKS
// route (public), kept for jwksTTL.
func (r *Receiver) accountKeys(ctx context.Context, account string) ([]ed25519.PublicKey, error) {
	if !domain.HasPrefix(account, "acct") {
		return nil, fmt.Errorf("%q is not an account id (acct_...)", account)
	}
	r.mu.Lock()
	c, hit := r.keys[account]
	r.mu.Unlock()
	if hit && r.Now().Sub(c.at) < jwksTTL {
		return c.keys, nil
	}
	u := strings.TrimSuffix(r.APIURL, "/") + "/v1/accounts/" + url.PathEscape(account) + "/jwks.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	doc, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("GET " + u + ": " + strconv.Itoa(resp.StatusCode))
	}
	byKid, err := signing.ParseJWKS(doc)
	if err != nil {
		return nil, err
	}
	keys := make([]ed25519.PublicKey, 0, len(byKid))
	for _, k := range byKid {
		keys = append(keys, k)
	}
	r.mu.Lock()
	if r.keys == nil {
		r.keys = map[string]cachedKeys{}
	}
	r.keys[account] = cachedKeys{keys, r.Now()}
	r.mu.Unlock()
	return keys, nil
}
