package main

import (
	"context"
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
		verr := errors.Join(signing.Verify(body, req.Header.Get(signing.Header), secrets, signing.Options{}),
			signing.VerifyStandard(body, req.Header.Get(signing.HeaderWebhookID), req.Header.Get(signing.HeaderWebhookTimestamp),
				req.Header.Get(signing.HeaderWebhookSignature), secrets, signing.Options{}))
		verdict := "signatures verified (X-Gifq-Signature, webhook-signature)"
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
