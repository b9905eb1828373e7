// Package destination is the seam between the delivery worker and where an
// attempt goes: one Provider per destination type (an HTTP POST, a
// customer's SQS queue, SNS topic or EventBridge bus), each validating its
// configuration, making one attempt and mapping what came back onto the
// contract (a sender.Result that retry.Classify reads as delivered, retry
// or failed for good). The worker and the attempt log do not change per
// type. See docs/destinations.md.
package destination

import (
	"context"
	"fmt"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/retry"
	"github.com/gifq/webhooks/shared/sender"
)

// Provider reaches one type of destination.
type Provider interface {
	// Validate checks a destination's configuration without any I/O.
	Validate(d domain.Destination) error
	// Check proves, once, that the destination can be used (the AWS
	// providers assume the customer's role); called when an endpoint is
	// created or changed, before anything is stored.
	Check(ctx context.Context, d domain.Destination) error
	// Send makes one attempt. It never returns an error: a failure is a
	// Result whose retry.Result classifies it (retry.Classify).
	Send(ctx context.Context, r sender.Request) sender.Result
}

// ConfigError is a destination configuration refused: Field says which
// part (target_arn, role_arn, type), Message why, in the customer's terms.
type ConfigError struct {
	Field   string
	Message string
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Message }

// CheckError is a destination that is well formed but cannot be used: the
// AWS error that came back when we tried (Code, e.g. AccessDenied).
type CheckError struct {
	Code    string
	Message string
}

func (e *CheckError) Error() string { return e.Code + ": " + e.Message }

// Router picks the provider by a request's destination type. It is the
// worker's Sender (delivery.Sender) and the API's destination checker.
type Router struct {
	providers map[domain.DestinationType]Provider
}

// NewRouter routes HTTP requests (a nil Destination) to httpProvider.
func NewRouter(httpProvider Provider) *Router {
	return &Router{providers: map[domain.DestinationType]Provider{domain.DestinationHTTP: httpProvider}}
}

// Register makes t's destinations go to p.
func (r *Router) Register(p Provider, types ...domain.DestinationType) *Router {
	for _, t := range types {
		r.providers[t] = p
	}
	return r
}

// Supports reports whether this deployment delivers to t.
func (r *Router) Supports(t domain.DestinationType) bool {
	_, ok := r.providers[t]
	return ok
}

func typeOf(d *domain.Destination) domain.DestinationType {
	if d == nil || d.Type == "" {
		return domain.DestinationHTTP
	}
	return d.Type
}

func (r *Router) provider(t domain.DestinationType) (Provider, error) {
	p, ok := r.providers[t]
	if !ok {
		return nil, &ConfigError{Field: "type", Message: fmt.Sprintf("this deployment does not deliver to %s destinations", t)}
	}
	return p, nil
}

// Send makes one attempt through the request's provider.
func (r *Router) Send(ctx context.Context, req sender.Request) sender.Result {
	p, err := r.provider(typeOf(req.Destination))
	if err != nil {
		// Only an endpoint stored by a deployment configured otherwise gets
		// here; retried, so a deployment that fixes its configuration within
		// the schedule still delivers.
		return sender.Result{Result: retry.Result{ErrorClass: retry.ErrAWSError}, Error: err.Error()}
	}
	return p.Send(ctx, req)
}

// Validate checks d's configuration (nil: HTTP, checked by the URL rules).
func (r *Router) Validate(d *domain.Destination) error {
	p, err := r.provider(typeOf(d))
	if err != nil || d == nil {
		return err
	}
	return p.Validate(*d)
}

// Check proves d usable (see Provider.Check); nil d: nothing to check.
func (r *Router) Check(ctx context.Context, d *domain.Destination) error {
	p, err := r.provider(typeOf(d))
	if err != nil || d == nil {
		return err
	}
	return p.Check(ctx, *d)
}
