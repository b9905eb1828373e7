package main

import (
	"context"
	"time"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/portal"
)

// devPortalLink opens a fresh 24-hour portal session for the dev account,
// minted with its API key as GIFQ's dashboard would with POST
// /v1/portal/sessions (a session lives only as long as its key).
func devPortalLink(ctx context.Context, a *app.App, apiKey string) (string, error) {
	k, err := a.Store.Authenticate(ctx, apiKey)
	if err != nil {
		return "", err
	}
	s, token := portal.NewSession(k.AccountID, k.ID, false, portal.MaxTTL, time.Now())
	if err := a.Store.CreatePortalSession(ctx, s); err != nil {
		return "", err
	}
	return a.Config.Portal.URL + "#token=" + token, nil
}
