package destination

import (
	"context"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/sender"
)

// HTTPSender is shared/sender's Sender: a signed POST, its result already
// in the contract's terms.
type HTTPSender interface {
	Send(context.Context, sender.Request) sender.Result
}

// HTTP is the first provider: the endpoint's URL, through shared/sender as
// it is. Its URL is checked by the API's netguard rules, not here.
type HTTP struct{ Sender HTTPSender }

// Validate has nothing to check: an HTTP endpoint has no destination config.
func (HTTP) Validate(domain.Destination) error { return nil }

// Check has nothing to prove before the first attempt.
func (HTTP) Check(context.Context, domain.Destination) error { return nil }

// Send posts the attempt.
func (h HTTP) Send(ctx context.Context, r sender.Request) sender.Result { return h.Sender.Send(ctx, r) }
