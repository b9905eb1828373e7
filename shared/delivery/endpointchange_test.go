package delivery

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/queue"
	"github.com/gifq/webhooks/shared/store"
)

// patchAfterLoad is memStore with a PATCH of the endpoint answered right
// after the worker's first read, before its claim (the patch functions
// disable or re-point it, so it gets a new route).
type patchAfterLoad struct {
	*memStore
	once  sync.Once
	patch func(*domain.Endpoint)
}

func (p *patchAfterLoad) LoadForAttempt(ctx context.Context, r store.Ref) (store.Snapshot, error) {
	snap, err := p.memStore.LoadForAttempt(ctx, r)
	p.once.Do(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		k := r.AccountID + "/" + r.EndpointID
		ep := p.endpoints[k]
		p.patch(&ep)
		ep.Route = domain.NewID("rte") // as store.UpdateEndpoint gives one that disables or re-points
		p.endpoints[k] = ep
	})
	return snap, err
}

// A claim must not POST after a PATCH that disabled the endpoint
// or changed its URL has answered, with the per-endpoint cap on (the slot
// no longer lives on the endpoint item, so no claim condition sees the
// endpoint) and off.
func TestNoPostToTheOldEndpointAfterAPatchAnswered(t *testing.T) {
	const moved = "https://b.example.com/hook"
	for _, maxInFlight := range []int{5, 0} {
		for name, patch := range map[string]func(*domain.Endpoint){
			"disabled": func(ep *domain.Endpoint) { ep.Disabled = true },
			"moved":    func(ep *domain.Endpoint) { ep.URL = moved },
		} {
			t.Run(fmt.Sprintf("%s/cap=%d", name, maxInFlight), func(t *testing.T) {
				r := newRig(t, 200)
				r.w.MaxInFlight = maxInFlight
				r.w.Store = &patchAfterLoad{memStore: r.st, patch: patch}
				old := r.st.endpoints[r.d.AccountID+"/"+r.d.EndpointID].URL
				r.deliver(t, queue.For(r.d))
				for _, req := range r.recv.got {
					if req.URL == old {
						t.Fatalf("POSTed to %s after the PATCH answered", old)
					}
				}
				got, _ := r.st.GetDelivery(context.Background(), r.d.ID)
				switch name {
				case "disabled":
					if got.Status != domain.StatusFailed || got.FailReason != domain.ReasonEndpointDisabled || len(r.recv.got) != 0 {
						t.Fatalf("delivery %s (%s) after %d POSTs, want failed as endpoint_disabled", got.Status, got.FailReason, len(r.recv.got))
					}
				case "moved":
					if got.Status != domain.StatusDelivered || len(r.recv.got) != 1 || r.recv.got[0].URL != moved {
						t.Fatalf("delivery %s after POSTs %+v, want delivered to the new URL", got.Status, r.recv.got)
					}
				}
			})
		}
	}
}

// The same for a manual resend, whose claim no longer sees the endpoint either.
func TestNoResendToTheOldEndpointAfterAPatchAnswered(t *testing.T) {
	for _, maxInFlight := range []int{5, 0} {
		t.Run(fmt.Sprintf("cap=%d", maxInFlight), func(t *testing.T) {
			r := newRig(t, 200)
			r.w.MaxInFlight = maxInFlight
			r.w.Store = &patchAfterLoad{memStore: r.st, patch: func(ep *domain.Endpoint) { ep.Disabled = true }}
			m := queue.For(r.d)
			m.Kind, m.AttemptID = queue.KindResend, domain.NewID("att")
			r.deliver(t, m)
			if len(r.recv.got) != 0 {
				t.Fatalf("resent %d times to an endpoint disabled before the claim", len(r.recv.got))
			}
		})
	}
}
