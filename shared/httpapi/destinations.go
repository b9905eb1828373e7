package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/domain"
)

// Destinations checks an endpoint's destination before it is stored
// (destination.Router).
type Destinations interface {
	Schemas() []destination.Schema
	Supports(domain.DestinationType) bool
	Validate(*domain.Destination) error
	Check(context.Context, *domain.Destination) error
}

// awsView is an AWS endpoint's target and role as the API takes and shows
// them; the external id is the account's (GET /v1/account).
type awsView struct {
	TargetARN string `json:"target_arn"`
	RoleARN   string `json:"role_arn"`
}

func viewAWS(d *domain.Destination) *awsView {
	if d == nil || d.Type == domain.DestinationHTTP {
		return nil
	}
	return &awsView{TargetARN: d.TargetARN, RoleARN: d.RoleARN}
}

func destinationFail(msg string) response {
	return fail(http.StatusUnprocessableEntity, "invalid_destination", msg)
}

// types are the destination types this deployment delivers to.
func (a *API) types() []string {
	if a.Destinations == nil {
		return []string{string(domain.DestinationHTTP), string(domain.DestinationPolling)}
	}
	return append(destination.Types(a.Destinations.Schemas()), string(domain.DestinationPolling))
}

// destinationType reads a registration's type ("" is http): one a provider
// registered (shared/destination/providers).
func (a *API) destinationType(s string) (domain.DestinationType, response, bool) {
	t := domain.DestinationType(s)
	if s == "" || t == domain.DestinationHTTP {
		return domain.DestinationHTTP, response{}, false
	}
	if t == domain.DestinationPolling { // read, never delivered to: no provider
		return t, response{}, false
	}
	if a.Destinations == nil || !a.Destinations.Supports(t) || len(s) > 64 {
		return "", destinationFail(fmt.Sprintf("type %q is not one this deployment delivers to: %s", clipped(s, 64), strings.Join(a.types(), ", "))), true
	}
	return t, response{}, false
}

func clipped(s string, n int) string {
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// checkDestinationShape refuses what does not go with the type, before
// anything is read: a URL on an AWS endpoint, an aws block on an HTTP one,
// headers that an AWS destination would not send.
func checkDestinationShape(t domain.DestinationType, hasURL bool, cfg *awsView, headers bool) (response, bool) {
	switch {
	case t == domain.DestinationHTTP && cfg != nil:
		return destinationFail("aws is only for the AWS types (aws_...)"), true
	case t != domain.DestinationHTTP && hasURL:
		return destinationFail(fmt.Sprintf("an %s endpoint has no url: its target is aws.target_arn", t)), true
	case t != domain.DestinationHTTP && cfg == nil:
		return destinationFail(fmt.Sprintf("an %s endpoint needs aws.target_arn and aws.role_arn", t)), true
	case t != domain.DestinationHTTP && headers:
		return fail(http.StatusUnprocessableEntity, "invalid_settings", "settings.headers: only http endpoints send headers"), true
	}
	return response{}, false
}

// destinationFrom makes and checks an AWS destination of type t: its ARNs
// (no I/O), then the account's external id, then one AssumeRole into the
// role. Nothing is stored when it fails: 422 with the field, or with the
// AWS error that came back from STS.
func (a *API) destinationFrom(ctx context.Context, account string, t domain.DestinationType, cfg awsView) (*domain.Destination, response, bool) {
	if a.Destinations == nil || !a.Destinations.Supports(t) {
		return nil, destinationFail(fmt.Sprintf("this deployment does not deliver to %s destinations", t)), true
	}
	d := &domain.Destination{Type: t, TargetARN: cfg.TargetARN, RoleARN: cfg.RoleARN}
	var ce *destination.ConfigError
	if err := a.Destinations.Validate(d); errors.As(err, &ce) {
		return nil, destinationFail("aws." + ce.Field + ": " + ce.Message), true
	} else if err != nil {
		return nil, a.internal(ctx, err), true
	}
	ext, err := a.Store.EnsureExternalID(ctx, account)
	if err != nil {
		return nil, a.internal(ctx, err), true
	}
	d.ExternalID = ext
	var che *destination.CheckError
	switch err := a.Destinations.Check(ctx, d); {
	case errors.As(err, &che):
		return nil, fail(http.StatusUnprocessableEntity, "role_not_assumable", fmt.Sprintf(
			"assuming %s with your account's external id failed: %s: %s (docs/destinations.md has the trust policy)", d.RoleARN, che.Code, che.Message)), true
	case errors.As(err, &ce):
		return nil, destinationFail("aws." + ce.Field + ": " + ce.Message), true
	case err != nil:
		return nil, a.internal(ctx, err), true
	}
	return d, response{}, false
}

// accountView is what an account may read of itself.
type accountView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// AWSExternalID is the sts:ExternalId its roles' trust policies require
	// of us (docs/destinations.md); shown to this account only.
	AWSExternalID string `json:"aws_external_id"`
	// NotificationEmails are told of its endpoints failing, disabled or
	// recovered (PUT /v1/account/notifications).
	NotificationEmails []string `json:"notification_emails"`
}

func (a *API) getAccount(ctx context.Context, req *request) response {
	acct, err := a.Store.GetAccount(ctx, req.account)
	if err != nil {
		return a.internal(ctx, err)
	}
	if acct.AWSExternalID == "" {
		if acct.AWSExternalID, err = a.Store.EnsureExternalID(ctx, req.account); err != nil {
			return a.internal(ctx, err)
		}
	}
	return ok(http.StatusOK, accountView{ID: acct.ID, Name: acct.Name, AWSExternalID: acct.AWSExternalID,
		NotificationEmails: append([]string{}, acct.NotificationEmails...)})
}
