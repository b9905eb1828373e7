package ingest

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gifq/webhooks/shared/domain"
	"github.com/gifq/webhooks/shared/lifecycle"
	"github.com/gifq/webhooks/shared/obs"
	"github.com/gifq/webhooks/shared/store"
)

// Replay's bounds per call: how many of the account's events it reads and
// how many deliveries it makes. The caller goes on from the cursor.
// An endpoint with a content filter reads the events' bodies, so fewer per
// call (at most MaxReplayScanFiltered x 256 KiB in memory).
const (
	MaxReplayScan         = 1000
	MaxReplayScanFiltered = 100
	MaxReplayCreated      = 100
)

// ReplayStore is what replay needs of the table besides Store.
type ReplayStore interface {
	AccountEvents(ctx context.Context, accountID, after string, since, until int64, limit int) ([]store.EventRef, bool, error)
	AccountEventsWithBodies(ctx context.Context, accountID, after string, since, until int64, limit int) ([]store.EventRef, bool, error)
	AddReplayDelivery(ctx context.Context, d domain.Delivery, dueAt int64) error
}

// ReplayWindow is the events replay looks at: received in [Since, Until]
// (unix ms) and, when After is set, after that event (a previous call's
// cursor).
type ReplayWindow struct {
	Since, Until int64
	After        string
}

// ReplayResult is what one call did.
type ReplayResult struct {
	Scanned  int    // events read from the index
	Replayed int    // new deliveries made and queued
	Skipped  int    // events that got a delivery to the endpoint meanwhile, expired, or expire within the hour
	More     bool   // the window holds more events: call again with Cursor
	Cursor   string // the last event this call looked at
}

// missing is the pure decision: of refs (oldest first), the events ep
// subscribes to, whose body its content filter takes (an event read without
// its body passes) and that have no delivery to it, at most max; how many refs that
// consumed (the cursor stops at the last one looked at); and how many it
// passed over because their retention ends within lifecycle.ExpiryMargin of
// now: a delivery made for one would be failed as event_expired and
// dead-lettered at once, so it is skipped (counted with the replay's
// skipped), not replayed.
func missing(ep domain.Endpoint, refs []store.EventRef, max int, now time.Time) (picked []store.EventRef, consumed, expiring int) {
	for _, r := range refs {
		if len(picked) == max {
			break
		}
		consumed++
		switch {
		case !ep.Subscribes(r.Type) || slices.Contains(r.EndpointIDs, ep.ID) || ep.DestinationOf() == domain.DestinationPolling:
		case len(r.Body) > 0 && !bodyOf(r.Body).passes(ep):
		case lifecycle.NearExpiry(r.ExpiresAt, now):
			expiring++
		default:
			picked = append(picked, r)
		}
	}
	return picked, consumed, expiring
}

// ErrReplayUnsupported: the service's store cannot list events by time.
var ErrReplayUnsupported = errors.New("the store cannot replay")

// ReplayMissing delivers to one endpoint of the account the events of the
// window that match its filter and never had a delivery to it, at most
// MaxReplayCreated of them after reading at most MaxReplayScan events. The
// deliveries are made as ingest makes them: rate slots booked on the
// account's limiter, written, then queued at their slots. Each is written
// only while its event has no delivery to the endpoint (AddReplayDelivery),
// so a repeated or concurrent call sends nothing twice.
func (s *Service) ReplayMissing(ctx context.Context, accountID, endpointID string, w ReplayWindow) (ReplayResult, error) {
	rs, ok := s.Store.(ReplayStore)
	if !ok {
		return ReplayResult{}, ErrReplayUnsupported
	}
	acct, ep, err := s.enabledEndpoint(ctx, accountID, endpointID)
	if err != nil {
		return ReplayResult{}, err
	}
	// Called, not taken as method values: the IAM test reads the store
	// calls each function makes from the call sites.
	var refs []store.EventRef
	var more bool
	if ep.Settings.Filter != "" {
		refs, more, err = rs.AccountEventsWithBodies(ctx, accountID, w.After, w.Since, w.Until, MaxReplayScanFiltered)
	} else {
		refs, more, err = rs.AccountEvents(ctx, accountID, w.After, w.Since, w.Until, MaxReplayScan)
	}
	if err != nil {
		return ReplayResult{}, err
	}
	now := s.Now()
	picked, consumed, expiring := missing(*ep, refs, MaxReplayCreated, now)
	res := ReplayResult{Scanned: consumed, Skipped: expiring, More: more || consumed < len(refs)}
	if consumed > 0 {
		res.Cursor = refs[consumed-1].ID
	}
	slots, ivl, err := s.reserve(ctx, acct, len(picked), now) // and the request's gate (gate.go)
	if err != nil || len(picked) == 0 {
		return res, err
	}
	due := dueAt(slots, now)
	var made []domain.Delivery
	var madeSlots []time.Time
	for i, r := range picked {
		d := newDelivery(accountID, ep.ID, r.ID, r.Type, r.ExpiresAt, now)
		switch err := rs.AddReplayDelivery(ctx, d, due[i]); {
		case err == nil:
			made, madeSlots = append(made, d), append(madeSlots, slots[i])
		case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrNotFound):
			res.Skipped++ // delivered meanwhile (another replay), or expired
		default:
			// What was written is queued; the caller retries the rest
			// from the same cursor (it sends nothing twice).
			s.enqueue(ctx, []domain.Endpoint{*ep}, made, madeSlots, ivl, now)
			return ReplayResult{}, err
		}
	}
	s.enqueue(ctx, []domain.Endpoint{*ep}, made, madeSlots, ivl, now)
	res.Replayed = len(made)
	m := s.Metrics.Batch()
	m.Count(obs.MetricDeliveriesCreated, float64(len(made)))
	m.Flush()
	s.Log.Info("missing events replayed", "account_id", accountID, "endpoint_id", ep.ID, "scanned", res.Scanned,
		"replayed", res.Replayed, "skipped", res.Skipped, "more", res.More)
	return res, nil
}
