package main

import (
	"context"
	"time"

	"github.com/gifq/webhooks/shared/app"
	"github.com/gifq/webhooks/shared/portal"
)

// devPortalLink opens a fresh 24-hour portal session for the dev account,
// as GIFQ's dashboard would with POST /v1/portal/sessions.
func devPortalLink(ctx context.Context, a *app.App, accountID string) (string, error) {
	s, token := portal.NewSession(accountID, false, portal.MaxTTL, time.Now())
	if err := a.Store.CreatePortalSession(ctx, s); err != nil {
		return "", err
	}
	return a.Config.Portal.URL + "#token=" + token, nil
}
