package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/sender"
	"github.com/gifq/webhooks/shared/signing"
)

// receiver is the demo customer endpoint: it verifies each delivery's
// signature with the secrets of the dev account's endpoints that point at
// it, prints it, and answers 204 (or 401 when the signature is wrong).
type receiver struct {
	URL string
	srv *http.Server
}

func startReceiver(ctx context.Context, a *app.App, addr, accountID string) (*receiver, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("demo receiver on %s: %w (set RECEIVER_ADDR)", addr, err)
	}
	r := &receiver{URL: "http://" + ln.Addr().String() + "/webhooks"}
	r.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		var secrets []string
		if eps, err := a.Store.ListEndpoints(req.Context(), accountID); err == nil {
			for _, ep := range eps {
				if ep.URL == r.URL {
					secrets = append(secrets, ep.SigningSecrets(domain.Millis(time.Now()))...)
				}
			}
		}
		scheme, standardErr := verifyStandard(req, body, secrets, a, accountID)
		verr := errors.Join(signing.Verify(body, req.Header.Get(signing.Header), secrets, signing.Options{}), standardErr)
		verdict := "signatures verified (X-Gifq-Signature, webhook-signature " + scheme + ")"
		if verr != nil {
			verdict = "SIGNATURE REJECTED: " + verr.Error()
		}
		fmt.Printf("\n<- webhook %s  event %s (%s)  attempt %s  %s\n   %s\n",
			req.Header.Get(sender.HeaderDelivery), req.Header.Get(sender.HeaderEventID), req.Header.Get(sender.HeaderEvent),
			req.Header.Get(sender.HeaderAttempt), verdict, body)
		if verr != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go r.srv.Serve(ln)
	go func() { <-ctx.Done(); r.Close() }()
	return r, nil
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
