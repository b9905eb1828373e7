package ingest

import (
	"context"

	"github.com/gifq/webhooks/shared/ratelimit"
)

type gateKey struct{}

// Gate is a request's API key limit, which ingest takes in the account's
// booking write (ratelimit.ReserveTaking): one conditional write books the
// deliveries' slots and takes the key's tokens, and a key over its limit
// books nothing and writes nothing else. Answer turns the limiter's error
// into what ingest returns: the refusal as the API answers it, or nil to
// go on (the limiter unreachable: the key's limit fails open).
type Gate struct {
	Take   ratelimit.KeyTake
	Answer func(context.Context, error) error
}

// WithGate returns ctx carrying gate. It rides on ctx because it belongs
// to the request (its API key), not to the Service.
func WithGate(ctx context.Context, gate *Gate) context.Context {
	if gate == nil {
		return ctx
	}
	return context.WithValue(ctx, gateKey{}, gate)
}

func gateOf(ctx context.Context) *Gate {
	g, _ := ctx.Value(gateKey{}).(*Gate)
	return g
}
