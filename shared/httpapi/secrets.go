package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/opevents"
	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

// rotateSecret: at most two secrets sign at once (domain.MaxLiveSecrets),
// so a rotation while the previous secret still signs is a 409, unless the
// body says {"expire_previous_now":true}: that previous secret stops now,
// the current one becomes the previous one.
func (a *API) rotateSecret(ctx context.Context, req *request) response {
	if _, r, failed := a.loadEndpoint(ctx, req); failed {
		return r
	}
	var in struct {
		// How long the current secret keeps signing (default 24 h, at most
		// 24 h). A float: JSON Schema's integer includes 100.0.
		ExpireAfterSeconds *float64 `json:"expire_previous_after_seconds"`
		ExpirePreviousNow  bool     `json:"expire_previous_now"`
	}
	if len(req.body) > 0 {
		if r, failed := decodeJSON(req.body, &in); failed {
			return r
		}
	}
	grace := min(a.RotationGrace, domain.MaxRotationGrace)
	if n := in.ExpireAfterSeconds; n != nil {
		if !wholeNumber(*n) || *n < 0 || *n > domain.MaxRotationGrace.Seconds() {
			return fail(http.StatusUnprocessableEntity, "invalid_grace", "expire_previous_after_seconds must be a whole number from 0 to 86400")
		}
		grace = time.Duration(*n) * time.Second
	}
	secret := signing.NewSecret()
	ep, err := a.Store.RotateSecret(ctx, req.account, req.params[0],
		domain.Rotation{NewSecret: secret, Grace: grace, ExpirePreviousNow: in.ExpirePreviousNow})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return notFound("endpoint")
	case errors.Is(err, domain.ErrPreviousSecretLive):
		until := rfc3339(domain.PreviousSecretExpiresAt(ep.Secrets, domain.Millis(a.Now())))
		return fail(http.StatusConflict, "previous_secret_live", "the previous secret still signs until "+until+
			"; an endpoint has at most 2 live secrets: rotate after then, or send {\"expire_previous_now\":true} to stop the previous secret now")
	case err != nil:
		return a.internal(ctx, err)
	}
	a.publish(ctx, opevents.Rotated(ep, a.Now()))
	v := struct {
		endpointView
		PreviousSecretExpiresAt string `json:"previous_secret_expires_at,omitempty"`
	}{endpointView: viewEndpoint(ep, a.Now())}
	v.Secret = secret
	v.PreviousSecretExpiresAt = rfc3339(domain.PreviousSecretExpiresAt(ep.Secrets, domain.Millis(a.Now())))
	return ok(http.StatusOK, v)
}
