package ingest

import (
	"context"

	"github.com/gifq/webhooks/shared/domain"
)

type gateKey struct{}

// Gate is a check an ingest request must pass before anything is written:
// the API's per-key limit. Its error is returned as it is.
type Gate func(context.Context) error

// WithGate returns ctx carrying gate. Ingest runs it at the same time as its
// read of the account and waits for both, so the check costs no round trip
// of its own; a refused gate writes nothing. It rides on ctx because it
// belongs to the request (its API key), not to the Service.
func WithGate(ctx context.Context, gate Gate) context.Context {
	if gate == nil {
		return ctx
	}
	return context.WithValue(ctx, gateKey{}, gate)
}

// accountWithEndpoints is the store's read, with ctx's gate alongside. The
// gate's refusal wins over a read error: the producer learns to slow down.
func (s *Service) accountWithEndpoints(ctx context.Context, accountID string) (domain.Account, []domain.Endpoint, error) {
	gate, _ := ctx.Value(gateKey{}).(Gate)
	if gate == nil {
		return s.Store.AccountWithEndpoints(ctx, accountID)
	}
	passed := make(chan error, 1)
	go func() { passed <- gate(ctx) }()
	acct, endpoints, err := s.Store.AccountWithEndpoints(ctx, accountID)
	if gerr := <-passed; gerr != nil {
		return domain.Account{}, nil, gerr
	}
	return acct, endpoints, err
}
