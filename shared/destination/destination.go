// Package destination is the seam between the delivery worker and where an
// attempt goes. It owns its types: a neutral Request and a neutral Outcome
// (delivered, retry, rejected, throttled, gone). Each provider is one
// package (webhook: the signed HTTP POST; awsdest: a customer's SQS queue,
// SNS topic or EventBridge bus; awskinesis: a Kinesis stream) that declares
// its config's Schema, validates it, makes one attempt and maps its own
// answers onto an Outcome. The worker, the rule book (shared/lifecycle) and
// the attempt log do not change per type. See docs/destinations.md.
package destination

import (
	"context"
	"fmt"

	"slices"

	"github.com/gifq/webhooks/shared/domain"
)

// Provider reaches one or more types of destination.
type Provider interface {
	// Schemas declare the types this provider delivers to and their config.
	Schemas() []Schema
	// Validate checks a destination's configuration without any I/O.
	Validate(d domain.Destination) error
	// Check proves, once, that the destination can be used (the AWS
	// providers assume the customer's role); called when an endpoint is
	// created or changed, before anything is stored.
	Check(ctx context.Context, d domain.Destination) error
	// Send makes one attempt. It never returns an error: a failure is an
	// Outcome.
	Send(ctx context.Context, r Request) Outcome
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

// NewRouter routes to the providers given; requests without a
// Destination go to the one of type http.
func NewRouter(ps ...Provider) *Router {
	r := &Router{providers: map[domain.DestinationType]Provider{}}
	for _, p := range ps {
		r.Register(p)
	}
	return r
}

// Register makes the types p declares (Provider.Schemas) go to p.
func (r *Router) Register(p Provider) *Router {
	for _, s := range p.Schemas() {
		r.providers[s.Type] = p
	}
	return r
}

// Schemas are every type this deployment delivers to, by type name.
func (r *Router) Schemas() []Schema {
	var out []Schema
	for t, p := range r.providers {
		for _, s := range p.Schemas() {
			if s.Type == t {
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(a, b Schema) int { return cmpType(a.Type, b.Type) })
	return out
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

// ClassUnsupported is the class of an attempt to a type this deployment
// does not deliver to.
const ClassUnsupported = "unsupported_destination"

// Send makes one attempt through the request's provider.
func (r *Router) Send(ctx context.Context, req Request) Outcome {
	p, err := r.provider(typeOf(req.Destination))
	if err != nil {
		// Only an endpoint stored by a deployment configured otherwise gets
		// here; retried, so a deployment that fixes its configuration within
		// the schedule still delivers.
		return Outcome{Verdict: Retry, Class: ClassUnsupported, Error: err.Error()}
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
