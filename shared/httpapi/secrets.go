package httpapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gifq/webhooks/shared/signing"
	"github.com/gifq/webhooks/shared/store"
)

const maxRotationGrace = 7 * 24 * time.Hour

func (a *API) rotateSecret(ctx context.Context, req *request) response {
	if _, r, failed := a.loadEndpoint(ctx, req); failed {
		return r
	}
	var in struct {
		// How long the previous secret keeps signing (default 24 h, at most
		// 7 days). A float: JSON Schema's integer includes 100.0.
		ExpireAfterSeconds *float64 `json:"expire_previous_after_seconds"`
	}
	if len(req.body) > 0 {
		if r, failed := decodeJSON(req.body, &in); failed {
			return r
		}
	}
	grace := a.RotationGrace
	if n := in.ExpireAfterSeconds; n != nil {
		if !wholeNumber(*n) || *n < 0 || *n > maxRotationGrace.Seconds() {
			return fail(http.StatusUnprocessableEntity, "invalid_grace", "expire_previous_after_seconds must be a whole number from 0 to 604800")
		}
		grace = time.Duration(*n) * time.Second
	}
	secret := signing.NewSecret()
	ep, err := a.Store.RotateSecret(ctx, req.account, req.params[0], secret, grace.Milliseconds())
	if errors.Is(err, store.ErrNotFound) {
		return notFound("endpoint")
	}
	if err != nil {
		return a.internal(ctx, err)
	}
	v := struct {
		endpointView
		PreviousSecretExpiresAt string `json:"previous_secret_expires_at,omitempty"`
	}{endpointView: viewEndpoint(ep, a.Now())}
	v.Secret = secret
	if len(ep.Secrets) > 1 {
		v.PreviousSecretExpiresAt = rfc3339(ep.Secrets[1].ExpiresAt)
	}
	return ok(http.StatusOK, v)
}
