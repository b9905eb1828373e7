package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/destination/webhook"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/signing"
)

// receiver is the demo customer endpoint: it verifies each delivery's
// signature with the secrets of the dev account's endpoints on it (any
// path), prints it, and answers 204, or the status a /status/<code> path
// asks for (to try failures and retries), or 401 when the signature is
// wrong, saying why.
type receiver struct {
	URL  string // the demo endpoint's URL, <base>/webhooks
	base string // http://host:port
	srv  *http.Server
}

func startReceiver(ctx context.Context, a *app.App, addr, accountID string) (*receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("demo receiver on %s: %w (set RECEIVER_ADDR)", addr, err)
	}
	r := &receiver{base: "http://" + ln.Addr().String()}
	r.URL = r.base + "/webhooks"
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		var mine []domain.Endpoint
		var secrets []string
		if eps, err := a.Store.ListEndpoints(req.Context(), accountID); err == nil {
			for _, ep := range eps {
				if onReceiver(ep.URL, r.base) {
					mine = append(mine, ep)
					secrets = append(secrets, ep.SigningSecrets(domain.Millis(time.Now()))...)
				}
			}
		}
		scheme, standardErr := verifyStandard(req, body, secrets, a, accountID)
		verr := errors.Join(signing.Verify(body, req.Header.Get(signing.Header), secrets, signing.Options{}), standardErr)
		status, verdict := statusFor(req.URL.Path), "signatures verified (X-Gifq-Signature, webhook-signature "+scheme+")"
		if verr != nil {
			status = http.StatusUnauthorized
			verdict = "SIGNATURE REJECTED: " + rejection(verr, r.owner(req.Context(), a, req.Header.Get(signing.HeaderWebhookID)), mine, r.base)
		}
		if status != http.StatusNoContent && verr == nil {
			verdict += fmt.Sprintf("; answering %d as %s asks", status, req.URL.Path)
		}
		fmt.Printf("\n<- webhook %s  event %s (%s)  attempt %s  %s\n   %s\n",
			req.Header.Get(webhook.HeaderDelivery), req.Header.Get(webhook.HeaderEventID), req.Header.Get(webhook.HeaderEvent),
			req.Header.Get(webhook.HeaderAttempt), verdict, body)
		w.WriteHeader(status)
	})}
	go r.srv.Serve(ln)
	go func() { <-ctx.Done(); r.Close() }()
	return r, nil
}

// owner is the endpoint a delivery (its webhook-id) was made for, or nil
// when it cannot be found (not one of this system's deliveries).
func (r *receiver) owner(ctx context.Context, a *app.App, deliveryID string) *domain.Endpoint {
	if deliveryID == "" {
		return nil
	}
	d, err := a.Store.GetDelivery(ctx, deliveryID)
	if err != nil {
		return nil
	}
	ep, err := a.Store.GetEndpoint(ctx, d.AccountID, d.EndpointID)
	if err != nil {
		return nil
	}
	return &ep
}

// onReceiver: whether an endpoint URL points at the receiver at base (any path).
func onReceiver(url, base string) bool {
	return url == base || strings.HasPrefix(url, base+"/") || strings.HasPrefix(url, base+"?")
}

// statusFor is the status the receiver answers a verified delivery at path
// with: /status/<code> (200-599) asks for that code, anything else gets 204.
func statusFor(path string) int {
	if rest, ok := strings.CutPrefix(path, "/status/"); ok {
		if code, err := strconv.Atoi(strings.TrimSuffix(rest, "/")); err == nil && code >= 200 && code <= 599 {
			return code
		}
	}
	return http.StatusNoContent
}

// rejection says why a signature was rejected: most often the delivery was
// made for an endpoint whose secret the receiver does not hold (another
// account's, or an endpoint elsewhere), which signing's own error ("no
// signature matches") does not tell.
func rejection(verr error, owner *domain.Endpoint, mine []domain.Endpoint, base string) string {
	held := func() string {
		if len(mine) == 0 {
			return "the receiver holds no secret: no endpoint of the dev account points at " + base
		}
		ids := make([]string, len(mine))
		for i, ep := range mine {
			ids[i] = ep.ID
		}
		return fmt.Sprintf("the receiver holds the secrets of the dev account's endpoints at %s (%s) only", base, strings.Join(ids, ", "))
	}
	switch {
	case errors.Is(verr, signing.ErrNoHeader) && owner == nil:
		return "no signature headers: not a delivery of this system"
	case owner != nil && !containsEndpoint(mine, owner.ID):
		return fmt.Sprintf("signed with the secret of endpoint %s (account %s, %s); %s", owner.ID, owner.AccountID, owner.URL, held())
	case len(mine) == 0:
		return held()
	case errors.Is(verr, signing.ErrTooOld):
		return fmt.Sprintf("the signature's timestamp is more than %v from the receiver's clock (%v)", signing.DefaultTolerance, verr)
	}
	return fmt.Sprintf("%v; %s (a secret rotated out of its grace period?)", verr, held())
}

func containsEndpoint(eps []domain.Endpoint, id string) bool {
	for _, ep := range eps {
		if ep.ID == id {
			return true
		}
	}
	return false
}

func (r *receiver) Close() { _ = r.srv.Close() }

// verifyStandard checks webhook-signature as a receiver would: its v1
// entries with the endpoint's secrets, its v1a entries with the account's
// published public keys (the JWKS), whichever the endpoint's scheme sent;
// scheme names the one that verified.
func verifyStandard(req *http.Request, body []byte, secrets []string, a *app.App, accountID string) (string, error) {
	id, ts, sig := req.Header.Get(signing.HeaderWebhookID), req.Header.Get(signing.HeaderWebhookTimestamp), req.Header.Get(signing.HeaderWebhookSignature)
	v1 := signing.VerifyStandard(body, id, ts, sig, secrets, signing.Options{})
	if v1 == nil {
		return "v1", nil
	}
	published, err := a.Store.PublishedSigningKeys(req.Context(), accountID)
	if err != nil {
		return "", err
	}
	var keys []ed25519.PublicKey
	for _, k := range published {
		keys = append(keys, k.Public)
	}
	v1a := signing.VerifyStandardV1a(body, id, ts, sig, keys, signing.Options{})
	if v1a == nil {
		return "v1a", nil
	}
	return "", fmt.Errorf("webhook-signature: v1: %w; v1a: %w", v1, v1a)
}
